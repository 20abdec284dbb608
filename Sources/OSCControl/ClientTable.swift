// OSC thread only. The clients the service has heard from: reply addresses and error rate limits.
import Synchronization

/// A counter other threads may read (relaxed: statistics only).
final class AtomicCounter: Sendable {
    private let storage = Atomic<Int>(0)
    func add(_ n: Int) { storage.add(n, ordering: .relaxed) }
    var value: Int { storage.load(ordering: .relaxed) }
}

/// A token bucket: `burst` tokens, refilled at `rate` per second.
struct TokenBucket {
    var tokens: Double
    var updated: Double
    let burst: Double
    let rate: Double

    init(burst: Int, rate: Double, now: Double) {
        tokens = Double(burst)
        updated = now
        self.burst = Double(burst)
        self.rate = rate
    }

    /// Takes a token if one is left.
    mutating func take(now: Double) -> Bool {
        tokens = min(burst, tokens + (now - updated) * rate)
        updated = now
        guard tokens >= 1 else { return false }
        tokens -= 1
        return true
    }
}

/// Where a reply goes.
enum ReplyTarget {
    /// An address the service owns (a UDP sender, or a URL registered with /notify).
    case owned(LoAddress)
    /// A TCP connection's address inside liblo: valid only until the next `lo_servers_wait`.
    case borrowedTCP(lo_address: UnsafeMutableRawPointer)
    /// A TCP sender after its dispatch ended: only a reply URL registered with /notify reaches it.
    case unreachable
    /// A WebSocket of the web server: replies go back over it as binary OSC packets.
    case web(WebClient)
}

/// The sender of a request. `@unchecked Sendable`: it only travels to the worker and back, and its
/// target is used on the OSC thread only.
struct ClientRef: @unchecked Sendable {
    // @unchecked: travels to the OSC worker and back; its target is used on the OSC thread only.
    /// "udp:host:port", "tcp:host:port" or "ws:id".
    let key: String
    let target: ReplyTarget

    /// The same client with a target that stays valid after the current dispatch (TCP senders become
    /// unreachable except through a registered reply URL).
    var detached: ClientRef {
        if case .borrowedTCP = target { return ClientRef(key: key, target: .unreachable) }
        return self
    }
}

/// Clients by key, bounded (least recently seen evicted), each with its error bucket.
struct ClientTable {
    struct Entry {
        var address: LoAddress?
        var bucket: TokenBucket
        var lastSeen: Double
    }

    private(set) var entries: [String: Entry] = [:]
    let capacity: Int
    let burst: Int
    let rate: Double

    init(capacity: Int = 1024, burst: Int, rate: Double) {
        self.capacity = capacity
        self.burst = burst
        self.rate = rate
    }

    /// The owned address of a UDP sender (created on first contact).
    mutating func udpClient(host: String, port: Int, now: Double) -> ClientRef? {
        let key = "udp:\(host):\(port)"
        if var entry = entries[key], let address = entry.address {
            entry.lastSeen = now
            entries[key] = entry
            return ClientRef(key: key, target: .owned(address))
        }
        guard let address = LoAddress.udp(host: host, port: port) else { return nil }
        insert(key, Entry(address: address, bucket: TokenBucket(burst: burst, rate: rate, now: now), lastSeen: now))
        return ClientRef(key: key, target: .owned(address))
    }

    /// Notes a TCP sender (its address stays inside liblo).
    mutating func touchTCP(key: String, now: Double) {
        if var entry = entries[key] {
            entry.lastSeen = now
            entries[key] = entry
        } else {
            insert(key, Entry(address: nil, bucket: TokenBucket(burst: burst, rate: rate, now: now), lastSeen: now))
        }
    }

    /// Takes an error token for `key` (unknown keys get a fresh bucket).
    mutating func mayReportError(_ key: String, now: Double) -> Bool {
        if entries[key] == nil {
            insert(key, Entry(address: nil, bucket: TokenBucket(burst: burst, rate: rate, now: now), lastSeen: now))
        }
        return entries[key]!.bucket.take(now: now)
    }

    private mutating func insert(_ key: String, _ entry: Entry) {
        if entries.count >= capacity, let oldest = entries.min(by: { $0.value.lastSeen < $1.value.lastSeen })?.key {
            entries[oldest] = nil
        }
        entries[key] = entry
    }
}

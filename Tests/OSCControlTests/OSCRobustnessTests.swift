// Hostile input: random and mutated packets over UDP and TCP while audio renders; the service keeps
// answering and the engine keeps rendering. (The 100k-packet fuzz with allocation checks lives with the
// integration tests.)
import AudioGraph
import Foundation
import Glibc
@testable import OSCControl
import Testing

/// xorshift64*, seeded: the same packets on every run.
struct FuzzRandom {
    var state: UInt64
    mutating func next() -> UInt64 {
        state ^= state >> 12
        state ^= state << 25
        state ^= state >> 27
        return state &* 2_685_821_657_736_338_717
    }
    mutating func below(_ n: Int) -> Int { Int(next() % UInt64(max(1, n))) }
}

@Suite struct OSCRobustnessTests {
    /// A burst the service cannot read in time overflows the socket's receive queue; the kernel drops
    /// datagrams, and the service says so (/error 50 to the sender, the count in /status) instead of
    /// losing them in silence. A later /sync is answered.
    @Test func aBurstThatOverflowsTheReceiveQueueIsReported() throws {
        let f = try OSCFixture()
        _ = f.client.command("/node/new", [.string("player"), .string("p")])
        // Another thread holds the engine (as a patch swap does) while the burst arrives.
        let engine = f.engine
        let released = DispatchSemaphore(value: 0)
        let holder = Thread {
            try? engine.batch { () throws(EngineError) in Thread.sleep(forTimeInterval: 1.5) }
            released.signal()
        }
        holder.start()
        Thread.sleep(forTimeInterval: 0.05)
        for i in 0..<60_000 { f.client.send("/node/p/volume", [.float(Float(i % 100) / 100)]) }
        // The kernel tells the count with the next datagram it queues after the loss: here the /sync,
        // sent once the engine is free again and the service has read what was queued (sent into a full
        // queue, it would be lost too). A sanitizer build reads the queue several times slower.
        released.wait()
        var last = -1
        let drainDeadline = Date().addingTimeInterval(120)
        while Date() < drainDeadline {
            Thread.sleep(forTimeInterval: 0.5)
            let now = f.service.statistics.packetsReceived
            if now == last { break }
            last = now
        }
        let synced = f.client.request("/sync", [.int32(9)], reply: "/synced", timeout: 30)
        #expect(synced?.arguments == [.int32(9)], "/sync after the burst was not answered")
        let busy = f.client.takeErrors().filter { $0.errorCode == 50 }
        #expect(busy.count == 1, "\(busy.count) /error 50 after a burst that overflowed the receive queue")
        let dropped = f.service.statistics.droppedDatagrams
        #expect(dropped > 0)
        let status = f.client.request("/status", reply: "/status.reply")
        #expect(status?.arguments.dropLast().last == .int32(Int32(dropped)), "/status does not count the drops")
    }

    /// Valid packets to mutate: every address group, bundles, patterns.
    static let seeds: [OSCPacket] = [
        .message(OSCMessage("/node/new", [.string("player"), .string("fz"), .string("volume"), .float(0.5)])),
        .message(OSCMessage("/node/fz/volume", [.float(0.25)])),
        .message(OSCMessage("/node/*/pan", [.float(0.1)])),
        .message(OSCMessage("/graph/connect", [.string("fz"), .string("main")])),
        .message(OSCMessage("/buffer/load", [.string("b"), .string("x.wav")])),
        .message(OSCMessage("/notify", [.int32(1)])),
        .message(OSCMessage("/meters", [.int32(50)])),
        .message(OSCMessage("/node/fz/play", [.timetag(OSCTimetag.now().adding(seconds: 0.2))])),
        .bundle(.immediate, [.message(OSCMessage("/node/fz/stop")), .message(OSCMessage("/ping", [.blob([1, 2, 3])]))]),
        .bundle(
            OSCTimetag.now().adding(seconds: 0.3),
            [
                .bundle(
                    OSCTimetag.now().adding(seconds: 0.4),
                    [.message(OSCMessage("/node/fz/loop", [.bool(true)]))])
            ])
    ]

    static func mutate(_ bytes: [UInt8], _ random: inout FuzzRandom) -> [UInt8] {
        var out = bytes
        switch random.below(6) {
        case 0:  // flip bytes
            for _ in 0..<(1 + random.below(4)) where !out.isEmpty {
                out[random.below(out.count)] ^= UInt8(random.below(256))
            }
        case 1:  // truncate
            out = Array(out.prefix(random.below(out.count + 1)))
        case 2:  // random bytes
            out = (0..<random.below(200)).map { _ in UInt8(random.below(256)) }
        case 3:  // insert bytes
            let at = random.below(out.count + 1)
            out.insert(contentsOf: (0..<(1 + random.below(8))).map { _ in UInt8(random.below(256)) }, at: at)
        case 4:  // corrupt a 4-byte length or tag area with extreme values
            if out.count >= 4 {
                let at = random.below(out.count / 4) * 4
                out.replaceSubrange(
                    at..<(at + 4),
                    with: [[0x7f, 0xff, 0xff, 0xff], [0xff, 0xff, 0xff, 0xff], [0, 0, 0, 0]][random.below(3)])
            }
        default:  // keep valid
            break
        }
        return out
    }

    @Test func randomAndMutatedPacketsNeverStopTheService() throws {
        let f = try OSCFixture {
            $0.errorBurst = 50; $0.errorsPerSecond = 1000
        }
        var random = FuzzRandom(state: 0x5EED_0123_4567_89AB)
        let encoded = Self.seeds.map { $0.encoded() }
        let tcp = try TCPConnection(port: f.port)
        for i in 0..<10_000 {
            let packet = Self.mutate(encoded[random.below(encoded.count)], &random)
            if i % 50 == 0 {
                // Length-prefixed garbage on TCP too.
                let n = UInt32(packet.count)
                var frame = [UInt8(n >> 24), UInt8(n >> 16 & 0xff), UInt8(n >> 8 & 0xff), UInt8(n & 0xff)] + packet
                if random.below(4) == 0 { frame = Array(frame.prefix(random.below(frame.count + 1))) }
                _ = frame.withUnsafeBytes { Glibc.send(tcp.fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            } else {
                f.client.sendRaw(packet)
            }
            if i % 500 == 0 { f.client.receive(timeout: 0.001) }
        }
        f.client.receive(timeout: 0.5)
        _ = f.client.takeAll()
        // UDP: a ping sent into a full socket buffer is lost like any datagram, so ask a few times.
        let pong = OSCMessage("/pong", [.int32(99)])
        var answered = false
        for _ in 0..<20 where !answered {
            f.client.send("/ping", [.int32(99)])
            answered = f.client.receive(timeout: 0.5) { $0 == pong }.contains(pong)
        }
        #expect(answered)
        let before = f.renderer.frameCount
        Thread.sleep(forTimeInterval: 0.2)
        #expect(f.renderer.frameCount > before)
        #expect(f.service.statistics.malformedPackets > 1000)
        // A fresh TCP connection still works after the garbage.
        let fresh = try TCPConnection(port: f.port)
        try fresh.send(.message(OSCMessage("/ping")))
        #expect(try fresh.receive(timeout: 3) == .message(OSCMessage("/pong")))
    }
}

// Fuzz support: a seeded packet generator (random well-formed messages over the whole address space,
// mutations of them, bundles, oversized and random datagrams) and a render thread that counts what it
// allocates. Used by FuzzPacketTests.
import AudioGraph
import DSPTestSupport
import Foundation
import Glibc
@testable import OSCControl
import Synchronization

/// xorshift64*, seeded, so every run sends the same packets.
struct PacketFuzzRandom {
    var state: UInt64

    mutating func next() -> UInt64 {
        state ^= state >> 12
        state ^= state << 25
        state ^= state >> 27
        return state &* 2_685_821_657_736_338_717
    }

    mutating func below(_ n: Int) -> Int { Int(next() % UInt64(max(1, n))) }
    mutating func chance(_ percent: Int) -> Bool { below(100) < percent }
    mutating func pick<T>(_ items: [T]) -> T { items[below(items.count)] }
    mutating func bytes(_ count: Int) -> [UInt8] { (0..<count).map { _ in UInt8(truncatingIfNeeded: next()) } }
}

/// Builds hostile packets. Kinds, by share of packets:
/// - 35 % well-formed messages: an address from the whole address space (real nodes, unknown nodes,
///   patterns, odd addresses) with 0–6 random arguments of any OSC type, edge values included;
/// - 45 % mutations of such a message or bundle: flipped bytes, truncation, extension, inserted bytes,
///   random type tag strings, huge sizes in length and blob fields, odd bytes in strings, splices;
/// - 12 % bundles: immediate, past, near-future and far-future time tags, nesting up to 10 deep;
/// - 6 % random bytes; 2 % oversized datagrams (16 KB … 60 KB).
struct PacketFuzzer {
    var random: PacketFuzzRandom
    let fileNames: [String]

    init(seed: UInt64, fileNames: [String]) {
        random = PacketFuzzRandom(state: seed)
        self.fileNames = fileNames
    }

    static let nodeNames = [
        "p0", "p1", "p2", "p3", "sub", "verb", "main", "output", "x0", "x1", "nobody", "p0:0",
        "main:1", "verb:7"
    ]
    static let kinds = ["player", "mixer", "reverb", "delay", "eq", "distortion", "input", "output", "oscillator", ""]
    static let parameters = [
        "volume", "pan", "buffer", "file", "start", "frames", "loop", "playing", "channels",
        "outputVolume", "wetDryMix", "preset", "bypass", "delayTime", "feedback", "bands",
        "band0.gain", "band99.gain", "nothing", ""
    ]
    static let commands = ["play", "pause", "stop", "reset", "params", "enqueue", "schedule/buffer", "schedule/file"]
    static let fixedAddresses = [
        "/ping", "/status", "/status/memory", "/version", "/quit", "/sync", "/node/new", "/node/free",
        "/node/list", "/graph/connect", "/graph/disconnect", "/graph/list", "/buffer/load",
        "/buffer/free", "/buffer/list", "/patch/load", "/patch/save", "/notify", "/renew",
        "/meters", "/sound/play", "/", "//", "/node", "/node/", "/node//volume",
        "/node/*/volume", "/node/*", "/node/{p0,p1}/pan", "/node/p?/stop", "/node/[a-z]*/play",
        "/node/p0/schedule", "/*", "/[", "/{", "/node/p0/volume/extra", "/status.reply",
        "/no/such/address", "/node/p0/../main/volume", "/node/ p0/volume", "/node/p0/play\t"
    ]
    static let strings = [
        "", "p0", "p1", "main", "output", "verb", "loop", "x0", "player", "mixer", "reverb",
        "main:0", "p0:0", "verb:3", "system:playback_1", "soundstage:out_1", "a:b:c",
        "mediumHall", "largeHall2", "lowPass", "loops,interrupts", "dataPlayedBack", "bogus,,",
        "osc.udp://127.0.0.1:9/", "osc.tcp://127.0.0.1:9/", "osc.udp://localhost:1/", "osc.udp://",
        "osc.udp://[::1]:x/", "osc.http://127.0.0.1:1/", "/etc/passwd", "../../../../etc/shadow",
        "/dev/zero", "/proc/self/mem", "nonexistent.wav", "sub/dir/../../x.wav", "saved.yaml",
        "%s%s%n%n", "名前", "🎹🎛️", "\u{202E}evil", "a b", "\u{7}\u{1b}[2J", "\\", "*",
        "{p0,p1}",
        String(repeating: "A", count: 65), String(repeating: "long/", count: 400)
    ]

    mutating func string() -> String {
        if random.chance(15), !fileNames.isEmpty { return random.pick(fileNames) }
        return random.pick(Self.strings)
    }

    mutating func address() -> String {
        switch random.below(10) {
        case 0...3:
            return "/node/\(random.pick(Self.nodeNames))/\(random.pick(Self.parameters))"
        case 4...5:
            return "/node/\(random.pick(Self.nodeNames))/\(random.pick(Self.commands))"
        default:
            return random.pick(Self.fixedAddresses)
        }
    }

    mutating func argument() -> OSCArgument {
        switch random.below(16) {
        case 0:
            return .int32(
                random.pick([
                    0, 1, -1, 2, 10, 50, 100, 24_000, Int32.max, Int32.min,
                    Int32(truncatingIfNeeded: random.next())
                ]))
        case 1:
            return .int64(
                random.pick([
                    0, 1, -1, Int64.max, Int64.min, 1 << 40,
                    Int64(truncatingIfNeeded: random.next())
                ]))
        case 2, 3:
            return .float(
                random.pick([
                    0, 0.5, 1, -1, 2, 1e30, -1e30, .nan, .infinity, -.infinity,
                    .leastNonzeroMagnitude, Float(random.below(1000)) / 999
                ]))
        case 4:
            return .double(
                random.pick([
                    0, 0.25, 1, -0.5, 1e300, .nan, .infinity, .leastNonzeroMagnitude,
                    Double(random.below(1000)) / 999
                ]))
        case 5, 6, 7: return .string(string())
        case 8: return .symbol(string())
        case 9: return .blob(random.bytes(random.pick([0, 1, 3, 4, 17, 64, 300])))
        case 10:
            let now = OSCTimetag.now()
            return .timetag(
                random.pick([
                    .immediate, now, now.adding(seconds: 0.2), now.adding(seconds: -3),
                    now.adding(seconds: 7200), OSCTimetag(rawValue: random.next()),
                    OSCTimetag(rawValue: 0), OSCTimetag(rawValue: .max)
                ]))
        case 11: return .char(UInt8(truncatingIfNeeded: random.next()))
        case 12: return .midi(0x90, 60, 127, UInt8(truncatingIfNeeded: random.next()))
        case 13: return .bool(random.chance(50))
        case 14: return .null
        default: return .infinitum
        }
    }

    mutating func message() -> OSCMessage {
        var arguments: [OSCArgument] = []
        // Mostly plausible shapes: a kind and a name for /node/new, two endpoints for /graph/*, …
        if random.chance(50) {
            arguments = (0..<(1 + random.below(4))).map { _ in random.chance(60) ? .string(string()) : argument() }
        } else {
            arguments = (0..<random.below(7)).map { _ in argument() }
        }
        return OSCMessage(address(), arguments)
    }

    mutating func timetag() -> OSCTimetag {
        let now = OSCTimetag.now()
        return random.pick([
            .immediate, now.adding(seconds: 0.15),
            now.adding(seconds: Double(random.below(1000)) / 1000),
            now.adding(seconds: -1), now.adding(seconds: 3599), now.adding(seconds: 7200),
            OSCTimetag(rawValue: 0), OSCTimetag(rawValue: random.next())
        ])
    }

    mutating func bundle(depth: Int = 0) -> OSCPacket {
        let count = random.below(4)
        var elements: [OSCPacket] = (0..<count).map { _ in .message(message()) }
        if depth < 10 && random.chance(depth < 2 ? 50 : 85) { elements.append(bundle(depth: depth + 1)) }
        return .bundle(timetag(), elements)
    }

    /// One packet and what kind it is (for the report).
    mutating func packet() -> (bytes: [UInt8], kind: Kind) {
        let roll = random.below(100)
        switch roll {
        case 0..<35: return (OSCPacket.message(message()).encoded(), .wellFormed)
        case 35..<80:
            let base = random.chance(80) ? OSCPacket.message(message()).encoded() : bundle().encoded()
            return (mutate(base), .mutated)
        case 80..<92: return (bundle().encoded(), .bundle)
        case 92..<98: return (random.bytes(random.below(256)), .randomBytes)
        default:
            // A valid message carrying a blob large enough to exceed the 16 KB limit.
            let size = 16_384 + random.below(44_000)
            return (OSCPacket.message(OSCMessage("/ping", [.blob(random.bytes(size))])).encoded(), .oversized)
        }
    }

    enum Kind: String, CaseIterable {
        case wellFormed, mutated, bundle, randomBytes, oversized
    }

    /// Offsets of the first string (the address, or "#bundle") and of the type tag string, if any.
    private func stringSpans(_ bytes: [UInt8]) -> [Range<Int>] {
        var spans: [Range<Int>] = []
        var start = 0
        for _ in 0..<2 {
            guard start < bytes.count, let end = bytes[start...].firstIndex(of: 0) else { break }
            spans.append(start..<end)
            start = OSCPacket.paddedSize(end - start) + start
        }
        return spans
    }

    mutating func mutate(_ bytes: [UInt8]) -> [UInt8] {
        var out = bytes
        switch random.below(10) {
        case 0:  // flip bytes
            for _ in 0..<(1 + random.below(4)) where !out.isEmpty {
                out[random.below(out.count)] ^= UInt8(truncatingIfNeeded: 1 + random.below(255))
            }
        case 1:  // truncate, often to a multiple of 4 so the size check alone does not catch it
            var n = random.below(out.count + 1)
            if random.chance(70) { n -= n % 4 }
            out = Array(out.prefix(n))
        case 2:  // extend: random bytes, NUL padding, or a second copy of the arguments
            switch random.below(3) {
            case 0: out += random.bytes(1 + random.below(64))
            case 1: out += [UInt8](repeating: 0, count: 4 * (1 + random.below(8)))
            default: out += out.suffix(out.count / 2)
            }
        case 3:  // insert bytes in the middle
            out.insert(contentsOf: random.bytes(1 + random.below(12)), at: random.below(out.count + 1))
        case 4:  // random type tags (same length, so the packet stays aligned)
            let spans = stringSpans(out)
            if spans.count == 2, spans[1].count > 1 {
                let alphabet = Array("ifsbhtdScmTFNI[]xyz,/ #".utf8)
                for i in spans[1].dropFirst() { out[i] = random.pick(alphabet) }
            } else if out.count >= 8 {
                out.replaceSubrange(4..<8, with: Array(",\(random.pick(["b", "s", "h", "x"]))\0\0".utf8))
            }
        case 5:  // huge or negative sizes in an aligned word (blob lengths, bundle element sizes)
            if out.count >= 4 {
                let at = random.below(out.count / 4) * 4
                let word: [UInt8] = random.pick([
                    [0x7F, 0xFF, 0xFF, 0xFF], [0xFF, 0xFF, 0xFF, 0xFF], [0x80, 0, 0, 0],
                    [0, 1, 0, 0], [0, 0, 0, 0], [0, 0, 0, 3]
                ])
                out.replaceSubrange(at..<(at + 4), with: word)
            }
        case 6, 7:  // odd bytes inside the address or a string: invalid UTF-8, control characters, DEL
            let spans = stringSpans(out).filter { !$0.isEmpty }
            if let span = spans.isEmpty ? nil : random.pick(spans) {
                for _ in 0..<(1 + random.below(3)) {
                    out[span.lowerBound + random.below(span.count)] =
                        random.pick([0xFF, 0xC0, 0xC3, 0xE2, 0xF0, 0x80, 0x01, 0x1B, 0x7F, 0x0A, 0x25, 0x2A, 0x7B])
                }
            }
        case 8:  // splice the head of this packet onto the tail of another
            let other = OSCPacket.message(message()).encoded()
            out = Array(out.prefix(random.below(out.count + 1))) + other.suffix(random.below(other.count + 1))
        default:  // wrap in a bundle whose element size lies
            var wrapped: [UInt8] = Array("#bundle\0".utf8)
            OSCPacket.appendUInt64(timetag().rawValue, to: &wrapped)
            let claimed = random.pick([out.count, out.count + 4, max(0, out.count - 4), Int(Int32.max), 0])
            OSCPacket.appendUInt32(UInt32(truncatingIfNeeded: claimed), to: &wrapped)
            out = wrapped + out
        }
        return out
    }
}

/// The render thread's heap allocations, frees and mutex locks, counted by DSPTestSupport's
/// `AllocationProbe` over the CAllocationCounter malloc interposer (linked into the test executable).
struct RenderAllocationCounter {
    /// True in a sanitizer build, where the sanitizer owns malloc and nothing is counted.
    static var isSanitized: Bool { AllocationProbe.isSanitized }
    static var unavailableReason: String? {
        AllocationProbe.isActive ? nil : "the counting malloc (CAllocationCounter) is not the process's malloc"
    }
    /// This counter's own channel: other tests' probes running meanwhile never add to it.
    private let probe = AllocationProbe()
    func track(_ on: Bool) { probe.trackCurrentThread(on) }
    var counts: (allocations: Int64, frees: Int64, locks: Int64) {
        (probe.allocations, probe.frees, probe.locks)
    }
}

/// Renders an engine in real time on its own thread, 256-frame periods (like a JACK process callback),
/// and counts the heap allocations, frees and mutex locks that thread makes after `startMeasuring()`,
/// plus non-finite output samples and render calls slower than a period.
final class CountingRenderer: @unchecked Sendable {
    struct Report {
        var frames: Int
        var measuredFrames: Int
        var allocations: Int64
        var frees: Int64
        var locks: Int64
        var nonFiniteSamples: Int
        var slowPeriods: Int
        var longestRenderMicroseconds: Double
        /// The counter saw a deliberate malloc made on this thread before measuring (a broken counter
        /// would report 0 allocations for anything).
        var counterSawProbe: Bool
    }

    let engine: Engine
    let period: Int
    private let channels: Int
    private let stopFlag = Atomic<Bool>(false)
    private let measureFlag = Atomic<Bool>(false)
    private let frameCounter = Atomic<Int>(0)
    private let probeSink = Atomic<Int>(0)
    private let finished = DispatchSemaphore(value: 0)
    private let report = Mutex<Report?>(nil)
    private var started = false

    init(engine: Engine, period: Int = 256) {
        self.engine = engine
        self.period = period
        channels = engine.configuration.outputChannelCount
    }

    deinit { _ = stop() }

    func start() {
        started = true
        let thread = Thread { [self] in self.loop() }
        thread.name = "fuzz-render"
        thread.start()
    }

    /// From the next period on, allocations are counted.
    func startMeasuring() { measureFlag.store(true, ordering: .releasing) }

    var frames: Int { frameCounter.load(ordering: .acquiring) }

    /// Stops the thread and returns what it counted.
    func stop() -> Report? {
        guard started else { return report.withLock { $0 } }
        started = false
        stopFlag.store(true, ordering: .releasing)
        finished.wait()
        return report.withLock { $0 }
    }

    private func loop() {
        let block = UnsafeMutablePointer<Float>.allocate(capacity: period * channels)
        block.initialize(repeating: 0, count: period * channels)
        let pointers = UnsafeMutablePointer<UnsafeMutablePointer<Float>?>.allocate(capacity: channels)
        for c in 0..<channels { pointers[c] = block + c * period }
        let render = engine.renderEngine
        let periodSeconds = Double(period) / engine.configuration.sampleRate
        var next = Self.now()
        var measuring = false
        var baseline: (allocations: Int64, frees: Int64, locks: Int64) = (0, 0, 0)
        var measuredFrom = 0
        var frames = 0
        var nonFinite = 0
        var slow = 0
        var longest = 0.0
        // Nothing below allocates: pointers, atomics, clock_gettime and usleep.
        let counter = RenderAllocationCounter()
        counter.track(true)
        let beforeProbe = counter.counts.allocations
        let probe = malloc(64)
        // The pointer escapes into an atomic, so an optimizer cannot drop the malloc/free pair.
        probeSink.store(Int(bitPattern: probe), ordering: .relaxed)
        free(probe)
        let counterSawProbe = counter.counts.allocations > beforeProbe
        while !stopFlag.load(ordering: .acquiring) {
            if !measuring && measureFlag.load(ordering: .acquiring) {
                measuring = true
                measuredFrom = frames
                baseline = counter.counts
            }
            let before = Self.now()
            render.render(
                frameCount: period, inputs: nil, inputCount: 0, outputs: UnsafePointer(pointers),
                outputCount: channels)
            let took = Self.now() - before
            longest = max(longest, took)
            if took > periodSeconds { slow += 1 }
            for i in 0..<(period * channels) where !block[i].isFinite { nonFinite += 1 }
            frames += period
            frameCounter.store(frames, ordering: .releasing)
            next += periodSeconds
            let wait = next - Self.now()
            if wait > 0 { usleep(UInt32(wait * 1e6)) } else if wait < -0.1 { next = Self.now() }
        }
        let end = counter.counts
        counter.track(false)
        report.withLock {
            $0 = Report(
                frames: frames, measuredFrames: measuring ? frames - measuredFrom : 0,
                allocations: measuring ? end.allocations - baseline.allocations : 0,
                frees: measuring ? end.frees - baseline.frees : 0,
                locks: measuring ? end.locks - baseline.locks : 0,
                nonFiniteSamples: nonFinite, slowPeriods: slow, longestRenderMicroseconds: longest * 1e6,
                counterSawProbe: counterSawProbe)
        }
        block.deallocate()
        pointers.deallocate()
        finished.signal()
    }

    static func now() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }
}

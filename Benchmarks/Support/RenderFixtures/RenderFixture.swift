// Benchmark fixture: N looping stereo buffer players (volume 0.7, pan 0.3) → one mixer → main, rendered
// the way JACK's process callback renders it: `RenderEngine.render` with 128-frame host periods.
// Everything here except `renderBlock` is set-up and runs outside the measured region.
import AudioGraph

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// An engine with `playerCount` players ready to render, plus preallocated host output buffers.
public final class RenderFixture {
    public static let sampleRate = 48_000.0
    /// Host period (JACK buffer size) in frames.
    public static let hostBlockFrames = 128
    /// Engine sub-block (EngineConfiguration.blockFrames); the engine splits each host period into these.
    public static let engineBlockFrames = 64
    /// Host periods in one second of audio: 48_000 / 128.
    public static let blocksPerSecond = 375
    /// Frames in the shared stereo buffer (4 s).
    public static let bufferFrames = 192_000

    public let engine: Engine
    public let renderEngine: RenderEngine
    public let playerCount: Int
    /// Player names, "p0" ... "p{N-1}".
    public let playerNames: [String]
    private let outputs: UnsafeMutablePointer<UnsafeMutablePointer<Float>?>
    private let storage: UnsafeMutablePointer<Float>

    /// Builds the graph and renders `warmUpBlocks` host periods (caches, page faults, first program
    /// install), then calls `poll()` so the control side has released everything it may.
    ///
    /// - Parameter staggered: true gives player i its own region start inside the buffer, so players
    ///   read different memory (closer to N different sounds); false starts all of them at frame 0.
    public init(playerCount: Int, staggered: Bool = true, warmUpBlocks: Int = 400) throws {
        self.playerCount = playerCount
        engine = Engine(
            configuration: EngineConfiguration(
                sampleRate: Self.sampleRate, blockFrames: Self.engineBlockFrames,
                outputChannelCount: 2, inputChannelCount: 0))
        renderEngine = engine.renderEngine

        var left = [Float](repeating: 0, count: Self.bufferFrames)
        var right = [Float](repeating: 0, count: Self.bufferFrames)
        for i in 0..<Self.bufferFrames {
            let t = Double(i) / Self.sampleRate
            left[i] = Float(0.5 * sin(2 * Double.pi * 220 * t))
            right[i] = Float(0.5 * sin(2 * Double.pi * 331 * t))
        }
        try engine.addBuffer(SampleBuffer(name: "b", channels: [left, right], sampleRate: Self.sampleRate))
        try engine.attach(.mixer, name: "mix")
        try engine.connect("mix", to: "main")

        var names: [String] = []
        for i in 0..<playerCount {
            let name = "p\(i)"
            var parameters: [String: ParameterValue] = [
                "buffer": .string("b"), "loop": .bool(true), "playing": .bool(true),
                "volume": .float(0.7), "pan": .float(0.3)
            ]
            if staggered {
                // Distinct starts spread over the first half of the buffer; each loops to the end.
                parameters["start"] = .int((i &* 7_919) % (Self.bufferFrames / 2))
            }
            try engine.attach(.player, name: name, parameters: parameters)
            try engine.connect(name, to: "mix")
            names.append(name)
        }
        playerNames = names

        let frames = Self.hostBlockFrames
        storage = .allocate(capacity: 2 * frames)
        storage.initialize(repeating: 0, count: 2 * frames)
        outputs = .allocate(capacity: 2)
        outputs[0] = storage
        outputs[1] = storage + frames

        for _ in 0..<warmUpBlocks { renderBlock() }
        engine.poll()
    }

    deinit {
        outputs.deallocate()
        storage.deallocate()
    }

    /// One host period: exactly what JACK's process callback calls.
    @inline(__always)
    public func renderBlock() {
        renderEngine.render(
            frameCount: Self.hostBlockFrames, inputs: nil, inputCount: 0,
            outputs: UnsafePointer(outputs), outputCount: 2)
    }

    /// One second of audio: 375 host periods of 128 frames.
    @inline(never)
    public func renderOneSecond() {
        for _ in 0..<Self.blocksPerSecond { renderBlock() }
    }

    /// Sum of |sample| of the last period (keeps the work observable; also a sanity check that audio flows).
    public func lastBlockMagnitude() -> Float {
        var sum: Float = 0
        for i in 0..<(2 * Self.hostBlockFrames) { sum += abs(storage[i]) }
        return sum
    }

    /// Volume values the parameter-change benchmarks alternate between (both in 0...1).
    public static let volumeSequence: [ParameterValue] = [.float(0.7), .float(0.5)]
}

/// Calling thread's CPU time in nanoseconds (CLOCK_THREAD_CPUTIME_ID): immune to time slices given to
/// other processes on a shared machine, unlike wall-clock time.
@inline(__always)
public func threadCPUTimeNanoseconds() -> Int {
    var ts = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
    return ts.tv_sec * 1_000_000_000 + ts.tv_nsec
}

/// CLOCK_MONOTONIC in nanoseconds.
@inline(__always)
public func monotonicNanoseconds() -> Int {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return ts.tv_sec * 1_000_000_000 + ts.tv_nsec
}

/// Cost in nanoseconds of an empty `monotonicNanoseconds()` … `monotonicNanoseconds()` window (median of
/// many), subtracted from per-period timings. A per-period CLOCK_THREAD_CPUTIME_ID read is a real system
/// call (~0.5 µs here), too costly to bracket each 128-frame render; CLOCK_MONOTONIC is read through the
/// vDSO (~25 ns).
public func emptyTimingWindowNanoseconds(samples: Int = 20_001) -> Int {
    var values = [Int](repeating: 0, count: samples)
    for i in 0..<samples {
        let a = monotonicNanoseconds()
        let b = monotonicNanoseconds()
        values[i] = b &- a
    }
    values.sort()
    return values[samples / 2]
}

// Control side. Level meters: peak and RMS per channel of a node's output, for OSC meter feeds.
import AudioDSP
#if canImport(Glibc)
    import Glibc
#endif
import Synchronization

/// A channel's level over a metering interval, in dBFS (−160 is silence).
public struct ChannelLevel: Sendable, Equatable {
    public var peakDecibels: Float
    public var rmsDecibels: Float

    /// Converts linear peak and mean square to dBFS with a −160 floor.
    init(peak: Float, meanSquare: Float) {
        func decibels(_ x: Float) -> Float { x > 1e-8 ? max(-160, 20 * log10f(x)) : -160 }
        peakDecibels = decibels(peak)
        rmsDecibels = decibels(meanSquare.squareRoot())
    }
}

/// The clock anchor the render thread publishes each cycle, for mapping wall time to engine frames.
public struct EngineClockAnchor: Sendable, Equatable {
    /// Engine sample time of the first frame of the last render cycle.
    public var sampleTime: Int64
    /// CLOCK_MONOTONIC, in nanoseconds, when that cycle began.
    public var monotonicNanoseconds: Int64
    public var sampleRate: Double
}

/// Peak and energy per channel over one reader's interval.
struct LevelAccumulator {
    var peaks: [Float]
    var sums: [Float]
    var frames = 0

    init(channelCount: Int) {
        peaks = Array(repeating: 0, count: channelCount)
        sums = Array(repeating: 0, count: channelCount)
    }

    mutating func add(_ record: [Float], channelCount: Int) {
        frames += Int(record[0])
        for c in 0..<channelCount {
            peaks[c] = max(peaks[c], record[1 + c])
            sums[c] += record[1 + channelCount + c]
        }
    }

    /// Levels over the interval, then starts a new one.
    mutating func take() -> [ChannelLevel] {
        let levels = (0..<peaks.count).map {
            ChannelLevel(peak: peaks[$0], meanSquare: frames > 0 ? sums[$0] / Float(frames) : 0)
        }
        self = LevelAccumulator(channelCount: peaks.count)
        return levels
    }
}

/// A metered node: the render-side record ring and the control-side accumulators, one per reader (OSC
/// meter feeds, and an audioplayer's own `power` readings), so neither reader resets the other.
final class MeterRecord {
    let node: String
    let channelCount: Int
    let ring: TapRing
    let state: UnsafeMutablePointer<TapState>
    private var feed: LevelAccumulator
    private var player: LevelAccumulator

    init(node: String, channelCount: Int) {
        self.node = node
        self.channelCount = channelCount
        let width = 1 + 2 * channelCount
        // One record per sub-block; room for about a second of 64-frame sub-blocks at 48 kHz.
        ring = TapRing(channelCount: width, capacityFrames: 1024)
        let scratch = UnsafeMutablePointer<Float>.allocate(capacity: width)
        scratch.initialize(repeating: 0, count: width)
        state = .allocate(capacity: 1)
        state.initialize(to: TapState(ring: Unmanaged.passUnretained(ring), scratch: scratch, channelCount: width))
        feed = LevelAccumulator(channelCount: channelCount)
        player = LevelAccumulator(channelCount: channelCount)
    }

    deinit {
        state.pointee.scratch.deallocate()
        state.deallocate()
    }

    /// Folds the render thread's records into both readers' running peak and energy.
    func drain() {
        let width = 1 + 2 * channelCount
        var record = [Float](repeating: 0, count: width)
        while record.withUnsafeMutableBufferPointer({ ring.samples.pop(into: $0) }) == width {
            feed.add(record, channelCount: channelCount)
            player.add(record, channelCount: channelCount)
        }
    }

    /// Levels since the last call (the OSC meter feed), then starts a new interval.
    func take() -> [ChannelLevel] {
        drain()
        return feed.take()
    }

    /// Levels since the last call for an audioplayer's `updateMeters` (independent of the feed).
    func takePlayerLevels() -> [ChannelLevel] {
        drain()
        return player.take()
    }
}

extension Engine {
    /// Turns level metering of `node`'s output on or off. A metered node that is not in an active chain
    /// reports silence.
    public func setMetering(_ node: String, enabled: Bool) throws(EngineError) {
        try control.withLock { core throws(EngineError) in try core.setMetering(try core.record(node), enabled: enabled)
        }
    }

    /// Peak and RMS per channel of every metered node since the previous call.
    public func readMeters() -> [String: [ChannelLevel]] {
        control.withLock { core in core.state.monitors.meters.mapValues { $0.take() } }
    }

    /// The clock anchor of the last render cycle (nil before the first).
    public func clockAnchor() -> EngineClockAnchor? {
        guard let anchor = renderEngine.clockAnchor else { return nil }
        return EngineClockAnchor(
            sampleTime: anchor.sampleTime, monotonicNanoseconds: anchor.monotonicNanoseconds,
            sampleRate: configuration.sampleRate)
    }
}

extension EngineCore {
    /// Turns metering of `record`'s output on or off.
    func setMetering(_ record: NodeRecord, enabled: Bool) throws(EngineError) {
        let node = record.name
        guard record.kind.outputBusCount > 0 || record.kind == .output else {
            throw EngineError(.invalidBus, "'\(node)' has no output to meter")
        }
        if enabled {
            guard state.monitors.meters[node] == nil else { return }
            state.monitors.meters[node] = MeterRecord(node: node, channelCount: record.outputChannelCount)
            republish()
        } else if let meter = state.monitors.meters.removeValue(forKey: node) {
            republish()
            bury(meter)
        }
    }
}

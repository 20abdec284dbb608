// Control side. Fixed facts an engine is created with.

/// How an `Engine` renders. The sample rate may later follow the host (`Engine.setSampleRate`).
public struct EngineConfiguration: Sendable, Equatable {
    /// Engine sample rate in Hz; every buffer and bus runs at it.
    public var sampleRate: Double
    /// Largest internal sub-block in frames (1...4096). Hosts may use any period.
    public var blockFrames: Int
    /// Output channels (JACK ports out_1..N), 1...64.
    public var outputChannelCount: Int
    /// Capture channels (JACK ports in_1..N), 0...64.
    public var inputChannelCount: Int
    /// Glide time for volume and pan changes, in seconds.
    public var rampDuration: Double

    public init(
        sampleRate: Double = 48_000, blockFrames: Int = 64, outputChannelCount: Int = 2,
        inputChannelCount: Int = 0, rampDuration: Double = 0.02
    ) {
        self.sampleRate = sampleRate
        self.blockFrames = blockFrames
        self.outputChannelCount = outputChannelCount
        self.inputChannelCount = inputChannelCount
        self.rampDuration = rampDuration
    }

    /// Ramp length in frames at the current rate.
    var rampFrames: Int32 { Int32(max(1, (rampDuration * sampleRate).rounded())) }
}

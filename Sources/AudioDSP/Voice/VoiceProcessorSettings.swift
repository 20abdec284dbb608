// Pure value types: the voice processor's settings and its published analysis.

/// How the voice processor trades echo attenuation against CPU.
public enum VoiceProcessingMode: Sendable, Equatable {
    /// Long linear filter (150 ms after the aligned direct path): the figures in docs/VOICE.md.
    case quality
    /// Short linear filter (40 ms after the aligned direct path), the same delay tracking and
    /// residual-echo suppression: less attenuation of reverberant echo, about half the CPU.
    case lowComplexity
}

/// The construction-time settings of a `VoiceProcessorKernel`. `agc` and `noiseSuppression` are the
/// initial values of switches that can change live.
public struct VoiceProcessorSettings: Sendable, Equatable {
    public var mode: VoiceProcessingMode
    public var agc: Bool
    public var noiseSuppression: Bool
    /// Microphone channels, 1...2 (each is cancelled against all reference channels).
    public var micChannels: Int
    /// Reference (loudspeaker) channels, 1...2.
    public var referenceChannels: Int
    /// 8 kHz ... 96 kHz; every 10 ms frame is `sampleRate / 100` samples (rounded down to an even count).
    public var sampleRate: Double
    /// Longest echo delay the tracker searches for, in seconds (at most 1).
    public var maximumDelaySeconds: Double
    /// Learn the loudspeaker's memoryless distortion and cancel its echo too (`NonlinearEchoCanceller`;
    /// quality mode, while the reference is one loudspeaker's signal). Off: a purely linear echo model.
    public var learnsLoudspeakerDistortion: Bool

    public init(
        mode: VoiceProcessingMode = .quality, agc: Bool = false, noiseSuppression: Bool = true,
        micChannels: Int = 1, referenceChannels: Int = 1, sampleRate: Double = 48_000,
        maximumDelaySeconds: Double = 0.5, learnsLoudspeakerDistortion: Bool = true
    ) {
        self.mode = mode
        self.agc = agc
        self.noiseSuppression = noiseSuppression
        self.micChannels = micChannels
        self.referenceChannels = referenceChannels
        self.sampleRate = sampleRate
        self.maximumDelaySeconds = maximumDelaySeconds
        self.learnsLoudspeakerDistortion = learnsLoudspeakerDistortion
    }
}

/// What the voice processor measured in its latest frames: for meters and for muted-talker detection.
public struct VoiceAnalysis: Sendable, Equatable {
    /// Echo return loss enhancement (mic level over output level) while the far end talks alone,
    /// smoothed over about a second; 0 before the far end has talked.
    public var erleDb: Float
    /// The tracked echo delay (reference to microphone) in milliseconds; negative before it is known.
    public var delayMs: Float
    /// Both ends talk at once.
    public var doubleTalk: Bool
    /// The near-end talker is active (whatever the far end does).
    public var nearEndActive: Bool

    public init(erleDb: Float = 0, delayMs: Float = -1, doubleTalk: Bool = false, nearEndActive: Bool = false) {
        self.erleDb = erleDb
        self.delayMs = delayMs
        self.doubleTalk = doubleTalk
        self.nearEndActive = nearEndActive
    }
}

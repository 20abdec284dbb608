// Control side. The optional `session:` section of a patch: the audio session's settings (docs/SESSION.md).

/// Audio session settings from a patch.
public struct PatchSessionSettings: Sendable, Equatable {
    /// The category names `category` accepts (AVAudioSession's).
    public static let categories = ["ambient", "soloAmbient", "playback", "record", "playAndRecord", "multiRoute"]
    /// The mode names `mode` accepts.
    public static let modes = [
        "default", "voiceChat", "videoChat", "gameChat", "measurement", "moviePlayback", "spokenAudio",
        "videoRecording"
    ]
    /// The categories each option applies to.
    public static let duckOthersCategories = ["ambient", "playback", "playAndRecord", "multiRoute"]
    public static let mixingOptionCategories = ["playback", "playAndRecord", "multiRoute"]

    /// Pause players and audioplayers when the outputs lose their last connection (key
    /// `pauseOnRouteLoss`); `nil` when not written (off).
    public var pauseOnRouteLoss: Bool?
    /// The player or audioplayer remote commands and JACK transport drive (key `nowPlaying`).
    public var nowPlaying: String?
    /// One of `categories`; nil: soloAmbient.
    public var category: String?
    /// One of `modes`; nil: default.
    public var mode: String?
    public var mixWithOthers: Bool?
    public var duckOthers: Bool?
    public var interruptSpokenAudioAndMixWithOthers: Bool?
    /// What a ducking session lowers the others to, in dB (−120…0); nil: −15.
    public var duckLevel: Double?
    /// Activate the session when the engine starts (key `active`).
    public var active: Bool?
    /// Where the `session` mapping starts; `nil` when the section is absent or built in code.
    public var location: SourceLocation?
    /// Where the value of `nowPlaying` starts.
    public var nowPlayingLocation: SourceLocation?

    public init(
        pauseOnRouteLoss: Bool? = nil, nowPlaying: String? = nil, location: SourceLocation? = nil,
        nowPlayingLocation: SourceLocation? = nil
    ) {
        self.pauseOnRouteLoss = pauseOnRouteLoss
        self.nowPlaying = nowPlaying
        self.location = location
        self.nowPlayingLocation = nowPlayingLocation
    }

    /// Whether nothing is set (the writer then leaves the section out).
    public var isEmpty: Bool { withoutLocations() == PatchSessionSettings() }

    /// A copy without locations, for comparisons that ignore where things were written.
    public func withoutLocations() -> PatchSessionSettings {
        var copy = self
        copy.location = nil
        copy.nowPlayingLocation = nil
        return copy
    }
}

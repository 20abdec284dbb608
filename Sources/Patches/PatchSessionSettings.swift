// Control side. The optional `session:` section of a patch: the audio session's settings (docs/SESSION.md).

/// Audio session settings from a patch.
public struct PatchSessionSettings: Sendable, Equatable {
    /// Pause players and audioplayers when the outputs lose their last connection (key
    /// `pauseOnRouteLoss`); `nil` when not written (off).
    public var pauseOnRouteLoss: Bool?
    /// The player or audioplayer remote commands and JACK transport drive (key `nowPlaying`).
    public var nowPlaying: String?
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
    public var isEmpty: Bool { pauseOnRouteLoss == nil && nowPlaying == nil }

    /// A copy without locations, for comparisons that ignore where things were written.
    public func withoutLocations() -> PatchSessionSettings {
        PatchSessionSettings(pauseOnRouteLoss: pauseOnRouteLoss, nowPlaying: nowPlaying)
    }
}

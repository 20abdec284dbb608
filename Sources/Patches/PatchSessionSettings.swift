// Control side. The optional `session:` section of a patch: the audio session's settings (docs/SESSION.md).

/// Audio session settings from a patch.
public struct PatchSessionSettings: Sendable, Equatable {
    /// Pause players and audioplayers when the outputs lose their last connection (key
    /// `pauseOnRouteLoss`); `nil` when not written (off).
    public var pauseOnRouteLoss: Bool?
    /// Where the `session` mapping starts; `nil` when the section is absent or built in code.
    public var location: SourceLocation?

    public init(pauseOnRouteLoss: Bool? = nil, location: SourceLocation? = nil) {
        self.pauseOnRouteLoss = pauseOnRouteLoss
        self.location = location
    }

    /// Whether nothing is set (the writer then leaves the section out).
    public var isEmpty: Bool { pauseOnRouteLoss == nil }

    /// A copy without locations, for comparisons that ignore where things were written.
    public func withoutLocations() -> PatchSessionSettings { PatchSessionSettings(pauseOnRouteLoss: pauseOnRouteLoss) }
}

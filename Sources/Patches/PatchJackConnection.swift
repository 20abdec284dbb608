// Control side. One JACK port connection made at start (`jack: connect:` in a patch).

/// A JACK port connection the host makes when it starts.
///
/// A name without `:` is a port of Soundstage's own client (`out_1`, `in_2`); a name with `:` is a
/// full JACK port name (`system:playback_1`). Whether the ports exist is only known at run time.
public struct PatchJackConnection: Sendable, Equatable {
    /// Source port name, non-empty.
    public var from: String
    /// Destination port name, non-empty.
    public var to: String
    /// Where the entry's mapping starts; `nil` for a connection built in code.
    public var location: SourceLocation?
    /// Where the value of `from` starts.
    public var fromLocation: SourceLocation?
    /// Where the value of `to` starts.
    public var toLocation: SourceLocation?

    /// Creates a JACK connection; locations default to `nil` (built in code, not read from a file).
    public init(
        from: String, to: String,
        location: SourceLocation? = nil, fromLocation: SourceLocation? = nil, toLocation: SourceLocation? = nil
    ) {
        self.from = from
        self.to = to
        self.location = location
        self.fromLocation = fromLocation
        self.toLocation = toLocation
    }

    /// Whether `port` names a port of Soundstage's own client (it has no `:`).
    public static func isOwnPort(_ port: String) -> Bool {
        !port.contains(":")
    }

    /// A copy with every location set to `nil`, for comparisons that ignore where things were written.
    public func withoutLocations() -> PatchJackConnection {
        PatchJackConnection(from: from, to: to)
    }
}

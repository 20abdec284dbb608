// Control side. A connection between two node endpoints, from a patch's `connections` list.

/// An audio connection `from` one node (bus) `to` another.
///
/// Whether the nodes and buses exist, and whether connections form a cycle, is checked later
/// against the engine.
public struct PatchConnection: Sendable, Equatable {
    /// The source endpoint.
    public var from: PatchEndpoint
    /// The destination endpoint.
    public var to: PatchEndpoint
    /// Where the connection's mapping starts; `nil` for a connection built in code.
    public var location: SourceLocation?
    /// Where the value of `from` starts.
    public var fromLocation: SourceLocation?
    /// Where the value of `to` starts.
    public var toLocation: SourceLocation?

    /// Creates a connection; locations default to `nil` (built in code, not read from a file).
    public init(
        from: PatchEndpoint, to: PatchEndpoint,
        location: SourceLocation? = nil, fromLocation: SourceLocation? = nil, toLocation: SourceLocation? = nil
    ) {
        self.from = from
        self.to = to
        self.location = location
        self.fromLocation = fromLocation
        self.toLocation = toLocation
    }

    /// A copy with every location set to `nil`, for comparisons that ignore where things were written.
    public func withoutLocations() -> PatchConnection {
        PatchConnection(from: from, to: to)
    }
}

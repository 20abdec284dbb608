// Control side. The optional `jack:` section of a patch: port connections made at start.

/// JACK host settings from a patch.
public struct PatchJackSettings: Sendable, Equatable {
    /// Port connections to make at start, in file order (key `connect`).
    public var connections: [PatchJackConnection]
    /// Whether to connect our outputs to the physical playback ports (key `connectPhysical`);
    /// `nil` when not written, leaving the choice to the command line.
    public var connectPhysical: Bool?
    /// Where the `jack` mapping starts; `nil` when the section is absent or built in code.
    public var location: SourceLocation?
    /// Where the value of `connectPhysical` starts.
    public var connectPhysicalLocation: SourceLocation?

    /// Creates settings; everything defaults to "not written".
    public init(
        connections: [PatchJackConnection] = [], connectPhysical: Bool? = nil,
        location: SourceLocation? = nil, connectPhysicalLocation: SourceLocation? = nil
    ) {
        self.connections = connections
        self.connectPhysical = connectPhysical
        self.location = location
        self.connectPhysicalLocation = connectPhysicalLocation
    }

    /// Whether nothing is set (the writer then leaves the section out).
    public var isEmpty: Bool {
        connections.isEmpty && connectPhysical == nil
    }

    /// A copy with every location set to `nil`, for comparisons that ignore where things were written.
    public func withoutLocations() -> PatchJackSettings {
        PatchJackSettings(connections: connections.map { $0.withoutLocations() }, connectPhysical: connectPhysical)
    }
}

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

/// One step of following an edit's `jack.connect` list.
public enum PatchJackStep: Sendable, Equatable {
    case connect(from: String, to: String)
    case disconnect(from: String, to: String)
}

extension PatchJackSettings {
    /// The steps that take the connections of `self` to those of `edited`: every new one made first, in
    /// the edited file's order, then every removed one undone. Made before broken, so an output moved
    /// from one port to another is never left without a connection in between (a lost route, which
    /// `pauseOnRouteLoss` would answer by pausing the players).
    public func steps(to edited: PatchJackSettings) -> [PatchJackStep] {
        func pairs(_ settings: PatchJackSettings) -> [PatchJackPair] {
            settings.connections.map { PatchJackPair(from: $0.from, to: $0.to) }
        }
        let before = pairs(self)
        let after = pairs(edited)
        let made = after.filter { !before.contains($0) }.map { PatchJackStep.connect(from: $0.from, to: $0.to) }
        let undone = before.filter { !after.contains($0) }.map { PatchJackStep.disconnect(from: $0.from, to: $0.to) }
        return made + undone
    }
}

private struct PatchJackPair: Equatable {
    var from: String
    var to: String
}

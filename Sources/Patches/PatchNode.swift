// Control side. A node declaration from a patch: its name, its kind and its parameters.

/// A node as declared in a patch's `nodes` list.
///
/// `main` (kind `mixer`) and `output` (kind `output`) exist implicitly in the engine; a patch may
/// still list them to set parameters. Whether `kind` exists and whether its parameters are known is
/// checked later, against the engine.
public struct PatchNode: Sendable, Equatable {
    /// Stable name; it appears in OSC addresses (`/node/<name>/<param>`). Checked by the ``PatchNameRule``.
    public var name: String
    /// Node kind as written (for example `player`, `mixer`).
    public var kind: String
    /// Parameters in file order. Keys are unique.
    public var params: [PatchParameter]
    /// Where the node's mapping starts; `nil` for a node built in code.
    public var location: SourceLocation?
    /// Where the value of `name` starts.
    public var nameLocation: SourceLocation?
    /// Where the value of `kind` starts.
    public var kindLocation: SourceLocation?

    /// Creates a node; locations default to `nil` (built in code, not read from a file).
    public init(
        name: String, kind: String, params: [PatchParameter] = [],
        location: SourceLocation? = nil, nameLocation: SourceLocation? = nil, kindLocation: SourceLocation? = nil
    ) {
        self.name = name
        self.kind = kind
        self.params = params
        self.location = location
        self.nameLocation = nameLocation
        self.kindLocation = kindLocation
    }

    /// The parameter with this key, if the node sets it.
    public func parameter(_ key: String) -> PatchParameter? {
        params.first { $0.key == key }
    }

    /// A copy with every location set to `nil`, for comparisons that ignore where things were written.
    public func withoutLocations() -> PatchNode {
        PatchNode(name: name, kind: kind, params: params.map { $0.withoutLocations() })
    }
}

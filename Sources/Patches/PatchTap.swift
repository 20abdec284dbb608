// Control side. A tap on a node's bus (`taps:` in a patch); reserved for later use.

/// A request to tap (observe) one bus of a node. Reserved: the patch loader refuses any entry (PATCH_FORMAT.md).
public struct PatchTap: Sendable, Equatable {
    /// The node name (valid per the reader's ``PatchNameRule``).
    public var node: String
    /// The bus index, ≥ 0 (key `bus`, default 0).
    public var bus: Int
    /// Where the tap's mapping starts; `nil` for a tap built in code.
    public var location: SourceLocation?
    /// Where the value of `node` starts.
    public var nodeLocation: SourceLocation?

    /// Creates a tap; locations default to `nil` (built in code, not read from a file).
    public init(node: String, bus: Int = 0, location: SourceLocation? = nil, nodeLocation: SourceLocation? = nil) {
        self.node = node
        self.bus = bus
        self.location = location
        self.nodeLocation = nodeLocation
    }

    /// A copy with every location set to `nil`, for comparisons that ignore where things were written.
    public func withoutLocations() -> PatchTap {
        PatchTap(node: node, bus: bus)
    }
}

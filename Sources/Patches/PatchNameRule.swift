// Control side. The rule a patch's names must follow, handed in by the caller.

/// The rule for the names in a patch (nodes, buffers, recorders, the node of an endpoint or tap). This
/// module does not define it: the rule is the engine's (`NodeName` in AudioGraph, which this module
/// cannot see), and SoundstageKit passes it as `PatchNameRule.engine`. The reader reports a broken name
/// where it is written and leaves its entry out, like any other schema error.
public struct PatchNameRule: Sendable {
    /// Why `name` is not a valid `what` (`node name`, `buffer name`…), or nil when it is.
    public let problem: @Sendable (_ name: String, _ what: String) -> String?

    public init(_ problem: @escaping @Sendable (_ name: String, _ what: String) -> String?) {
        self.problem = problem
    }
}

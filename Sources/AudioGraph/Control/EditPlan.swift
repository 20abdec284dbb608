// Control side. Checks a sequence of edits (an OSC bundle) against the graph as each earlier edit would
// leave it, before any of them applies: so a bundle with a bad message changes nothing.

/// The nodes an engine has, as a sequence of planned edits would change them; each planning call throws
/// what the real edit would throw for the same reasons. Nothing is applied.
///
/// It covers what can be known from names, kinds and parameter tables: the node an edit addresses exists
/// (or is made or freed earlier in the plan), a new node's kind, name and parameters, and every set's
/// parameter and value. What depends on more of the graph (cycles, the time-effect rules, channel
/// space, files, a full queue) is checked only when the edit applies.
public struct EditPlan: Sendable {
    private struct Node: Sendable {
        let kind: NodeKind
        let table: ParameterTable
    }

    private var nodes: [String: Node]
    private let inputChannelCount: Int
    private let sampleRate: Double

    fileprivate init(nodes: [String: (NodeKind, ParameterTable)], inputChannelCount: Int, sampleRate: Double) {
        self.nodes = nodes.mapValues { Node(kind: $0.0, table: $0.1) }
        self.inputChannelCount = inputChannelCount
        self.sampleRate = sampleRate
    }

    /// The kind of `name` as the plan stands; throws `.unknownNode` when it has none.
    public func kind(of name: String) throws(EngineError) -> NodeKind {
        guard let node = nodes[name] else { throw EngineError(.unknownNode, "no node named '\(name)'") }
        return node.kind
    }

    /// `Engine.attach`, planned.
    public mutating func attach(_ kind: NodeKind, name: String, parameters: [String: ParameterValue])
        throws(EngineError)
    {
        guard NodeName.isValid(name) else { throw NodeName.invalidNameError(name) }
        guard nodes[name] == nil else { throw EngineError(.duplicateName, "a node named '\(name)' already exists") }
        let (table, _) = try Engine.validatedNewNode(
            kind, name: name, parameters: parameters,
            inputChannelCount: inputChannelCount, sampleRate: sampleRate)
        nodes[name] = Node(kind: kind, table: table)
    }

    /// `Engine.detach(_: [String])`, planned.
    public mutating func detach(_ names: [String]) throws(EngineError) {
        var seen: Set<String> = []
        for name in names {
            _ = try kind(of: name)
            guard name != "main", name != "output" else {
                throw EngineError(.notAllowed, "'\(name)' is built in and cannot be removed; nothing was removed")
            }
            guard seen.insert(name).inserted else {
                throw EngineError(.duplicateName, "'\(name)' is named twice; nothing was removed")
            }
        }
        for name in names { nodes[name] = nil }
    }

    /// `Engine.set`, planned: the parameter exists, may be set now, and takes `value`.
    public func set(_ node: String, _ parameter: String, to value: ParameterValue) throws(EngineError) {
        guard let planned = nodes[node] else { throw EngineError(.unknownNode, "no node named '\(node)'") }
        _ = try Engine.validate(
            kind: planned.kind, node: node, parameter, value, table: planned.table, creating: false,
            sampleRate: sampleRate)
    }
}

extension Engine {
    /// A plan that starts from the graph as it is now.
    public func planEdits() -> EditPlan {
        control.withLock { core in
            EditPlan(
                nodes: core.state.graph.nodes.filter { !$0.value.isInternal }.mapValues { ($0.kind, $0.table) },
                inputChannelCount: core.state.configuration.inputChannelCount,
                sampleRate: core.state.configuration.sampleRate)
        }
    }
}

// Control side, the API. Attaching, detaching and connecting nodes.
// Each method takes the engine's lock and hands the work to `EngineCore` (EngineCore+Graph.swift).
import AudioDSP

extension Engine {
    /// Adds a node. `parameters` are validated first; on any error nothing is added.
    public func attach(_ kind: NodeKind, name: String, parameters: [String: ParameterValue] = [:])
        throws(EngineError)
    {
        try control.withLock { core throws(EngineError) in try core.attach(kind, name: name, parameters: parameters) }
        // An exposed effect, and a voice processor with its ports, change the host's ports.
        if parameters["insert"] != nil || kind == .voiceprocessor { notifyInsertObserver() }
    }

    /// Removes a node, its connections and its taps. `main` and `output` cannot be removed.
    public func detach(_ name: String) throws(EngineError) {
        if try control.withLock({ core throws(EngineError) in try core.detach(name) }) { notifyInsertObserver() }
    }

    /// Removes several nodes together, all or nothing: every name is checked first (it exists, it is
    /// not `main` or `output`, it is not named twice), and only then are they detached, in one batch.
    public func detach(_ names: [String]) throws(EngineError) {
        if try control.withLock({ core throws(EngineError) in try core.detach(names) }) { notifyInsertObserver() }
    }

    /// Connects `source` ("node" or "node:bus") to `destination`. Without a bus, a mixer destination
    /// takes its next free input bus and other nodes bus 0. An existing connection into that input bus
    /// is replaced; one output bus may feed any number of inputs (fan-out). Cycles are refused.
    public func connect(_ source: String, to destination: String) throws(EngineError) {
        try control.withLock { core throws(EngineError) in try core.connect(source, to: destination) }
    }

    /// Removes connections from `source` to `destination` (a bus on either side narrows the match).
    /// Throws `.notConnected` when nothing matched.
    public func disconnect(_ source: String, from destination: String) throws(EngineError) {
        try control.withLock { core throws(EngineError) in try core.disconnect(source, from: destination) }
    }

    /// Removes every connection into (`input: true`) or out of a node.
    public func disconnectAll(_ name: String, inputs: Bool) throws(EngineError) {
        try control.withLock { core throws(EngineError) in try core.disconnectAll(name, inputs: inputs) }
    }

    /// Every node, sorted by name.
    public func nodes() -> [NodeInfo] {
        control.withLock { core in core.nodes() }
    }

    /// Every connection, in the order they were made.
    public func connections() -> [Connection] {
        control.withLock { core in core.connections() }
    }

    /// Names of the nodes in active chains, in execution order (connections still fading out are not
    /// counted: this is the graph as the model stands).
    public func renderOrder() -> [String] {
        control.withLock { core in core.renderOrder() }
    }
}

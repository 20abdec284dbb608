// Control side. Attaching, detaching and connecting nodes.

/// A node as listed by `Engine.nodes()`.
public struct NodeInfo: Sendable, Equatable {
    public var name: String
    public var kind: NodeKind
    public var outputChannelCount: Int
    /// True when the node is part of an active chain (reaches the output or a tap).
    public var isActive: Bool
    public var parameters: [String: ParameterValue]
}

extension Engine {
    /// What `attach` checks besides the name: the kind may be made here, and every parameter exists and
    /// takes its value. Returns the node's parameter table and the validated values with their positions
    /// in it, in name order. Reads no state.
    static func validatedNewNode(_ kind: NodeKind, name: String, parameters: [String: ParameterValue],
                                 inputChannelCount: Int) throws(EngineError)
        -> (table: ParameterTable, validated: [(Int, ParameterValue)])
    {
        guard kind != .output else {
            throw EngineError(.notAllowed, "the engine has exactly one output node, named 'output'")
        }
        guard kind != .input || inputChannelCount > 0 else {
            throw EngineError(.notAllowed, "the engine has no capture channels, so an input node would hear "
                + "nothing; start it with a patch that has inputs (engine: inputs: N, or an input node)")
        }
        // An EQ's parameter table depends on its band count, so read that first.
        var table = kind.parameterTable
        if kind == .eq, let bands = parameters[ParameterKey.bands.name] {
            let count = try validate(kind: kind, node: name, ParameterKey.bands.name, bands, table: table, creating: true)
                .value.intValue ?? 1
            table = kind.parameterTable(bandCount: count)
        }
        var validated: [(Int, ParameterValue)] = []
        for (key, value) in parameters.sorted(by: { $0.key < $1.key }) {
            validated.append(try validate(kind: kind, node: name, key, value, table: table, creating: true))
        }
        return (table, validated)
    }

    /// Adds a node. `parameters` are validated first; on any error nothing is added.
    public func attach(_ kind: NodeKind, name: String, parameters: [String: ParameterValue] = [:])
        throws(EngineError)
    {
        try lock.withLock { _ throws(EngineError) in
            guard NodeName.isValid(name) else { throw NodeName.invalidNameError(name) }
            guard state.nodes[name] == nil else {
                throw EngineError(.duplicateName, "a node named '\(name)' already exists")
            }
            let (table, validated) = try Self.validatedNewNode(
                kind, name: name, parameters: parameters, inputChannelCount: state.configuration.inputChannelCount)
            let record = state.makeRecord(name: name, kind: kind)
            if kind == .eq { record.useTable(table) }
            state.nodes[name] = record
            do throws(EngineError) {
                // Initial values are applied before any program or command can reach the new state.
                try applyInitial(record, validated)
            } catch {
                try? setInsert(record, exposed: false)
                state.nodes[name] = nil
                state.nodesByID[record.id] = nil
                // Commands sent while applying (an audioplayer's schedule) may still name its state.
                bury(record)
                throw error
            }
            // An exposed effect renders on its own (the host listens to it).
            if state.inserts[name] != nil { republish() }
        }
        if parameters["insert"] != nil { notifyInsertObserver() }
    }

    /// Removes a node, its connections and its taps. `main` and `output` cannot be removed.
    public func detach(_ name: String) throws(EngineError) {
        let wasInsert = try lock.withLock { _ throws(EngineError) -> Bool in
            let node = try record(name)
            guard name != "main", name != "output" else {
                throw EngineError(.notAllowed, "'\(name)' is built in and cannot be removed")
            }
            // Timed commands still waiting for this node are dropped now: it may keep sounding while its
            // connections fade, but nothing scheduled for later may change it (or its voices) any more.
            var purges = node.commandTargets.map { TimedCommand(.purge($0)) }
            for voice in node.spatialVoices {
                purges.append(TimedCommand(.purge(UnsafeMutableRawPointer(voice.record.voice))))
            }
            for (key, record) in state.spatialVoices where key.environment == node.id {
                purges.append(TimedCommand(.purge(UnsafeMutableRawPointer(record.voice))))
            }
            try send(purges)
            // The node keeps sounding under a private key while its connections fade out; its name is
            // free again at once.
            let key = "\u{1}retiring.\(node.id)"
            renameRetiringEdges(name, to: key)
            for edge in state.connections where edge.source == name || edge.destination == name {
                try retireEdge(edge, rename: [name: key])
            }
            if isSilentSoFar {
                // Still in the installed program: released once the program without it is installed.
                state.buryAfterPublish.append(node)
                for item in node.items.values { release(item) }
            } else {
                state.dyingNodes[key] = Retiring(item: node, commandCount: sentCommandCount)
            }
            let taps = state.taps.values.filter { $0.node == name }
            for tap in taps {
                state.taps[tap.id] = nil
                state.pendingEvents.append(.tapRemoved(node: name, tapID: tap.id))
            }
            let meter = state.meters.removeValue(forKey: name)
            let wasInsert = state.inserts[name] != nil
            try? setInsert(node, exposed: false)
            state.nodes[name] = nil
            state.nodesByID[node.id] = nil
            republish()
            for tap in taps { bury(tap) }
            if let meter { bury(meter) }
            return wasInsert
        }
        if wasInsert { notifyInsertObserver() }
    }

    /// Removes several nodes together, all or nothing: every name is checked first (it exists, it is
    /// not `main` or `output`, it is not named twice), and only then are they detached, in one batch.
    public func detach(_ names: [String]) throws(EngineError) {
        try lock.withLock { _ throws(EngineError) in
            var seen: Set<String> = []
            for name in names {
                _ = try record(name)
                guard name != "main", name != "output" else {
                    throw EngineError(.notAllowed, "'\(name)' is built in and cannot be removed; nothing was removed")
                }
                guard seen.insert(name).inserted else {
                    throw EngineError(.duplicateName, "'\(name)' is named twice; nothing was removed")
                }
            }
            try batchLocked { () throws(EngineError) in
                for name in names { try detach(name) }
            }
        }
    }

    /// Connects `source` ("node" or "node:bus") to `destination`. Without a bus, a mixer destination
    /// takes its next free input bus and other nodes bus 0. An existing connection into that input bus
    /// is replaced; one output bus may feed any number of inputs (fan-out). Cycles are refused.
    public func connect(_ source: String, to destination: String) throws(EngineError) {
        let from = try BusPoint(parsing: source)
        let to = try BusPoint(parsing: destination)
        try lock.withLock { _ throws(EngineError) in
            let src = try record(from.node)
            let dst = try record(to.node)
            let sourceBus = from.bus ?? 0
            guard sourceBus < src.kind.outputBusCount else {
                throw EngineError(.invalidBus, src.kind.outputBusCount == 0
                    ? "'\(src.name)' (\(src.kind.rawValue)) has no output bus"
                    : "'\(src.name)' has no output bus \(sourceBus) (it has bus 0)")
            }
            let destinationBus: Int
            if let bus = to.bus {
                if let count = dst.kind.inputBusCount, bus >= count {
                    throw EngineError(.invalidBus, count == 0
                        ? "'\(dst.name)' (\(dst.kind.rawValue)) has no input bus"
                        : "'\(dst.name)' has no input bus \(bus) (it has bus 0)")
                }
                guard bus < 1024 else { throw EngineError(.invalidBus, "input bus \(bus) is above the limit 1023") }
                destinationBus = bus
            } else if dst.kind.inputBusCount == nil {
                destinationBus = nextAvailableInputBus(of: dst.name)
            } else {
                guard dst.kind.inputBusCount ?? 1 > 0 else {
                    throw EngineError(.invalidBus, "'\(dst.name)' (\(dst.kind.rawValue)) has no input bus")
                }
                destinationBus = 0
            }
            if let path = pathBetween(from: dst.name, to: src.name) {
                let cycle = (path + [dst.name]).joined(separator: " → ")
                throw EngineError(.cycle, "connecting \(src.name) → \(dst.name) would make a cycle: \(cycle)")
            }
            let edge = Connection(source: src.name, sourceBus: sourceBus, destination: dst.name,
                                  destinationBus: destinationBus)
            guard !state.connections.contains(edge) else { return }
            let candidate = state.connections.filter { !($0.destination == dst.name && $0.destinationBus == destinationBus) }
                + [edge]
            if let problem = timeDomainProblem(in: candidate) { throw EngineError(.notAllowed, problem) }
            for old in state.connections where old.destination == dst.name && old.destinationBus == destinationBus {
                try retireEdge(old)
            }
            try addEdge(edge)
            if dst.kind == .environment { try makeVoice(edge, source: src, environment: dst) }
            republish()
        }
    }

    /// Removes connections from `source` to `destination` (a bus on either side narrows the match).
    /// Throws `.notConnected` when nothing matched.
    public func disconnect(_ source: String, from destination: String) throws(EngineError) {
        let from = try BusPoint(parsing: source)
        let to = try BusPoint(parsing: destination)
        try lock.withLock { _ throws(EngineError) in
            _ = try record(from.node)
            _ = try record(to.node)
            let matching = state.connections.filter {
                $0.source == from.node && $0.destination == to.node
                    && (from.bus == nil || $0.sourceBus == from.bus) && (to.bus == nil || $0.destinationBus == to.bus)
            }
            guard !matching.isEmpty else {
                throw EngineError(.notConnected, "\(source) is not connected to \(destination)")
            }
            for edge in matching { try retireEdge(edge) }
            republish()
        }
    }

    /// Removes every connection into (`input: true`) or out of a node.
    public func disconnectAll(_ name: String, inputs: Bool) throws(EngineError) {
        try lock.withLock { _ throws(EngineError) in
            _ = try record(name)
            for edge in state.connections where inputs ? edge.destination == name : edge.source == name {
                try retireEdge(edge)
            }
            republish()
        }
    }

    /// Every node, sorted by name.
    public func nodes() -> [NodeInfo] {
        lock.withLock { _ in
            let active = GraphCompiler.activeNodes(
                nodes: state.nodes, connections: state.connections, tappedNodes: Set(state.taps.values.map(\.node)))
            return state.nodes.values.filter { !$0.isInternal }.sorted { $0.name < $1.name }.map {
                NodeInfo(name: $0.name, kind: $0.kind, outputChannelCount: $0.outputChannelCount,
                         isActive: active.contains($0.name), parameters: $0.valuesByName)
            }
        }
    }

    /// Every connection, in the order they were made.
    public func connections() -> [Connection] {
        lock.withLock { _ in
            state.connections.filter { state.nodes[$0.source]?.isInternal != true && state.nodes[$0.destination]?.isInternal != true }
        }
    }

    /// Names of the nodes in active chains, in execution order (connections still fading out are not
    /// counted: this is the graph as the model stands).
    public func renderOrder() -> [String] {
        lock.withLock { _ in
            let tapped = Set(state.taps.values.map(\.node))
            let active = GraphCompiler.activeNodes(nodes: state.nodes, connections: state.connections, tappedNodes: tapped)
            return GraphCompiler.executionOrder(nodes: state.nodes, connections: state.connections, active: active)
        }
    }

    // MARK: Helpers (lock held)

    func record(_ name: String) throws(EngineError) -> NodeRecord {
        guard let node = state.nodes[name] else {
            throw EngineError(.unknownNode, "no node named '\(name)'")
        }
        return node
    }

    /// AVAudioMixerNode.nextAvailableInputBus: the lowest input bus with no connection.
    func nextAvailableInputBus(of mixer: String) -> Int {
        let used = Set(state.connections.filter { $0.destination == mixer }.map(\.destinationBus))
        var bus = 0
        while used.contains(bus) { bus += 1 }
        return bus
    }

    /// A path of node names from `start` to `goal` following connections downstream, or nil.
    func pathBetween(from start: String, to goal: String) -> [String]? {
        if start == goal { return [start] }
        var previous: [String: String] = [:]
        var queue = [start]
        var seen: Set<String> = [start]
        while !queue.isEmpty {
            let current = queue.removeFirst()
            for c in state.connections where c.source == current && !seen.contains(c.destination) {
                seen.insert(c.destination)
                previous[c.destination] = current
                if c.destination == goal {
                    var path = [goal]
                    var node = goal
                    while let p = previous[node] { path.append(p); node = p }
                    return path.reversed()
                }
                queue.append(c.destination)
            }
        }
        return nil
    }
}

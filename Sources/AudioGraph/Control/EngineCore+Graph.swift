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

extension EngineCore {
    func attach(_ kind: NodeKind, name: String, parameters: [String: ParameterValue] = [:])
        throws(EngineError)
    {
        guard NodeName.isValid(name) else { throw NodeName.invalidNameError(name) }
        guard state.graph.nodes[name] == nil else {
            throw EngineError(.duplicateName, "a node named '\(name)' already exists")
        }
        let (table, validated) = try Engine.validatedNewNode(
            kind, name: name, parameters: parameters, inputChannelCount: state.configuration.inputChannelCount,
            sampleRate: state.configuration.sampleRate)
        let record = state.makeRecord(name: name, kind: kind)
        if kind == .eq { record.useTable(table) }
        state.graph.nodes[name] = record
        do throws(EngineError) {
            // Initial values are applied before any program or command can reach the new state.
            try applyInitial(record, validated)
        } catch {
            try? setInsert(record, exposed: false)
            state.graph.nodes[name] = nil
            state.graph.nodesByID[record.id] = nil
            // Commands sent while applying (an audioplayer's schedule) may still name its state.
            bury(record)
            throw error
        }
        // An exposed effect renders on its own (the host listens to it).
        if state.inserts.exposed[name] != nil { republish() }
    }

    /// Whether the node was an exposed insert (the front tells the insert observer).
    @discardableResult
    func detach(_ name: String) throws(EngineError) -> Bool {
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
        for (key, record) in state.spatial.voices where key.environment == node.id {
            purges.append(TimedCommand(.purge(UnsafeMutableRawPointer(record.voice))))
        }
        try send(purges)
        // The node keeps sounding under a private key while its connections fade out; its name is
        // free again at once.
        let key = "\u{1}retiring.\(node.id)"
        renameRetiringEdges(name, to: key)
        for edge in state.graph.connections where edge.source == name || edge.destination == name {
            try retireEdge(edge, rename: [name: key])
        }
        if isSilentSoFar {
            // Still in the installed program: released once the program without it is installed.
            state.publishing.buryAfterPublish.append(node)
            for item in node.items.values { release(item) }
        } else {
            state.graph.dyingNodes[key] = Retiring(item: node, commandCount: sentCommandCount)
        }
        let taps = state.monitors.taps.values.filter { $0.node == name }
        for tap in taps {
            state.monitors.taps[tap.id] = nil
            state.publishing.pendingEvents.append(.tapRemoved(node: name, tapID: tap.id))
        }
        let meter = state.monitors.meters.removeValue(forKey: name)
        let wasInsert = state.inserts.exposed[name] != nil
        try? setInsert(node, exposed: false)
        state.graph.nodes[name] = nil
        state.graph.nodesByID[node.id] = nil
        republish()
        for tap in taps { bury(tap) }
        if let meter { bury(meter) }
        return wasInsert
    }

    /// Whether any of them was an exposed insert.
    func detach(_ names: [String]) throws(EngineError) -> Bool {
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
        return try batch { () throws(EngineError) -> Bool in
            var wasInsert = false
            for name in names { wasInsert = try detach(name) || wasInsert }
            return wasInsert
        }
    }

    func connect(_ source: String, to destination: String) throws(EngineError) {
        let from = try BusPoint(parsing: source)
        let to = try BusPoint(parsing: destination)
        let src = try record(from.node)
        let dst = try record(to.node)
        let sourceBus = from.bus ?? 0
        guard sourceBus < src.kind.outputBusCount else {
            throw EngineError(
                .invalidBus,
                src.kind.outputBusCount == 0
                    ? "'\(src.name)' (\(src.kind.rawValue)) has no output bus"
                    : "'\(src.name)' has no output bus \(sourceBus) (it has \(Self.busList(src.kind.outputBusCount)))")
        }
        let destinationBus: Int
        if let bus = to.bus {
            if let count = dst.kind.inputBusCount, bus >= count {
                throw EngineError(
                    .invalidBus,
                    count == 0
                        ? "'\(dst.name)' (\(dst.kind.rawValue)) has no input bus"
                        : "'\(dst.name)' has no input bus \(bus) (it has \(Self.busList(count)))")
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
        let edge = Connection(
            source: src.name, sourceBus: sourceBus, destination: dst.name,
            destinationBus: destinationBus)
        guard !state.graph.connections.contains(edge) else { return }
        let candidate =
            state.graph.connections.filter { !($0.destination == dst.name && $0.destinationBus == destinationBus) }
            + [edge]
        if let problem = timeDomainProblem(in: candidate) { throw EngineError(.notAllowed, problem) }
        for old in state.graph.connections where old.destination == dst.name && old.destinationBus == destinationBus {
            try retireEdge(old)
        }
        try addEdge(edge)
        if dst.kind == .environment { try makeVoice(edge, source: src, environment: dst) }
        republish()
    }

    func disconnect(_ source: String, from destination: String) throws(EngineError) {
        let from = try BusPoint(parsing: source)
        let to = try BusPoint(parsing: destination)
        _ = try record(from.node)
        _ = try record(to.node)
        let matching = state.graph.connections.filter {
            $0.source == from.node && $0.destination == to.node
                && (from.bus == nil || $0.sourceBus == from.bus) && (to.bus == nil || $0.destinationBus == to.bus)
        }
        guard !matching.isEmpty else {
            throw EngineError(.notConnected, "\(source) is not connected to \(destination)")
        }
        for edge in matching { try retireEdge(edge) }
        republish()
    }

    func disconnectAll(_ name: String, inputs: Bool) throws(EngineError) {
        _ = try record(name)
        for edge in state.graph.connections where inputs ? edge.destination == name : edge.source == name {
            try retireEdge(edge)
        }
        republish()
    }

    /// What a program renders for besides the output, as the compiler sees it: tapped nodes and the
    /// nodes exposed as host ports (the host listens to them).
    var sinks: Set<String> { Set(state.monitors.taps.values.map(\.node)).union(state.inserts.exposed.keys) }

    func nodes() -> [NodeInfo] {
        let active = GraphCompiler.activeNodes(
            nodes: state.graph.nodes, connections: state.graph.connections, tappedNodes: sinks)
        return state.graph.nodes.values.filter { !$0.isInternal }.sorted { $0.name < $1.name }.map {
            NodeInfo(
                name: $0.name, kind: $0.kind, outputChannelCount: $0.outputChannelCount,
                isActive: active.contains($0.name), parameters: $0.valuesByName)
        }
    }

    func connections() -> [Connection] {
        state.graph.connections.filter {
            state.graph.nodes[$0.source]?.isInternal != true && state.graph.nodes[$0.destination]?.isInternal != true
        }
    }

    func renderOrder() -> [String] {
        let active = GraphCompiler.activeNodes(
            nodes: state.graph.nodes, connections: state.graph.connections, tappedNodes: sinks)
        return GraphCompiler.executionOrder(
            nodes: state.graph.nodes, connections: state.graph.connections, active: active)
    }

    // MARK: Helpers

    func record(_ name: String) throws(EngineError) -> NodeRecord {
        guard let node = state.graph.nodes[name] else {
            throw EngineError(.unknownNode, "no node named '\(name)'")
        }
        return node
    }

    /// AVAudioMixerNode.nextAvailableInputBus: the lowest input bus with no connection.
    func nextAvailableInputBus(of mixer: String) -> Int {
        let used = Set(state.graph.connections.filter { $0.destination == mixer }.map(\.destinationBus))
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
            for c in state.graph.connections where c.source == current && !seen.contains(c.destination) {
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

// The rules this subsystem applies; pure, so they live on the front.
extension Engine {
    /// What `attach` checks besides the name: the kind may be made here, and every parameter exists and
    /// takes its value. Returns the node's parameter table and the validated values with their positions
    /// in it, in name order. Reads no state.
    static func validatedNewNode(
        _ kind: NodeKind, name: String, parameters: [String: ParameterValue],
        inputChannelCount: Int, sampleRate: Double? = nil
    ) throws(EngineError)
        -> (table: ParameterTable, validated: [(Int, ParameterValue)])
    {
        guard kind.isCreatable else {
            throw EngineError(.notAllowed, "the engine has exactly one output node, named 'output'")
        }
        guard kind != .input || inputChannelCount > 0 else {
            throw EngineError(
                .notAllowed,
                "the engine has no capture channels, so an input node would hear "
                    + "nothing; start it with a patch that has inputs (engine: inputs: N, or an input node)")
        }
        // An EQ's parameter table depends on its band count, so read that first.
        var table = kind.parameterTable
        if kind == .eq, let bands = parameters[ParameterKey.bands.name] {
            let count =
                try validate(kind: kind, node: name, ParameterKey.bands.name, bands, table: table, creating: true)
                .value.intValue ?? 1
            table = kind.parameterTable(bandCount: count)
        }
        var validated: [(Int, ParameterValue)] = []
        for (key, value) in parameters.sorted(by: { $0.key < $1.key }) {
            validated.append(
                try validate(kind: kind, node: name, key, value, table: table, creating: true, sampleRate: sampleRate))
        }
        return (table, validated)
    }
}

extension EngineCore {
    /// "bus 0", "buses 0 and 1", "buses 0…3".
    static func busList(_ count: Int) -> String {
        switch count {
        case ...1: return "bus 0"
        case 2: return "buses 0 and 1"
        default: return "buses 0…\(count - 1)"
        }
    }
}

// Control side. Turns the node/connection model into a flat RenderProgram: active chains only,
// in dependency order, with every bus preallocated.
import AudioDSP

/// Compiles a graph snapshot into a `RenderProgram`.
///
/// Active chains follow AVAudioEngine: a node renders only if a path leads from it to the output node,
/// to a tapped node or to an effect exposed as host ports (an insert: the host listens to it). The
/// order is a depth-first post-order from those sinks over input edges, so
/// every node runs after all of its sources; fan-out sources run once and are read by each consumer.
enum GraphCompiler {
    struct Input {
        /// Every node to consider, keyed by the name connections use (retiring nodes under private keys).
        var nodes: [String: NodeRecord]
        /// Live connections plus those still fading out.
        var connections: [Connection]
        /// The fade of every connection into a mixer or the output.
        var fades: [Connection: EdgeFade]
        var taps: [TapRecord]
        var meters: [MeterRecord]
        /// Effects exposed as host ports, by node name: they render even when nothing in the graph
        /// listens (the host does).
        var inserts: [String: HostInsert] = [:]
        /// The voice of every connection into an environment.
        var voices: [VoiceKey: UnsafeMutablePointer<SpatialVoice>] = [:]
        var maxBlockFrames: Int
        var generation: Int
    }

    /// Names of the nodes that reach a sink (the output node, a tapped node or an insert).
    static func activeNodes(nodes: [String: NodeRecord], connections: [Connection], tappedNodes: Set<String>)
        -> Set<String>
    {
        var active: Set<String> = []
        var stack = Array(tappedNodes) + nodes.values.filter { $0.kind == .output }.map(\.name)
        while let name = stack.popLast() {
            guard nodes[name] != nil, active.insert(name).inserted else { continue }
            for c in connections where c.destination == name { stack.append(c.source) }
        }
        return active
    }

    /// A node to run, or a time effect with the chain that feeds it (run on the effect's clock).
    indirect enum Entry {
        case node(String)
        case timeEffect(String, chain: [Entry])

        var names: [String] {
            switch self {
            case .node(let name): return [name]
            case .timeEffect(let name, let chain): return chain.flatMap(\.names) + [name]
            }
        }
    }

    /// Active nodes in execution order (sources before consumers), ties broken by name for determinism.
    /// The sources of a time effect (all of its ancestors) form its chain: they run from its step only.
    static func plan(nodes: [String: NodeRecord], connections: [Connection], active: Set<String>,
                     inserts: Set<String> = []) -> [Entry] {
        /// A time effect exposed as a JACK insert runs at rate 1 on the engine's clock, like any effect.
        func clocksItsSources(_ name: String) -> Bool { nodes[name]?.kind.isTimeEffect == true && !inserts.contains(name) }
        func sources(of name: String) -> [String] {
            connections.filter { $0.destination == name }.sorted { $0.destinationBus < $1.destinationBus }
                .map(\.source).filter { active.contains($0) }
        }
        // Ancestors of active time effects never start a walk of their own (a tapped one would otherwise
        // run at the engine's clock before the effect's chain could claim it).
        var chained: Set<String> = []
        for name in active where clocksItsSources(name) {
            var stack = sources(of: name)
            while let next = stack.popLast() {
                if chained.insert(next).inserted { stack += sources(of: next) }
            }
        }
        var visited: Set<String> = []
        func visit(_ name: String, into list: inout [Entry]) {
            guard visited.insert(name).inserted else { return }
            if clocksItsSources(name) {
                var chain: [Entry] = []
                for s in sources(of: name) { visit(s, into: &chain) }
                list.append(.timeEffect(name, chain: chain))
            } else {
                for s in sources(of: name) { visit(s, into: &list) }
                list.append(.node(name))
            }
        }
        var plan: [Entry] = []
        for name in active.sorted() where !chained.contains(name) { visit(name, into: &plan) }
        for name in active.sorted() { visit(name, into: &plan) }
        return plan
    }

    /// Active nodes in execution order, flattened (chains before their time effect).
    static func executionOrder(nodes: [String: NodeRecord], connections: [Connection], active: Set<String>)
        -> [String]
    {
        plan(nodes: nodes, connections: connections, active: active).flatMap(\.names)
    }

    static func compile(_ input: Input) -> RenderProgram {
        let tapped = Set(input.taps.map(\.node)).union(input.inserts.keys)
        let active = activeNodes(nodes: input.nodes, connections: input.connections, tappedNodes: tapped)
        let plan = plan(nodes: input.nodes, connections: input.connections, active: active,
                        inserts: Set(input.inserts.keys))
        let order = plan.flatMap(\.names)
        let stride = input.maxBlockFrames

        // One bus per active node (the output node's bus holds what goes to the host); effects also get
        // an input bus their sources are summed into.
        var busOffset: [String: Int] = [:]
        var inputBusOffset: [String: Int] = [:]
        var stageBusOffset: [String: Int] = [:]
        var total = 0
        for name in order {
            guard let node = input.nodes[name] else { continue }
            busOffset[name] = total
            total += node.outputChannelCount * stride
            if node.kind.isEffect || node.rateStage != nil {
                inputBusOffset[name] = total
                total += node.outputChannelCount * stride
            }
            if node.rateStage != nil {
                // An audioplayer's own player renders here; its time-pitch stage writes the node's bus.
                stageBusOffset[name] = total
                total += node.outputChannelCount * stride
            }
        }
        let slab = UnsafeMutableBufferPointer<Float>.allocate(capacity: max(1, total))
        slab.initialize(repeating: 0)
        func bus(_ name: String) -> BusRef? {
            guard let offset = busOffset[name], let node = input.nodes[name] else { return nil }
            return BusRef(data: slab.baseAddress! + offset, channelCount: node.outputChannelCount, stride: stride)
        }

        // Mixer (and output) input tables, all in one allocation.
        var mixerInputCount = 0
        for name in order {
            guard let kind = input.nodes[name]?.kind else { continue }
            if kind == .mixer || kind == .output || kind.isEffect {
                mixerInputCount += input.connections.filter { $0.destination == name && active.contains($0.source) }.count
            }
            if input.nodes[name]?.rateStage != nil { mixerInputCount += 1 }
        }
        var environmentInputCount = 0
        for name in order where input.nodes[name]?.kind == .environment {
            environmentInputCount += input.connections.filter { $0.destination == name && active.contains($0.source) }.count
        }
        let environmentTables = UnsafeMutableBufferPointer<EnvironmentInput>.allocate(capacity: max(1, environmentInputCount))
        var environmentUsed = 0
        /// The voices feeding environment `name`, from its live and fading connections.
        func environmentTable(for name: String, id: Int32) -> UnsafeBufferPointer<EnvironmentInput> {
            let edges = input.connections.filter { $0.destination == name && active.contains($0.source) }
                .sorted { ($0.destinationBus, $0.source) < ($1.destinationBus, $1.source) }
            let start = environmentUsed
            for edge in edges {
                guard let source = bus(edge.source), let sourceNode = input.nodes[edge.source],
                      let fade = input.fades[edge],
                      let voice = input.voices[VoiceKey(source: sourceNode.id, sourceBus: edge.sourceBus, environment: id,
                                                        bus: edge.destinationBus)] else { continue }
                (environmentTables.baseAddress! + environmentUsed).initialize(
                    to: EnvironmentInput(source: source, mixing: sourceNode.mixing, fade: fade.ramp, voice: voice))
                environmentUsed += 1
            }
            return UnsafeBufferPointer(start: environmentTables.baseAddress! + start, count: environmentUsed - start)
        }
        let tables = UnsafeMutableBufferPointer<MixerInput>.allocate(capacity: max(1, mixerInputCount))
        var tableUsed = 0
        /// `unityMixing`: the output node ignores its sources' volume/pan (they apply on mixer inputs only)
        /// and passes them through with its own, always-unity, mixing state.
        func inputTable(for name: String, unityMixing: UnsafeMutablePointer<MixingState>? = nil)
            -> UnsafeBufferPointer<MixerInput>
        {
            let edges = input.connections.filter { $0.destination == name && active.contains($0.source) }
                .sorted { ($0.destinationBus, $0.source) < ($1.destinationBus, $1.source) }
            let start = tableUsed
            for edge in edges {
                guard let source = bus(edge.source), let sourceNode = input.nodes[edge.source],
                      let fade = input.fades[edge] else { continue }
                (tables.baseAddress! + tableUsed).initialize(
                    to: MixerInput(source: source, mixing: unityMixing ?? sourceNode.mixing, fade: fade.ramp))
                tableUsed += 1
            }
            return UnsafeBufferPointer(start: tables.baseAddress! + start, count: tableUsed - start)
        }

        /// The steps of one node (without taps and meters). `inChain`: the node runs on a time effect's
        /// clock, where host insert buffers cannot be used (their frames belong to the host's period).
        func nodeSteps(_ name: String, inChain: Bool) -> [RenderStep] {
            guard let node = input.nodes[name], let b = bus(name) else { return [] }
            switch node.kind {
            case .player, .audioplayer:
                guard let player = node.player else { return [] }
                if let stage = node.rateStage, let effect = node.effect, let inputOffset = inputBusOffset[name],
                   let stageOffset = stageBusOffset[name] {
                    let playerBus = BusRef(data: slab.baseAddress! + stageOffset, channelCount: node.outputChannelCount, stride: stride)
                    let inputBus = BusRef(data: slab.baseAddress! + inputOffset, channelCount: node.outputChannelCount, stride: stride)
                    let start = tableUsed
                    (tables.baseAddress! + tableUsed).initialize(
                        to: MixerInput(source: playerBus, mixing: stage.unityMixing, fade: stage.unityFade))
                    tableUsed += 1
                    let table = UnsafeBufferPointer(start: tables.baseAddress! + start, count: 1)
                    // The player's volume and pan apply downstream, on the node's bus; its own steps run
                    // at unity on the stage's clock.
                    return [.timeEffect(effect, stage.unityMixer, table, inputBus, b, stage.fifo, 1),
                            .player(player, stage.unityMixing, playerBus)]
                }
                return [.player(player, node.mixing, b)]
            case .input:
                return [.input(node.mixing, b)]
            case .environment:
                guard let environment = node.environment else { return [] }
                return [.environment(environment.state, environmentTable(for: name, id: node.id), b)]
            case .mixer:
                guard let mixer = node.mixer else { return [] }
                return [.mixer(mixer, node.mixing, inputTable(for: name), b)]
            case .output:
                guard let mixer = node.mixer else { return [] }
                return [.output(mixer, inputTable(for: name, unityMixing: node.mixing), b)]
            case .reverb, .delay, .distortion, .eq, .timepitch, .varispeed:
                guard let unity = node.mixer, let effect = node.effect, let inputOffset = inputBusOffset[name] else { return [] }
                let inputBus = BusRef(data: slab.baseAddress! + inputOffset, channelCount: node.outputChannelCount, stride: stride)
                let slot = inChain ? InsertSlot.none
                    : input.inserts[name].map { InsertSlot(base: $0.base, channelCount: $0.channelCount) } ?? .none
                return [.effect(effect, unity, inputTable(for: name, unityMixing: node.mixing), inputBus, b, slot)]
            }
        }

        func observerSteps(_ name: String) -> [RenderStep] {
            guard let b = bus(name) else { return [] }
            return input.taps.filter { $0.node == name }.map { .tap($0.state, b) }
                + input.meters.filter { $0.node == name }.map { .meter($0.state, b) }
        }

        func emitSteps(_ entries: [Entry], inChain: Bool) -> [RenderStep] {
            var steps: [RenderStep] = []
            for entry in entries {
                switch entry {
                case .node(let name):
                    steps += nodeSteps(name, inChain: inChain) + observerSteps(name)
                case .timeEffect(let name, let chainEntries):
                    let chain = emitSteps(chainEntries, inChain: true)
                    guard let node = input.nodes[name], let b = bus(name), let unity = node.mixer, let effect = node.effect,
                          let fifo = node.timeFIFO, let inputOffset = inputBusOffset[name] else {
                        steps += chain
                        continue
                    }
                    let inputBus = BusRef(data: slab.baseAddress! + inputOffset, channelCount: node.outputChannelCount,
                                          stride: stride)
                    steps.append(.timeEffect(effect, unity, inputTable(for: name, unityMixing: node.mixing), inputBus, b,
                                             fifo, chain.count))
                    steps += chain + observerSteps(name)
                }
            }
            return steps
        }

        let steps = emitSteps(plan, inChain: false)
        return RenderProgram(
            generation: input.generation, steps: steps, busSlab: slab, mixerInputs: tables,
            environmentInputs: environmentTables, activeNodeNames: order)
    }
}

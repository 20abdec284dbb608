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

    /// Active nodes in execution order (sources before consumers), ties broken by name for determinism.
    static func executionOrder(nodes: [String: NodeRecord], connections: [Connection], active: Set<String>)
        -> [String]
    {
        var order: [String] = []
        var visited: Set<String> = []
        func visit(_ name: String) {
            guard visited.insert(name).inserted else { return }
            let sources = connections.filter { $0.destination == name }
                .sorted { $0.destinationBus < $1.destinationBus }.map(\.source)
            for s in sources where active.contains(s) { visit(s) }
            order.append(name)
        }
        for name in active.sorted() { visit(name) }
        return order
    }

    static func compile(_ input: Input) -> RenderProgram {
        let tapped = Set(input.taps.map(\.node)).union(input.inserts.keys)
        let active = activeNodes(nodes: input.nodes, connections: input.connections, tappedNodes: tapped)
        let order = executionOrder(nodes: input.nodes, connections: input.connections, active: active)
        let stride = input.maxBlockFrames

        // One bus per active node (the output node's bus holds what goes to the host); effects also get
        // an input bus their sources are summed into.
        var busOffset: [String: Int] = [:]
        var inputBusOffset: [String: Int] = [:]
        var total = 0
        for name in order {
            guard let node = input.nodes[name] else { continue }
            busOffset[name] = total
            total += node.outputChannelCount * stride
            if node.kind.isEffect {
                inputBusOffset[name] = total
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
        let summing: Set<NodeKind> = [.mixer, .output, .reverb, .delay, .distortion, .eq]
        var mixerInputCount = 0
        for name in order where summing.contains(input.nodes[name]?.kind ?? .player) {
            mixerInputCount += input.connections.filter { $0.destination == name && active.contains($0.source) }.count
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

        var steps: [RenderStep] = []
        for name in order {
            guard let node = input.nodes[name] else { continue }
            switch node.kind {
            case .player, .audioplayer:
                if let b = bus(name), let player = node.player { steps.append(.player(player, node.mixing, b)) }
            case .input:
                if let b = bus(name) { steps.append(.input(node.mixing, b)) }
            case .mixer:
                guard let b = bus(name), let mixer = node.mixer else { continue }
                steps.append(.mixer(mixer, node.mixing, inputTable(for: name), b))
            case .output:
                guard let b = bus(name), let mixer = node.mixer else { continue }
                steps.append(.output(mixer, inputTable(for: name, unityMixing: node.mixing), b))
            case .reverb, .delay, .distortion, .eq:
                guard let b = bus(name), let unity = node.mixer, let effect = node.effect,
                      let inputOffset = inputBusOffset[name] else { continue }
                let inputBus = BusRef(data: slab.baseAddress! + inputOffset, channelCount: node.outputChannelCount, stride: stride)
                let slot = input.inserts[name].map { InsertSlot(base: $0.base, channelCount: $0.channelCount) } ?? .none
                steps.append(.effect(effect, unity, inputTable(for: name, unityMixing: node.mixing), inputBus, b, slot))
            }
            for tap in input.taps where tap.node == name {
                if let b = bus(name) { steps.append(.tap(tap.state, b)) }
            }
            for meter in input.meters where meter.node == name {
                if let b = bus(name) { steps.append(.meter(meter.state, b)) }
            }
        }
        return RenderProgram(
            generation: input.generation, steps: steps, busSlab: slab, mixerInputs: tables, activeNodeNames: order)
    }
}

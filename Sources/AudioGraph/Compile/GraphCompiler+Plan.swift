// Control side. The compile's first phases: which nodes run (those that reach a sink) and in what
// order (sources first; a time effect's ancestors as its chain, on its clock).

extension GraphCompiler {
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
    static func plan(
        nodes: [String: NodeRecord], connections: [Connection], active: Set<String>,
        inserts: Set<String> = []
    ) -> [Entry] {
        /// A time effect exposed as a JACK insert runs at rate 1 on the engine's clock, like any effect.
        func clocksItsSources(_ name: String) -> Bool {
            nodes[name]?.kind.isTimeEffect == true && !inserts.contains(name)
        }
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
}

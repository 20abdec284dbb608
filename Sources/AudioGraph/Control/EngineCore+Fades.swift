// Control side. Connections fade in when made and fade out before they leave the program, so graph
// edits while audio runs never click.

extension EngineCore {
    /// Fade length for connections, in frames (10 ms).
    var fadeFrames: Int { max(1, Int((0.01 * state.configuration.sampleRate).rounded())) }

    /// Before the first frame is rendered nothing can click, so edits take effect without fades (a patch
    /// loads exactly as written).
    var isSilentSoFar: Bool { !renderEngine.hasStarted }

    /// Adds `edge` to the model with a fade rising from silence (or revives it if it is fading out).
    func addEdge(_ edge: Connection, risingOver frames: Int? = nil) throws(EngineError) {
        if let index = state.graph.retiringEdges.firstIndex(where: { $0.item.connection == edge }) {
            let fade = state.graph.retiringEdges[index].item.fade
            try send([TimedCommand(.setFade(fade.ramp, target: 1, rampFrames: Int32(fadeFrames)))])
            state.graph.retiringEdges.remove(at: index)
            state.graph.fades[edge] = fade
        } else {
            state.graph.fades[edge] = EdgeFade(risingOver: isSilentSoFar ? 0 : frames ?? fadeFrames)
        }
        state.graph.connections.append(edge)
    }

    /// Starts fading `edge` out; it leaves the program once silent. `rename` maps retiring node names.
    func retireEdge(_ edge: Connection, rename: [String: String] = [:]) throws(EngineError) {
        state.graph.connections.removeAll { $0 == edge }
        guard let fade = state.graph.fades.removeValue(forKey: edge) else { return }
        if isSilentSoFar {
            // Still in the installed program: released once the program without it is installed.
            state.publishing.buryAfterPublish.append(fade)
            return
        }
        try send([TimedCommand(.setFade(fade.ramp, target: 0, rampFrames: Int32(fadeFrames)))])
        var renamed = edge
        renamed.source = rename[edge.source] ?? edge.source
        renamed.destination = rename[edge.destination] ?? edge.destination
        state.graph.retiringEdges.append(Retiring(item: (renamed, fade), commandCount: sentCommandCount))
    }

    /// Renames connections already fading out that touch a node that is now retiring.
    func renameRetiringEdges(_ from: String, to key: String) {
        for i in state.graph.retiringEdges.indices {
            if state.graph.retiringEdges[i].item.connection.source == from {
                state.graph.retiringEdges[i].item.connection.source = key
            }
            if state.graph.retiringEdges[i].item.connection.destination == from {
                state.graph.retiringEdges[i].item.connection.destination = key
            }
        }
    }

    /// Called from `poll()`. Removes connections and nodes whose fade-out has completed.
    func finishRetirements() {
        let consumed = renderEngine.commands.consumedCount
        let now = renderEngine.renderedFrames
        // Silent once the render thread took the fade command and a fade plus two sub-blocks have passed.
        let margin = fadeFrames + 2 * state.configuration.blockFrames
        var changed = false
        for i in state.graph.retiringEdges.indices where state.graph.retiringEdges[i].dueFrame == nil {
            if consumed >= state.graph.retiringEdges[i].commandCount {
                state.graph.retiringEdges[i].dueFrame = now + margin
            }
        }
        for key in state.graph.dyingNodes.keys where state.graph.dyingNodes[key]?.dueFrame == nil {
            if consumed >= state.graph.dyingNodes[key]!.commandCount {
                state.graph.dyingNodes[key]!.dueFrame = now + margin
            }
        }
        let doneEdges = state.graph.retiringEdges.filter { ($0.dueFrame ?? .max) <= now }
        if !doneEdges.isEmpty {
            state.graph.retiringEdges.removeAll { ($0.dueFrame ?? .max) <= now }
            changed = true
        }
        var doneEdgesOfNodes: [EdgeFade] = []
        let doneNodes = state.graph.dyingNodes.filter { ($0.value.dueFrame ?? .max) <= now }
        for (key, _) in doneNodes {
            state.graph.dyingNodes[key] = nil
            // A node leaves with every connection still touching it.
            let touching = { (r: Retiring<(connection: Connection, fade: EdgeFade)>) in
                r.item.connection.source == key || r.item.connection.destination == key
            }
            doneEdgesOfNodes += state.graph.retiringEdges.filter(touching).map(\.item.fade)
            state.graph.retiringEdges.removeAll(where: touching)
            changed = true
        }
        guard changed else { return }
        republish()
        for edge in doneEdges { bury(edge.item.fade) }
        for fade in doneEdgesOfNodes { bury(fade) }
        for (_, node) in doneNodes {
            bury(node.item)
            for item in node.item.items.values { release(item) }
        }
    }
}

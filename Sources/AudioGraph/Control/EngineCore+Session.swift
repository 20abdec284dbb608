// Control side. The players an interruption paused, and resuming them.

/// The audio session's part of the control state.
struct SessionModel {
    var isInterrupted = false
    /// Players and audioplayers an interruption paused: by name, with the node's id (ids are never
    /// reused), so that a node freed meanwhile and another made under its name (a mixer, say) is not
    /// resumed.
    var pausedByInterruption: [String: Int32] = [:]
    /// Other audio plays: nodes marked `secondary` are faded out.
    var secondaryAudioSilenced = false

    /// How long secondary audio takes to fade out and back in.
    static let secondaryFadeSeconds = 0.3
}

extension EngineCore {
    func beginInterruption() -> [String] {
        state.session.isInterrupted = true
        var paused: [String] = []
        for (name, record) in state.graph.nodes.sorted(by: { $0.key < $1.key })
        where (record.kind == .player || record.kind == .audioplayer) && record[.playing].boolValue == true {
            // A player that cannot be paused (freed meanwhile) is simply not remembered.
            if (try? pause(name)) != nil {
                paused.append(name)
                state.session.pausedByInterruption[name] = record.id
            }
        }
        return paused
    }

    func endInterruption(shouldResume: Bool) -> [String] {
        defer {
            state.session.isInterrupted = false
            state.session.pausedByInterruption = [:]
        }
        guard shouldResume else { return [] }
        var resumed: [String] = []
        for name in state.session.pausedByInterruption.keys.sorted() where resumesAfterInterruption(name) {
            guard state.graph.nodes[name]?[.playing].boolValue != true else { continue }
            if (try? play(name)) != nil { resumed.append(name) }
        }
        return resumed
    }

    /// Whether the end of the interruption under way (with shouldResume) plays `name` again: a node it
    /// paused (that node, not one made since under its name, which may be of another kind) whose
    /// `resumeAfterInterruption` is true and that no request played, paused or stopped since.
    func resumesAfterInterruption(_ name: String) -> Bool {
        guard let id = state.session.pausedByInterruption[name], let record = state.graph.nodes[name], record.id == id
        else { return false }
        return record[.resumeAfterInterruption].boolValue != false
    }

    /// A request played, paused or stopped `name`: it is the request's from now on, and the end of the
    /// interruption leaves it as it is.
    func releaseFromInterruption(_ name: String) {
        state.session.pausedByInterruption[name] = nil
    }

    /// `nodes()` as the interruption under way leaves them when it ends with shouldResume: the players
    /// and audioplayers it will play again read `playing: true` (everything else, their position
    /// included, is as it stands). Without an interruption, `nodes()`.
    func nodesAsResumed() -> [NodeInfo] {
        var nodes = self.nodes()
        guard state.session.isInterrupted else { return nodes }
        for index in nodes.indices where resumesAfterInterruption(nodes[index].name) {
            nodes[index].parameters[ParameterKey.playing.name] = .bool(true)
        }
        return nodes
    }
}

extension EngineCore {
    /// Fades every node marked `secondary` out (`silenced`) or back to its volume. Returns their names.
    func silenceSecondaryAudio(_ silenced: Bool) throws(EngineError) -> [String] {
        state.session.secondaryAudioSilenced = silenced
        let fade = Int32(clamping: Int(SessionModel.secondaryFadeSeconds * configuration.sampleRate))
        var changed: [String] = []
        for (name, node) in state.graph.nodes.sorted(by: { $0.key < $1.key })
        where node.value(.secondary)?.boolValue == true && node.secondarySilenced != silenced {
            node.secondarySilenced = silenced
            let t = node.mixingTargets
            try send(
                TimedCommand(.setMixing(node.mixing, left: t.left, right: t.right, mono: t.mono, rampFrames: fade)))
            changed.append(name)
        }
        return changed
    }
}

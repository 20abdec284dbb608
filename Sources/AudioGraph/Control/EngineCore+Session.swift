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
        for (name, id) in state.session.pausedByInterruption.sorted(by: { $0.key < $1.key }) {
            guard let record = state.graph.nodes[name], record.id == id,
                record[.resumeAfterInterruption].boolValue != false, record[.playing].boolValue != true
            else { continue }
            if (try? play(name)) != nil { resumed.append(name) }
        }
        return resumed
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

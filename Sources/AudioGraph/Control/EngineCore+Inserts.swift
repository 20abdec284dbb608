// Control side. Effects exposed as host ports (JACK inserts): channel allocation, the layout the host
// follows, and its change notifications.
extension EngineCore {
    /// The layout now.
    var currentInsertLayout: HostInsertLayout {
        HostInsertLayout(
            version: state.inserts.layoutVersion,
            inserts: state.inserts.exposed.values.sorted { $0.base < $1.base })
    }

    /// Exposes or hides `node` (an effect, or a voice processor's ports); the caller republishes. Throws
    /// when the insert channel space is full.
    func setInsert(_ node: NodeRecord, exposed: Bool) throws(EngineError) {
        if !exposed {
            if state.inserts.exposed.removeValue(forKey: node.name) != nil { state.inserts.layoutVersion += 1 }
            return
        }
        guard state.inserts.exposed[node.name] == nil else { return }
        var ports = HostInsert.Ports.effect
        var count = node.outputChannelCount
        if let voice = node.voice {
            ports = .voice(micChannels: voice.pointee.micChannels, referenceChannels: voice.pointee.referenceChannels)
            count = voice.pointee.micChannels + voice.pointee.referenceChannels
        }
        guard let base = freeInsertBase(count: count) else {
            throw EngineError(
                .notAllowed,
                "cannot expose '\(node.name)': all \(HostInsert.channelCapacity) "
                    + "insert channels are in use")
        }
        state.inserts.exposed[node.name] = HostInsert(
            node: node.name, channelCount: count, base: base,
            latencyFrames: node.voice?.pointee.latencyFrames ?? node.effect?.latencyFrames ?? 0, ports: ports)
        state.inserts.layoutVersion += 1
    }

    /// The lowest base with `count` free channels after it.
    private func freeInsertBase(count: Int) -> Int? {
        let used = state.inserts.exposed.values.sorted { $0.base < $1.base }
        var candidate = 0
        for insert in used {
            if candidate + count <= insert.base { return candidate }
            candidate = max(candidate, insert.base + insert.channelCount)
        }
        return candidate + count <= HostInsert.channelCapacity ? candidate : nil
    }
}

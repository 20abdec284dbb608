// Control side. Player transport and the buffer library.
import AudioDSP

extension EngineCore {
    func play(_ node: String, atSampleTime time: Int64? = nil) throws(EngineError) {
        if let audio = state.graph.nodes[node]?.audio {
            return try audioPlay(try record(node), audio, time: time ?? -1)
        }
        let player = try playerState(node)
        try send([TimedCommand(time: time ?? -1, .playerPlay(player.1))])
        player.0[.playing] = .bool(true)
    }

    func pause(_ node: String, atSampleTime time: Int64? = nil) throws(EngineError) {
        if let audio = state.graph.nodes[node]?.audio {
            return try audioPause(try record(node), audio, time: time ?? -1)
        }
        let player = try playerState(node)
        try send([TimedCommand(time: time ?? -1, .playerPause(player.1))])
        player.0[.playing] = .bool(false)
    }

    func stop(_ node: String, atSampleTime time: Int64? = nil) throws(EngineError) {
        if let audio = state.graph.nodes[node]?.audio {
            return try audioStop(try record(node), audio, time: time ?? -1)
        }
        let player = try playerState(node)
        try send([TimedCommand(time: time ?? -1, .playerStop(player.1))])
        player.0[.playing] = .bool(false)
        // Stop unschedules everything; the parameter material is queued again so `play` replays it.
        requeueMaterial(player.0)
    }

    func addBuffer(_ buffer: SampleBuffer) throws(EngineError) {
        guard NodeName.isValidBufferName(buffer.name) else {
            throw NodeName.invalidNameError(buffer.name, what: "buffer name")
        }
        guard abs(buffer.sampleRate - state.configuration.sampleRate) < 1e-6 else {
            throw EngineError(
                .bufferMismatch,
                "buffer '\(buffer.name)' is at \(buffer.sampleRate) Hz but the engine runs at \(state.configuration.sampleRate) Hz"
            )
        }
        let old = state.players.buffers[buffer.name]
        state.players.buffers[buffer.name] = buffer
        if let old {
            for node in state.graph.nodes.values where node.materialBuffer === old {
                try setMaterial(node, buffer)
            }
        }
    }

    func removeBuffer(_ name: String) throws(EngineError) {
        guard let buffer = state.players.buffers[name] else {
            throw EngineError(.unknownBuffer, "no buffer named '\(name)'")
        }
        for node in state.graph.nodes.values where node.items.values.contains(where: { $0.buffer === buffer }) {
            // Players using it stop (which unschedules their items) and lose it as material.
            if let player = node.player { try send([TimedCommand(.playerStop(player))]) }
            if node.materialBuffer === buffer {
                node.materialBuffer = nil
                node[.buffer] = .string("")
            }
            node[.playing] = .bool(false)
            requeueMaterial(node)
        }
        state.players.buffers[name] = nil
        bury(buffer)
    }

    func buffers() -> [SampleBuffer] {
        state.players.buffers.values.sorted { $0.name < $1.name }
    }

    private func playerState(_ name: String) throws(EngineError) -> (NodeRecord, UnsafeMutablePointer<PlayerState>) {
        let node = try record(name)
        guard let player = node.player else {
            throw EngineError(.notAllowed, "'\(name)' is a \(node.kind.rawValue), not a player")
        }
        return (node, player)
    }
}

// Control side. Player transport and the buffer library.
import AudioDSP

extension Engine {
    /// Starts (or resumes) a player, now or at an engine sample time (sample-accurate).
    public func play(_ node: String, atSampleTime time: Int64? = nil) throws(EngineError) {
        try lock.withLock { _ throws(EngineError) in
            if let audio = state.nodes[node]?.audio {
                return try audioPlay(try record(node), audio, time: time ?? -1)
            }
            let player = try playerState(node)
            try send([TimedCommand(time: time ?? -1, .playerPlay(player.1))])
            player.0[.playing] = .bool(true)
        }
    }

    /// Pauses a player, keeping its position, now or at an engine sample time.
    public func pause(_ node: String, atSampleTime time: Int64? = nil) throws(EngineError) {
        try lock.withLock { _ throws(EngineError) in
            if let audio = state.nodes[node]?.audio {
                return try audioPause(try record(node), audio, time: time ?? -1)
            }
            let player = try playerState(node)
            try send([TimedCommand(time: time ?? -1, .playerPause(player.1))])
            player.0[.playing] = .bool(false)
        }
    }

    /// Stops a player: unschedules everything and resets its timeline (its parameter material, if any,
    /// is queued again so `play` starts it from the beginning), now or at an engine sample time. An
    /// audioplayer keeps its position instead (AVAudioPlayer.stop).
    public func stop(_ node: String, atSampleTime time: Int64? = nil) throws(EngineError) {
        try lock.withLock { _ throws(EngineError) in
            if let audio = state.nodes[node]?.audio {
                return try audioStop(try record(node), audio, time: time ?? -1)
            }
            let player = try playerState(node)
            try send([TimedCommand(time: time ?? -1, .playerStop(player.1))])
            player.0[.playing] = .bool(false)
            // Stop unschedules everything; the parameter material is queued again so `play` replays it.
            requeueMaterial(player.0)
        }
    }

    /// Adds `buffer` to the library. Its rate must equal the engine rate (convert at load). A buffer with
    /// the same name is replaced; players using it switch to the new one and rewind.
    public func addBuffer(_ buffer: SampleBuffer) throws(EngineError) {
        try lock.withLock { _ throws(EngineError) in
            guard NodeName.isValid(buffer.name) else {
                throw NodeName.invalidNameError(buffer.name, what: "buffer name")
            }
            guard abs(buffer.sampleRate - state.configuration.sampleRate) < 1e-6 else {
                throw EngineError(.bufferMismatch,
                    "buffer '\(buffer.name)' is at \(buffer.sampleRate) Hz but the engine runs at \(state.configuration.sampleRate) Hz")
            }
            let old = state.buffers[buffer.name]
            state.buffers[buffer.name] = buffer
            if let old {
                for node in state.nodes.values where node.materialBuffer === old {
                    try setMaterial(node, buffer)
                }
            }
        }
    }

    /// Removes a buffer; players using it stop and lose their material.
    public func removeBuffer(_ name: String) throws(EngineError) {
        try lock.withLock { _ throws(EngineError) in
            guard let buffer = state.buffers[name] else {
                throw EngineError(.unknownBuffer, "no buffer named '\(name)'")
            }
            for node in state.nodes.values where node.items.values.contains(where: { $0.buffer === buffer }) {
                // Players using it stop (which unschedules their items) and lose it as material.
                if let player = node.player { try send([TimedCommand(.playerStop(player))]) }
                if node.materialBuffer === buffer {
                    node.materialBuffer = nil
                    node[.buffer] = .string("")
                }
                node[.playing] = .bool(false)
                requeueMaterial(node)
            }
            state.buffers[name] = nil
            bury(buffer)
        }
    }

    /// The loaded buffers, sorted by name.
    public func buffers() -> [SampleBuffer] {
        lock.withLock { _ in state.buffers.values.sorted { $0.name < $1.name } }
    }

    private func playerState(_ name: String) throws(EngineError) -> (NodeRecord, UnsafeMutablePointer<PlayerState>) {
        let node = try record(name)
        guard let player = node.player else {
            throw EngineError(.notAllowed, "'\(name)' is a \(node.kind.rawValue), not a player")
        }
        return (node, player)
    }
}

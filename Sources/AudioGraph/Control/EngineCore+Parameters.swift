// Control side. Setting and getting node parameters; turning them into render commands.
import AudioDSP

extension EngineCore {
    /// `Engine.set` under the lock, with a file the front decoded first.
    func set(
        _ node: String, _ parameter: String, to value: ParameterValue, loadedFile loaded: SampleBuffer?,
        atSampleTime time: Int64?
    ) throws(EngineError) {
        let record = try record(node)
        // The name is resolved once, here; everything after works on its position in the table.
        let position = try Engine.position(of: parameter, in: record.table, kind: record.kind, node: node)
        let coerced = try Engine.validate(
            record.specs[position], node: node, value, creating: false, sampleRate: state.configuration.sampleRate)
        try apply(record, position, coerced, loadedFile: loaded, time: time ?? -1)
        if record.specs[position].key == .playing { releaseFromInterruption(node) }
    }

    func get(_ node: String, _ parameter: String) throws(EngineError) -> ParameterValue {
        let record = try record(node)
        let position = try Engine.position(of: parameter, in: record.table, kind: record.kind, node: node)
        if record.specs[position].key == .currentTime, let audio = record.audio {
            return .float(Double(currentFrame(record, audio)) / state.configuration.sampleRate)
        }
        return record[position]
    }

    // MARK: Helpers

    /// `validate` for a parameter the engine names itself on `record` (its kind must have it).
    func validate(_ record: NodeRecord, _ key: ParameterKey, _ value: ParameterValue) throws(EngineError)
        -> ParameterValue
    {
        try Engine.validate(
            record.specs[record.table.requiredPosition(key)], node: record.name, value, creating: false,
            sampleRate: state.configuration.sampleRate)
    }

    /// A kernel for the effect `node` at the engine's rate, with the node's values at `positions` (the
    /// others stay at the kernel's defaults, which are the table's). An inserted time-pitch runs at
    /// rate 1 whatever its `rate` says.
    func makeEffectKernel(_ node: NodeRecord, setting positions: some Sequence<Int>) -> EffectRef? {
        let config = state.configuration
        let effect = EffectRef.make(
            node.kind, sampleRate: config.sampleRate, maxBlockFrames: config.blockFrames,
            channelCount: node.outputChannelCount, bandCount: node.kind == .eq ? node.int(.bands) : 1,
            spares: timePitchSpares)
        for position in positions {
            let spec = node.specs[position]
            if spec.key == .bypass {
                effect?.setInitialBypass(node[position].boolValue ?? false)
            } else if let index = spec.kernelIndex {
                effect?.setInitial(index, NodeKind.kernelValue(spec, node[position]))
            }
        }
        if node.kind == .timepitch, node.bool(.insert) {
            effect?.setInitial(TimePitchKernel.Parameter.rate.rawValue, 1)
        }
        return effect
    }

    /// Applies validated initial parameters to a node no program or command has seen yet.
    /// `parameters` are (table position, validated value) pairs.
    func applyInitial(_ node: NodeRecord, _ parameters: [(Int, ParameterValue)]) throws(EngineError) {
        var loaded: SampleBuffer?
        for (position, value) in parameters where node.specs[position].key == .file {
            if let path = value.stringValue, !path.isEmpty { loaded = try loadFileAtAttach(path) }
        }
        for (position, value) in parameters { node[position] = value }
        if node.kind == .mixer {
            node.outputChannelCount = node.int(.channels)
            node.mixer?.pointee.outputVolume.jump(to: Float(node.double(.outputVolume)))
        }
        if node.kind == .voiceprocessor || (node.kind == .input && node.bool(.voiceProcessing)) {
            try makeVoiceProcessor(node)
        }
        if node.kind.isEffect {
            node.outputChannelCount = node.int(.channels)
            // Initial values take effect at once (the kernels start at their table defaults).
            let effect = makeEffectKernel(node, setting: parameters.map(\.0))
            node.effect = effect
            if node.kind == .timepitch { node[.latency] = .int(effect?.latencyFrames ?? 0) }
            if node.kind.isTimeEffect {
                node.timeFIFO = TimeEffectFIFO.allocate(
                    channelCount: node.outputChannelCount,
                    maxBlockFrames: state.configuration.blockFrames)
            }
            for (position, value) in parameters where node.specs[position].key == .insert {
                try setInsert(node, exposed: value.boolValue ?? false)
            }
        }
        if node.kind == .environment { try makeEnvironment(node) }
        if node.kind == .audioplayer {
            try applyInitialAudioPlayer(node, loaded: loaded)
        } else if let player = node.player {
            var buffer = loaded
            if buffer == nil { buffer = try bufferNamed(node.string(.buffer)) }
            if let buffer {
                let frames = node.int(.frames)
                let material = try material(
                    of: buffer, startFrame: node.int(.start), frameCount: frames == 0 ? nil : frames,
                    loops: node.bool(.loop), node: node.name)
                let id = node.nextItemID
                node.nextItemID += 1
                node.items[id] = ScheduledItem(buffer: buffer, completion: nil, isMaterial: true)
                node.materialBuffer = buffer
                node.outputChannelCount = buffer.channelCount
                node[.channels] = .int(buffer.channelCount)
                // The node is not visible to the render thread yet: write its queue directly.
                _ = player.pointee.enqueue(
                    PlayerScheduleItem(material: material, startTime: -1, id: id, pausesAtEnd: true))
            }
            player.pointee.isPlaying = node.bool(.playing)
            // Its timeline starts at 0 when a program first renders it (`programInstalled`).
            if node.bool(.playing) { node.transport = (0, 0, true) }
        }
        let t = node.mixingTargets
        node.mixing.initialize(to: MixingState(left: t.left, right: t.right, mono: t.mono))
    }

    /// Loading while holding the lock is acceptable only at attach time (the node is not visible yet).
    private func loadFileAtAttach(_ path: String) throws(EngineError) -> SampleBuffer {
        guard let loader = fileLoader else {
            throw EngineError(.fileError, "file playback is not available in this engine")
        }
        do {
            return try loader(path, state.configuration.sampleRate)
        } catch let error as EngineError {
            throw error
        } catch {
            throw EngineError(.fileError, "\(error)")
        }
    }

    func bufferNamed(_ name: String) throws(EngineError) -> SampleBuffer? {
        if name.isEmpty { return nil }
        guard let buffer = state.players.buffers[name] else {
            let known = state.players.buffers.keys.sorted()
            throw EngineError(
                .unknownBuffer,
                "no buffer named '\(name)'"
                    + (known.isEmpty ? " (no buffers are loaded)" : " (loaded: \(known.joined(separator: ", ")))"))
        }
        return buffer
    }

    /// Applies one validated parameter (at `position` in the node's table) to a live node.
    func apply(
        _ node: NodeRecord, _ position: Int, _ value: ParameterValue, loadedFile: SampleBuffer?, time: Int64 = -1
    )
        throws(EngineError)
    {
        let ramp = state.configuration.rampFrames
        guard let key = node.specs[position].key else {
            // A parameter only the kernel knows (an effect's own, an EQ band's).
            guard let effect = node.effect, let index = node.specs[position].kernelIndex else {
                throw unknownParameter(position, of: node)
            }
            try send(
                TimedCommand(
                    time: time,
                    .effectParameter(
                        effect, index: Int32(index),
                        value: NodeKind.kernelValue(node.specs[position], value))))
            node[position] = value
            return
        }
        if let audio = node.audio, try applyAudioPlayer(node, audio, key, value, loadedFile: loadedFile, time: time) {
            return
        }
        if node.kind == .environment, try applyEnvironment(node, key, value, time: time) { return }
        if node.kind == .voiceprocessor || node.kind == .input, try applyVoice(node, key, value, time: time) {
            return
        }
        if node.kind.is3DSource && NodeKind.isSpatialSourceKey(key) {
            node[position] = value
            node.spatialProperties = nil
            try updateVoices(source: node, time: time)
            return
        }
        switch key {
        case .secondary:
            node[position] = value
            let silenced = value.boolValue == true && state.session.secondaryAudioSilenced
            guard silenced != node.secondarySilenced else { return }
            node.secondarySilenced = silenced
            let t = node.mixingTargets
            let fade = Int32(clamping: Int(SessionModel.secondaryFadeSeconds * configuration.sampleRate))
            try send(
                TimedCommand(
                    time: time, .setMixing(node.mixing, left: t.left, right: t.right, mono: t.mono, rampFrames: fade)))
        case .volume, .pan:
            node[position] = value
            let t = node.mixingTargets
            try send(
                TimedCommand(
                    time: time, .setMixing(node.mixing, left: t.left, right: t.right, mono: t.mono, rampFrames: ramp)))
        case .outputVolume:
            guard let mixer = node.mixer else { break }
            try send(
                TimedCommand(
                    time: time, .setOutputVolume(mixer, target: Float(value.doubleValue ?? 1), rampFrames: ramp)))
            node[position] = value
        case .channels:
            // Only mixers have a settable channel count.
            node[position] = value
            node.outputChannelCount = value.intValue ?? 2
            let t = node.mixingTargets
            try send(
                TimedCommand(
                    time: time, .setMixing(node.mixing, left: t.left, right: t.right, mono: t.mono, rampFrames: ramp)))
            republish()
        case .buffer, .file, .start, .frames:
            let saved = node.allValues
            let buffer: SampleBuffer?
            if key == .file {
                buffer = loadedFile
            } else if key == .buffer {
                buffer = try bufferNamed(value.stringValue ?? "")
            } else {
                buffer = node.materialBuffer
            }
            node[position] = value
            if key == .file { node[.buffer] = .string("") }
            if key == .buffer { node[.file] = .string("") }
            do throws(EngineError) {
                try setMaterial(node, buffer, time: time)
            } catch {
                node.allValues = saved
                throw error
            }
        case .loop:
            guard let player = node.player else { break }
            try send(TimedCommand(time: time, .playerSetLooping(player, value.boolValue ?? false)))
            node[position] = value
        case .insert:
            let exposed = value.boolValue ?? false
            if node.kind == .timepitch && !exposed {
                // Back on its sources' clock: the graph must satisfy the time-effect rules again.
                if let problem = timeDomainProblem(in: state.graph.connections, clocking: node.name) {
                    throw EngineError(.notAllowed, "cannot take '\(node.name)' off JACK: \(problem)")
                }
            }
            try setInsert(node, exposed: exposed)
            node[position] = value
            if node.kind == .timepitch, let effect = node.effect {
                // An insert runs at rate 1; leaving, the node's own rate comes back.
                try send(
                    TimedCommand(
                        time: time,
                        .effectParameter(
                            effect, index: Int32(TimePitchKernel.Parameter.rate.rawValue),
                            value: exposed ? 1 : node.double(.rate))))
            }
            republish()
        case .playing:
            guard let player = node.player else { break }
            let play = value.boolValue ?? false
            try send(TimedCommand(time: time, play ? .playerPlay(player) : .playerPause(player)))
            node[position] = value
        case .resumeAfterInterruption:
            // Read by the session when an interruption ends; nothing to render.
            node[position] = value
        default:
            guard let effect = node.effect else { throw unknownParameter(position, of: node) }
            let spec = node.specs[position]
            if key == .rate && node.kind == .timepitch && state.inserts.exposed[node.name] != nil {
                // Kept for when the node leaves JACK; an insert runs at rate 1.
            } else if key == .bypass {
                try send(TimedCommand(time: time, .effectBypass(effect, value.boolValue ?? false)))
            } else if let index = spec.kernelIndex {
                try send(
                    TimedCommand(
                        time: time,
                        .effectParameter(
                            effect, index: Int32(index),
                            value: NodeKind.kernelValue(spec, value))))
            } else {
                throw unknownParameter(position, of: node)
            }
            node[position] = value
        }
    }

    /// The error for a parameter of `node`'s table that cannot be set on a live node of its kind.
    private func unknownParameter(_ position: Int, of node: NodeRecord) -> EngineError {
        Engine.unknownParameter(node.specs[position].name, kind: node.kind, node: node.name, specs: node.specs)
    }

    func resetNode(_ name: String) throws(EngineError) {
        let node = try record(name)
        guard let effect = node.effect else {
            throw EngineError(.notAllowed, "'\(name)' is a \(node.kind.rawValue); only effects have tails to reset")
        }
        try send([TimedCommand(.effectReset(effect))])
    }
}

// The rules this subsystem applies; pure, so they live on the front.
extension Engine {
    static func unknownParameter(_ name: String, kind: NodeKind, node: String, specs: [ParameterSpec]) -> EngineError {
        EngineError(
            .unknownParameter,
            "\(kind.rawValue) '\(node)' has no parameter '\(name)' (it has: \(specs.map(\.name).joined(separator: ", ")))"
        )
    }

    /// The position of the parameter named `name` in `table` (a node `node` of `kind`), or the error
    /// naming the parameters it has. The one name lookup of a request.
    static func position(of name: String, in table: ParameterTable, kind: NodeKind, node: String) throws(EngineError)
        -> Int
    {
        guard let position = table.position(of: name) else {
            throw unknownParameter(name, kind: kind, node: node, specs: table.specs)
        }
        return position
    }

    /// The value `value` becomes when the parameter `spec` of `node` is set to it; throws what the set
    /// would throw (read-only, creation-only, type, range; a filter frequency above half `sampleRate`).
    /// Reads no state.
    static func validate(
        _ spec: ParameterSpec, node: String, _ value: ParameterValue, creating: Bool, sampleRate: Double? = nil
    ) throws(EngineError) -> ParameterValue {
        if spec.isReadOnly {
            throw EngineError(.readOnly, "\(node).\(spec.name) is read-only (\(spec.summary))")
        }
        if spec.isCreationOnly && !creating {
            throw EngineError(.readOnly, "\(node).\(spec.name) can only be given when the node is created")
        }
        return try spec.coerce(value, node: node, sampleRate: sampleRate)
    }

    /// `validate` by name: the position of `name` in `table` and the value it takes.
    static func validate(
        kind: NodeKind, node: String, _ name: String, _ value: ParameterValue, table: ParameterTable,
        creating: Bool, sampleRate: Double? = nil
    ) throws(EngineError) -> (position: Int, value: ParameterValue) {
        let position = try position(of: name, in: table, kind: kind, node: node)
        return (
            position, try validate(table.specs[position], node: node, value, creating: creating, sampleRate: sampleRate)
        )
    }
}

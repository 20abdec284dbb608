// Control side. Setting and getting node parameters; turning them into render commands.
import AudioDSP

extension Engine {
    /// Sets `parameter` of `node`. Values are type-checked and range-checked against the node kind's
    /// `ParameterSpec`; an out-of-range value is refused (never clamped). Smoothed parameters glide over
    /// `configuration.rampDuration`.
    public func set(_ node: String, _ parameter: String, to value: ParameterValue) throws(EngineError) {
        try set(node, parameter, to: value, atSampleTime: nil)
    }

    /// Sets `parameter` at an engine sample time (nil: the next render cycle). Glides start, and player
    /// transport and material changes happen, exactly on that frame; a structural change (a mixer's
    /// channel count, a player's new channel count) reaches the graph at the next cycle.
    public func set(_ node: String, _ parameter: String, to value: ParameterValue, atSampleTime time: Int64?)
        throws(EngineError)
    {
        // A file is decoded before taking the lock, so a slow disk never stalls other control calls.
        var loaded: SampleBuffer?
        if parameter == "file", let path = value.stringValue, !path.isEmpty {
            let kind = try lock.withLock { _ throws(EngineError) in try record(node).kind }
            guard kind.isPlayer else { throw unknownParameter(parameter, kind: kind, node: node) }
            do {
                loaded = try loadFile(path)
            } catch {
                if kind == .audioplayer {
                    lock.withLock { _ in state.pendingEvents.append(.audioPlayerDecodeError(node: node, message: error.message)) }
                }
                throw error
            }
        }
        try lock.withLock { _ throws(EngineError) in
            let record = try record(node)
            let coerced = try validate(kind: record.kind, node: node, parameter, value, specs: record.specs)
            try apply(record, parameter, coerced, loadedFile: loaded, time: time ?? -1)
        }
        if parameter == "insert" { notifyInsertObserver() }
    }

    /// The current value of `parameter` of `node`.
    public func get(_ node: String, _ parameter: String) throws(EngineError) -> ParameterValue {
        try lock.withLock { _ throws(EngineError) in
            let record = try record(node)
            guard let value = record.values[parameter] else {
                throw unknownParameter(parameter, kind: record.kind, node: node)
            }
            if parameter == "currentTime", let audio = record.audio {
                return .float(Double(currentFrame(record, audio)) / state.configuration.sampleRate)
            }
            return value
        }
    }

    // MARK: Helpers (lock held unless noted)

    func unknownParameter(_ name: String, kind: NodeKind, node: String) -> EngineError {
        Self.unknownParameter(name, kind: kind, node: node, specs: state.nodes[node]?.specs ?? kind.parameters)
    }

    static func unknownParameter(_ name: String, kind: NodeKind, node: String, specs: [ParameterSpec]) -> EngineError {
        EngineError(.unknownParameter,
            "\(kind.rawValue) '\(node)' has no parameter '\(name)' (it has: \(specs.map(\.name).joined(separator: ", ")))")
    }

    func validate(kind: NodeKind, node: String, _ name: String, _ value: ParameterValue,
                  specs: [ParameterSpec]? = nil, creating: Bool = false) throws(EngineError) -> ParameterValue
    {
        try Self.validate(kind: kind, node: node, name, value, specs: specs ?? kind.parameters, creating: creating)
    }

    /// The value `value` becomes when `name` of `node` (a `kind` with parameter table `specs`) is set to
    /// it; throws what the set would throw. Reads no state.
    static func validate(kind: NodeKind, node: String, _ name: String, _ value: ParameterValue,
                         specs: [ParameterSpec], creating: Bool) throws(EngineError) -> ParameterValue
    {
        guard let spec = specs.first(where: { $0.name == name }) else {
            throw unknownParameter(name, kind: kind, node: node, specs: specs)
        }
        if spec.isReadOnly {
            throw EngineError(.readOnly, "\(node).\(name) is read-only (\(spec.summary))")
        }
        if spec.isCreationOnly && !creating {
            throw EngineError(.readOnly, "\(node).\(name) can only be given when the node is created")
        }
        return try spec.coerce(value, node: node)
    }

    /// Not under the lock: decodes a file through the embedding layer's loader.
    func loadFile(_ path: String) throws(EngineError) -> SampleBuffer {
        guard let loader = fileLoader else {
            throw EngineError(.fileError, "file playback is not available in this engine")
        }
        let rate = configuration.sampleRate
        do {
            return try loader(path, rate)
        } catch let error as EngineError {
            throw error
        } catch {
            throw EngineError(.fileError, "\(error)")
        }
    }

    /// Applies validated initial parameters to a node no program or command has seen yet.
    func applyInitial(_ node: NodeRecord, _ parameters: [(String, ParameterValue)]) throws(EngineError) {
        var loaded: SampleBuffer?
        for (key, value) in parameters where key == "file" {
            if let path = value.stringValue, !path.isEmpty { loaded = try loadFileLocked(path) }
        }
        for (key, value) in parameters { node.values[key] = value }
        if node.kind == .mixer {
            node.outputChannelCount = node.int("channels")
            node.mixer?.pointee.outputVolume.jump(to: Float(node.double("outputVolume")))
        }
        if node.kind.isEffect {
            node.outputChannelCount = node.int("channels")
            let effect = EffectRef.make(node.kind, sampleRate: state.configuration.sampleRate,
                                        maxBlockFrames: state.configuration.blockFrames,
                                        channelCount: node.outputChannelCount,
                                        bandCount: node.kind == .eq ? node.int("bands") : 1,
                                        spares: timePitchSpares)
            node.effect = effect
            if node.kind == .timepitch { node.values["latency"] = .int(effect?.latencyFrames ?? 0) }
            if node.kind.isTimeEffect {
                node.timeFIFO = TimeEffectFIFO.allocate(channelCount: node.outputChannelCount,
                                                        maxBlockFrames: state.configuration.blockFrames)
            }
            defer {
                // An inserted time-pitch starts at rate 1 whatever its `rate` says.
                if node.kind == .timepitch, node.bool("insert"), let index = NodeKind.effectParameterIndex(.timepitch, "rate") {
                    effect?.setInitial(index, 1)
                }
            }
            // Initial values take effect at once (the kernels start at their table defaults).
            for (key, value) in parameters {
                guard let spec = node.specs.first(where: { $0.name == key }) else { continue }
                if key == "insert" {
                    try setInsert(node, exposed: value.boolValue ?? false)
                } else if key == "bypass" {
                    effect?.setInitialBypass(value.boolValue ?? false)
                } else if let index = NodeKind.effectParameterIndex(node.kind, key) {
                    effect?.setInitial(index, NodeKind.kernelValue(spec, value))
                }
            }
        }
        if node.kind == .environment { try makeEnvironment(node) }
        if node.kind == .audioplayer {
            try applyInitialAudioPlayer(node, parameters, loaded: loaded)
        } else if let player = node.player {
            var buffer = loaded
            if buffer == nil { buffer = try bufferNamed(node.string("buffer")) }
            if let buffer {
                let frames = node.int("frames")
                let material = try material(of: buffer, startFrame: node.int("start"), frameCount: frames == 0 ? nil : frames,
                                            loops: node.bool("loop"), node: node.name)
                let id = node.nextItemID
                node.nextItemID += 1
                node.items[id] = ScheduledItem(buffer: buffer, completion: nil, isMaterial: true)
                node.materialBuffer = buffer
                node.outputChannelCount = buffer.channelCount
                node.values["channels"] = .int(buffer.channelCount)
                // The node is not visible to the render thread yet: write its queue directly.
                _ = player.pointee.enqueue(PlayerScheduleItem(material: material, startTime: -1, id: id, pausesAtEnd: true))
            }
            player.pointee.isPlaying = node.bool("playing")
            // Its timeline starts at 0 when a program first renders it (`programInstalled`).
            if node.bool("playing") { node.transport = (0, 0, true) }
        }
        let t = node.mixingTargets
        node.mixing.initialize(to: MixingState(left: t.left, right: t.right, mono: t.mono))
    }

    /// Loading while holding the lock is acceptable only at attach time (the node is not visible yet).
    private func loadFileLocked(_ path: String) throws(EngineError) -> SampleBuffer {
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
        guard let buffer = state.buffers[name] else {
            let known = state.buffers.keys.sorted()
            throw EngineError(.unknownBuffer, "no buffer named '\(name)'"
                + (known.isEmpty ? " (no buffers are loaded)" : " (loaded: \(known.joined(separator: ", ")))"))
        }
        return buffer
    }

    /// Applies one validated parameter to a live node.
    func apply(_ node: NodeRecord, _ key: String, _ value: ParameterValue, loadedFile: SampleBuffer?, time: Int64 = -1)
        throws(EngineError)
    {
        let ramp = state.configuration.rampFrames
        if let audio = node.audio, try applyAudioPlayer(node, audio, key, value, loadedFile: loadedFile, time: time) {
            return
        }
        if node.kind == .environment, try applyEnvironment(node, key, value, time: time) { return }
        if node.kind.is3DSource && NodeKind.spatialSourceParameterNames.contains(key) {
            node.values[key] = value
            node.spatialProperties = nil
            try updateVoices(source: node, time: time)
            return
        }
        switch key {
        case "volume", "pan":
            node.values[key] = value
            let t = node.mixingTargets
            try send([TimedCommand(time: time, .setMixing(node.mixing, left: t.left, right: t.right, mono: t.mono, rampFrames: ramp))])
        case "outputVolume":
            guard let mixer = node.mixer else { break }
            try send([TimedCommand(time: time, .setOutputVolume(mixer, target: Float(value.doubleValue ?? 1), rampFrames: ramp))])
            node.values[key] = value
        case "channels":
            // Only mixers have a settable channel count.
            node.values[key] = value
            node.outputChannelCount = value.intValue ?? 2
            let t = node.mixingTargets
            try send([TimedCommand(time: time, .setMixing(node.mixing, left: t.left, right: t.right, mono: t.mono, rampFrames: ramp))])
            republish()
        case "buffer", "file", "start", "frames":
            var candidate = node.values
            candidate[key] = value
            if key == "file" { candidate["buffer"] = .string("") }
            if key == "buffer" { candidate["file"] = .string("") }
            let buffer: SampleBuffer?
            if key == "file" {
                buffer = loadedFile
            } else if key == "buffer" {
                buffer = try bufferNamed(value.stringValue ?? "")
            } else {
                buffer = node.materialBuffer
            }
            let saved = node.values
            node.values = candidate
            do throws(EngineError) {
                try setMaterial(node, buffer, time: time)
            } catch {
                node.values = saved
                throw error
            }
        case "loop":
            guard let player = node.player else { break }
            try send([TimedCommand(time: time, .playerSetLooping(player, value.boolValue ?? false))])
            node.values[key] = value
        case "insert":
            let exposed = value.boolValue ?? false
            if node.kind == .timepitch && !exposed {
                // Back on its sources' clock: the graph must satisfy the time-effect rules again.
                if let problem = timeDomainProblem(in: state.connections, clocking: node.name) { throw EngineError(.notAllowed, "cannot take '\(node.name)' off JACK: \(problem)") }
            }
            try setInsert(node, exposed: exposed)
            node.values[key] = value
            if node.kind == .timepitch, let effect = node.effect, let index = NodeKind.effectParameterIndex(.timepitch, "rate") {
                // An insert runs at rate 1; leaving, the node's own rate comes back.
                try send([TimedCommand(time: time, .effectParameter(effect, index: Int32(index),
                                                                    value: exposed ? 1 : node.double("rate")))])
            }
            republish()
        case "playing":
            guard let player = node.player else { break }
            let play = value.boolValue ?? false
            try send([TimedCommand(time: time, play ? .playerPlay(player) : .playerPause(player))])
            node.values[key] = value
        default:
            guard let effect = node.effect, let spec = node.specs.first(where: { $0.name == key }) else {
                throw unknownParameter(key, kind: node.kind, node: node.name)
            }
            if key == "rate" && node.kind == .timepitch && state.inserts[node.name] != nil {
                // Kept for when the node leaves JACK; an insert runs at rate 1.
            } else if key == "bypass" {
                try send([TimedCommand(time: time, .effectBypass(effect, value.boolValue ?? false))])
            } else if let index = NodeKind.effectParameterIndex(node.kind, key) {
                try send([TimedCommand(time: time, .effectParameter(effect, index: Int32(index),
                                                                    value: NodeKind.kernelValue(spec, value)))])
            } else {
                throw unknownParameter(key, kind: node.kind, node: node.name)
            }
            node.values[key] = value
        }
    }

    /// Clears an effect's tails (reverb, delay lines, filter state): AVAudioEngine's `reset` for a node.
    public func resetNode(_ name: String) throws(EngineError) {
        try lock.withLock { _ throws(EngineError) in
            let node = try record(name)
            guard let effect = node.effect else {
                throw EngineError(.notAllowed, "'\(name)' is a \(node.kind.rawValue); only effects have tails to reset")
            }
            try send([TimedCommand(.effectReset(effect))])
        }
    }
}

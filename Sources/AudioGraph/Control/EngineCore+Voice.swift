// Control side. Voice processors: making their render state, and their parameters at creation and live.
import AudioDSP

extension Engine {
    /// What each voice processor (and each input with voice processing) measured lately, by node:
    /// echo attenuation of its output, the tracked echo delay, double talk (for `/voice/meter`). A
    /// bypassed processor's output is its microphone: 0 dB of attenuation.
    public func voiceAnalysis() -> [String: VoiceAnalysis] {
        control.withLock { core in
            var result: [String: VoiceAnalysis] = [:]
            for (name, node) in core.state.graph.nodes where !node.isInternal {
                guard let voice = node.voice else { continue }
                var analysis = voice.pointee.publishedAnalysis
                if node.bool(.bypass) { analysis.erleDb = 0 }
                result[name] = analysis
            }
            return result
        }
    }
}

extension EngineCore {
    /// Makes the render state of a voice processor, or of an input with `voiceProcessing`, from its
    /// creation values (already in the record).
    func makeVoiceProcessor(_ node: NodeRecord) throws(EngineError) {
        let isInput = node.kind == .input
        let micChannels = isInput ? node.outputChannelCount : node.int(.micChannels)
        guard (1...2).contains(micChannels) else {
            throw EngineError(
                .notAllowed,
                "\(node.name).voiceProcessing: voice processing takes 1 or 2 capture channels, the engine has "
                    + "\(micChannels)")
        }
        node.voice = try makeVoiceStage(node, micChannels: micChannels)
        node.outputChannelCount = micChannels
        node[.latency] = .int(node.voice?.pointee.latencyFrames ?? 0)
        if !isInput { try setInsert(node, exposed: node.bool(.ports)) }
    }

    /// A voice processor's stage for `node` at the engine's rate, with the node's settings; no program or
    /// command has seen it yet.
    func makeVoiceStage(_ node: NodeRecord, micChannels: Int) throws(EngineError)
        -> UnsafeMutablePointer<VoiceProcessorStage>
    {
        let isInput = node.kind == .input
        let rate = state.configuration.sampleRate
        guard (8_000...96_000).contains(rate) else {
            throw EngineError(
                .notAllowed, "\(node.name): voice processing runs at 8–96 kHz, the engine at \(Int(rate)) Hz")
        }
        let referenceChannels = isInput ? min(2, state.configuration.outputChannelCount) : node.int(.referenceChannels)
        let settings = VoiceProcessorSettings(
            mode: node.string(.mode) == "lowComplexity" ? .lowComplexity : .quality,
            agc: node.bool(.agc), noiseSuppression: node.bool(.noiseSuppression),
            micChannels: micChannels, referenceChannels: referenceChannels,
            sampleRate: state.configuration.sampleRate)
        let stage = UnsafeMutablePointer<VoiceProcessorStage>.allocate(capacity: 1)
        stage.initialize(
            to: VoiceProcessorStage(
                nodeID: node.id, settings: settings, maxBlockFrames: state.configuration.blockFrames))
        // No program or command has seen the stage yet: its settings are written directly.
        stage.pointee.bypass = node.bool(.bypass)
        stage.pointee.inputMuted = node.bool(.inputMuted)
        // An input's processor always hears the engine's output (AVAudioEngine's voice processing).
        stage.pointee.usesEngineReference = isInput || node.string(.reference) == "engine"
        stage.pointee.duckOthers = node.bool(.duckOthers)
        stage.pointee.advancedDucking = node.bool(.advancedDucking)
        stage.pointee.duckLevel = NodeKind.duckGain(node.string(.duckLevel))
        return stage
    }

    /// A live change of a voice processor's parameter. Returns false for keys it does not handle.
    func applyVoice(_ node: NodeRecord, _ key: ParameterKey, _ value: ParameterValue, time: Int64)
        throws(EngineError) -> Bool
    {
        guard let stage = node.voice else {
            // An input without voice processing keeps the values for the record; they change nothing.
            guard node.kind == .input, Self.voiceKeys.contains(key) else { return false }
            node[key] = value
            return true
        }
        let setting: VoiceSetting
        let on: Bool
        switch key {
        case .bypass: (setting, on) = (.bypass, value.boolValue ?? false)
        case .inputMuted: (setting, on) = (.inputMuted, value.boolValue ?? false)
        case .agc: (setting, on) = (.agc, value.boolValue ?? false)
        case .noiseSuppression: (setting, on) = (.noiseSuppression, value.boolValue ?? false)
        case .reference: (setting, on) = (.engineReference, value.stringValue == "engine")
        case .duckOthers: (setting, on) = (.duckOthers, value.boolValue ?? false)
        case .advancedDucking: (setting, on) = (.advancedDucking, value.boolValue ?? false)
        case .duckLevel:
            let gain = NodeKind.duckGain(value.stringValue ?? "default")
            try send(TimedCommand(time: time, .voiceDuckLevel(stage, gain)))
            node[key] = value
            return true
        default: return false
        }
        try send(TimedCommand(time: time, .voiceSetting(stage, setting, on)))
        node[key] = value
        return true
    }

    static let voiceKeys: Set<ParameterKey> = [
        .bypass, .agc, .noiseSuppression, .inputMuted, .duckOthers, .duckLevel, .advancedDucking
    ]
}

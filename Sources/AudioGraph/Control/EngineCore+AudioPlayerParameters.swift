// Control side. An audioplayer's parameters: creation values and live sets.
import AudioDSP

extension EngineCore {
    /// Creation: material, loops, position, metering, then `playing` (the node is not visible yet, but
    /// its schedule goes through commands like any later change).
    func applyInitialAudioPlayer(_ node: NodeRecord, loaded: SampleBuffer?) throws(EngineError) {
        let audio = AudioPlayerControl()
        node.audio = audio
        let wantsPlay = node.bool(.playing)
        let seekTo = node.double(.currentTime)
        var buffer = loaded
        if buffer == nil { buffer = try bufferNamed(node.string(.buffer)) }
        if node.bool(.enableRate) == false, node.double(.rate) != 1 {
            throw EngineError(
                .notAllowed, "\(node.name): rate needs enableRate: true at creation (AVAudioPlayer.enableRate)")
        }
        if node.bool(.enableRate) {
            // The stage runs at the material's channel count, known once the material is set; until then 2.
            let channels = buffer?.channelCount ?? 2
            node.outputChannelCount = channels
            try makeRateStage(node, channelCount: channels)
        }
        try audioSetMaterial(node, audio, buffer)
        if seekTo > 0 { try audioSeek(node, audio, seconds: seekTo, time: -1) }
        node[.currentTime] = .float(0)
        if node.bool(.meteringEnabled) { try setMetering(node, enabled: true) }
        if wantsPlay { try audioPlay(node, audio, time: -1) }
    }

    /// A live set. Returns false for the mixing parameters (volume, pan), which the common path handles.
    func applyAudioPlayer(
        _ node: NodeRecord, _ audio: AudioPlayerControl, _ key: ParameterKey, _ value: ParameterValue,
        loadedFile: SampleBuffer?, time: Int64
    ) throws(EngineError) -> Bool {
        switch key {
        case .file, .buffer:
            let buffer = key == .file ? loadedFile : try bufferNamed(value.stringValue ?? "")
            node[key] = value
            node[key == .file ? .buffer : .file] = .string("")
            try audioSetMaterial(node, audio, buffer)
        case .numberOfLoops:
            node[key] = value
            try audioSetLoops(node, audio, value.intValue ?? 0, time: time)
        case .currentTime:
            try audioSeek(node, audio, seconds: value.doubleValue ?? 0, time: time)
        case .playing:
            if value.boolValue ?? false {
                try audioPlay(node, audio, time: time)
            } else {
                try audioPause(node, audio, time: time)
            }
        case .meteringEnabled:
            try setMetering(node, enabled: value.boolValue ?? false)
            node[key] = value
        case .resumeAfterInterruption:
            node[key] = value
        case .rate:
            guard node.bool(.enableRate) else {
                throw EngineError(
                    .notAllowed,
                    "\(node.name): rate needs enableRate: true at creation (AVAudioPlayer.enableRate)")
            }
            node[key] = value
            try setAudioPlayerRate(node, value.doubleValue ?? 1, time: time)
        default:
            return false
        }
        return true
    }
}

// Control side. System sounds: fire-and-forget playback of preloaded buffers through a bounded pool of
// voices, with the oldest voice stolen when all are busy.

/// Identifies a sound-pool item: the voice's node number and the scheduled item.
struct SoundItemKey: Hashable {
    var node: Int32
    var item: Int32
}

extension EngineCore {
    /// How long a stolen sound fades out: 2 ms.
    var soundStealFadeFrames: Int { max(1, Int((0.002 * state.configuration.sampleRate).rounded())) }

    func playSound(_ buffer: String, volume: Double = 1, pan: Double = 0) throws(EngineError) -> Int {
        guard let sample = try bufferNamed(buffer) else {
            throw EngineError(.unknownBuffer, "no buffer named ''")
        }
        let gain = try ParameterSpec(.volume, .float, range: 0...1, default: .float(1), "").coerce(
            .float(volume), node: "sound")
        let position = try ParameterSpec(.pan, .float, range: -1...1, default: .float(0), "").coerce(
            .float(pan), node: "sound")
        if state.sounds.voices.isEmpty { try createSoundPool() }
        let (voiceName, fadeOut) = chooseSoundVoice()
        guard let voice = state.graph.nodes[voiceName], let player = voice.player else {
            throw EngineError(.notAllowed, "the sound pool is unavailable")
        }
        if let fadeOut { try send([TimedCommand(fadeOut)]) }
        voice[.volume] = gain
        voice[.pan] = position
        let item = try enqueue(
            voice, sample, startFrame: 0, frameCount: nil, playerTime: nil, options: [.interrupts],
            completion: nil, isMaterial: false, commandTime: -1, pausesAtEnd: true)
        // Each sound starts at its own level at once (after any channel-count change of the voice).
        // A voice that was stolen may still hold the stop that ends its fade: dropped first.
        let t = voice.mixingTargets
        try send([
            TimedCommand(.purge(UnsafeMutableRawPointer(player))),
            TimedCommand(.setMixing(voice.mixing, left: t.left, right: t.right, mono: t.mono, rampFrames: 0)),
            TimedCommand(.playerPlay(player))
        ])
        let id = state.sounds.nextID
        state.sounds.nextID += 1
        state.sounds.voiceStarts[voiceName] = id
        state.sounds.items[SoundItemKey(node: voice.id, item: item)] = id
        return id
    }

    var soundPoolMixerName: String? {
        guard let id = state.sounds.mixerID, state.graph.nodes["sounds"]?.id == id else { return nil }
        return "sounds"
    }

    /// The voice for a new sound and, when a sound must be stolen for it, the command that fades the
    /// stolen one out.
    private func chooseSoundVoice() -> (voice: String, fadeOut: Command?) {
        func busy(_ name: String) -> Bool { state.graph.nodes[name]?.items.isEmpty == false }
        // A stolen voice is free again once its sound has ended.
        state.sounds.fadingVoices = state.sounds.fadingVoices.filter(busy)
        let sounding = state.sounds.voices.filter { busy($0) && !state.sounds.fadingVoices.contains($0) }
        let free = state.sounds.voices.first { !busy($0) }
        guard sounding.count >= Engine.soundVoiceCount else { return (free ?? state.sounds.voices[0], nil) }
        let oldest = sounding.min { (state.sounds.voiceStarts[$0] ?? 0) < (state.sounds.voiceStarts[$1] ?? 0) }!
        guard let free, let victim = state.graph.nodes[oldest], let player = victim.player else {
            return (oldest, nil)  // every spare is still fading: cut the oldest (its item is interrupted)
        }
        state.sounds.fadingVoices.insert(oldest)
        return (free, .playerFadeOut(player, victim.mixing, frames: Int32(soundStealFadeFrames)))
    }

    /// Creates the `sounds` mixer (if absent) and the hidden voices. Their connections are
    /// whole at once (the voices and a new mixer are silent), so the first sound starts at full level on
    /// its first frame like every later one.
    private func createSoundPool() throws(EngineError) {
        if state.graph.nodes["sounds"] == nil {
            let mixer = state.makeRecord(name: "sounds", kind: .mixer)
            mixer.outputChannelCount = state.configuration.outputChannelCount
            mixer[.channels] = .int(mixer.outputChannelCount)
            state.graph.nodes["sounds"] = mixer
            state.sounds.mixerID = mixer.id
            try addEdge(
                Connection(source: "sounds", destination: "main", destinationBus: nextAvailableInputBus(of: "main")),
                risingOver: 0)
        }
        for index in 1...(Engine.soundVoiceCount + Engine.soundStealSpares) {
            let name = "sounds.voice\(index)"
            let voice = state.makeRecord(name: name, kind: .player)
            voice.isInternal = true
            state.graph.nodes[name] = voice
            state.sounds.voices.append(name)
            try addEdge(Connection(source: name, destination: "sounds", destinationBus: index - 1), risingOver: 0)
        }
        republish()
    }
}

// The rules this subsystem applies; pure, so they live on the front.
extension Engine {
    /// How many sounds the pool plays at once (fixed when it is created).
    public static let soundVoiceCount = 16

    /// Extra voices that let a new sound start at once while the voice it steals fades out.
    static let soundStealSpares = 4
}

// Control side. System sounds: fire-and-forget playback of preloaded buffers through a bounded pool of
// voices, with the oldest voice stolen when all are busy.

/// Identifies a sound-pool item: the voice's node number and the scheduled item.
struct SoundItemKey: Hashable {
    var node: Int32
    var item: Int32
}

extension Engine {
    /// The number of voices the sound pool has (fixed when it is created).
    public static let soundVoiceCount = 16

    /// Plays `buffer` once through the sound pool and returns the sound's id (reported again in
    /// `.soundFinished`). The pool's voices feed a mixer named `sounds` (created on first use and
    /// connected to `main`), so one volume controls all system sounds. When every voice is busy the one
    /// that started longest ago is stolen: its sound ends with `completed: false`.
    @discardableResult
    public func playSound(_ buffer: String, volume: Double = 1, pan: Double = 0) throws(EngineError) -> Int {
        try lock.withLock { _ throws(EngineError) in
            guard let sample = try bufferNamed(buffer) else {
                throw EngineError(.unknownBuffer, "no buffer named ''")
            }
            let gain = try ParameterSpec("volume", .float, range: 0...1, default: .float(1), "").coerce(.float(volume), node: "sound")
            let position = try ParameterSpec("pan", .float, range: -1...1, default: .float(0), "").coerce(.float(pan), node: "sound")
            if state.soundVoices.isEmpty { try createSoundPool() }
            let voiceName = state.soundVoices.first { state.nodes[$0]?.items.isEmpty == true }
                ?? state.soundVoices.min { (state.soundVoiceStarts[$0] ?? 0) < (state.soundVoiceStarts[$1] ?? 0) }!
            guard let voice = state.nodes[voiceName], let player = voice.player else {
                throw EngineError(.notAllowed, "the sound pool is unavailable")
            }
            voice[.volume] = gain
            voice[.pan] = position
            let item = try enqueue(voice, sample, startFrame: 0, frameCount: nil, playerTime: nil, options: [.interrupts],
                                   completion: nil, isMaterial: false, commandTime: -1, pausesAtEnd: true)
            // Each sound starts at its own level at once (after any channel-count change of the voice).
            let t = voice.mixingTargets
            try send([TimedCommand(.setMixing(voice.mixing, left: t.left, right: t.right, mono: t.mono, rampFrames: 0)),
                      TimedCommand(.playerPlay(player))])
            let id = state.nextSoundID
            state.nextSoundID += 1
            state.soundVoiceStarts[voiceName] = id
            state.soundItems[SoundItemKey(node: voice.id, item: item)] = id
            return id
        }
    }

    /// The name of the mixer the sound pool made for itself (`sounds`), nil when the pool has made none
    /// (never used, or it feeds a `sounds` mixer the user made). A saved patch leaves it out: the pool
    /// makes it again on first use.
    public var soundPoolMixerName: String? {
        lock.withLock { _ in
            guard let id = state.soundPoolMixerID, state.nodes["sounds"]?.id == id else { return nil }
            return "sounds"
        }
    }

    /// Creates the `sounds` mixer (if absent) and the hidden voices. Lock held.
    private func createSoundPool() throws(EngineError) {
        if state.nodes["sounds"] == nil {
            let mixer = state.makeRecord(name: "sounds", kind: .mixer)
            mixer.outputChannelCount = state.configuration.outputChannelCount
            mixer[.channels] = .int(mixer.outputChannelCount)
            state.nodes["sounds"] = mixer
            state.soundPoolMixerID = mixer.id
            try addEdge(Connection(source: "sounds", destination: "main", destinationBus: nextAvailableInputBus(of: "main")))
        }
        for index in 1...Self.soundVoiceCount {
            let name = "sounds.voice\(index)"
            let voice = state.makeRecord(name: name, kind: .player)
            voice.isInternal = true
            state.nodes[name] = voice
            state.soundVoices.append(name)
            try addEdge(Connection(source: name, destination: "sounds", destinationBus: index - 1))
        }
        republish()
    }
}

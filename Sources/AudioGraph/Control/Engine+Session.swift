// Control side, the API. What the audio session asks of the graph: pausing the players for an
// interruption and resuming them after it (EngineCore+Session.swift).

extension Engine {
    /// An interruption began (another session, the server going away, `/session/interrupt begin`):
    /// pauses every playing player and audioplayer and remembers them. Returns their names. A second
    /// call before `endInterruption` adds the players that play by then.
    @discardableResult
    public func beginInterruption() -> [String] {
        control.withLock { core in core.beginInterruption() }
    }

    /// The interruption ended. With `shouldResume`, the players it paused whose
    /// `resumeAfterInterruption` is true (the default) play again where they were; the others stay
    /// paused, and so does a player a request played, paused or stopped during the interruption (it is
    /// the request's). Returns the names resumed.
    @discardableResult
    public func endInterruption(shouldResume: Bool) -> [String] {
        control.withLock { core in core.endInterruption(shouldResume: shouldResume) }
    }

    /// True between `beginInterruption` and `endInterruption`.
    public var isInterrupted: Bool { control.withLock { core in core.state.session.isInterrupted } }

    /// Every node as `nodes()` lists it, but as the interruption under way will leave it when it ends
    /// with shouldResume: the players and audioplayers it paused that will play again (their
    /// `resumeAfterInterruption` true, and not played, paused or stopped by a request since) read
    /// `playing: true`, at the position they hold. Without an interruption, `nodes()`. What a save
    /// writes: a session saved during an interruption plays as it will once the interruption ends.
    public func nodesAsResumed() -> [NodeInfo] {
        control.withLock { core in core.nodesAsResumed() }
    }

    /// The audio session's gain on the engine's output (ducking by other sessions, the silent switch),
    /// glided linearly over `rampSeconds`. Applied after the output node's volume, before the output
    /// ports and the voice processors' engine reference.
    public func setSessionGain(_ gain: Float, rampSeconds: Double) throws(EngineError) {
        guard gain.isFinite, gain >= 0 else {
            throw EngineError(.outOfRange, "a session gain of 0 or more, not \(gain)")
        }
        try control.withLock { core throws(EngineError) in
            let frames = Int32(clamping: Int((max(0, rampSeconds) * core.configuration.sampleRate).rounded()))
            try core.send(time: -1, .sessionGain(target: gain, rampFrames: frames))
        }
    }

    /// Other audio plays (`true`) or stopped (`false`): nodes marked `secondary` fade out over 0.3 s, or
    /// back in to their volume (Wwise's BGM bus under the secondary-audio hint). Returns the nodes faded.
    @discardableResult
    public func silenceSecondaryAudio(_ silenced: Bool) throws(EngineError) -> [String] {
        try control.withLock { core throws(EngineError) in try core.silenceSecondaryAudio(silenced) }
    }

    /// True while secondary audio is silenced.
    public var isSecondaryAudioSilenced: Bool {
        control.withLock { core in core.state.session.secondaryAudioSilenced }
    }
}

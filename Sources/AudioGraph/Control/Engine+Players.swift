// Control side, the API. Player transport and the buffer library.
// Each method takes the engine's lock and hands the work to `EngineCore` (EngineCore+Players.swift).
// A player played, paused or stopped during an interruption is the caller's: the interruption's end
// leaves it as it is (Engine+Session.swift).
import AudioDSP

extension Engine {
    /// Starts (or resumes) a player, now or at an engine sample time (sample-accurate).
    public func play(_ node: String, atSampleTime time: Int64? = nil) throws(EngineError) {
        try control.withLock { core throws(EngineError) in
            try core.play(node, atSampleTime: time)
            core.releaseFromInterruption(node)
        }
    }

    /// Pauses a player, keeping its position, now or at an engine sample time.
    public func pause(_ node: String, atSampleTime time: Int64? = nil) throws(EngineError) {
        try control.withLock { core throws(EngineError) in
            try core.pause(node, atSampleTime: time)
            core.releaseFromInterruption(node)
        }
    }

    /// Stops a player: unschedules everything and resets its timeline (its parameter material, if any,
    /// is queued again so `play` starts it from the beginning), now or at an engine sample time. An
    /// audioplayer keeps its position instead (AVAudioPlayer.stop).
    public func stop(_ node: String, atSampleTime time: Int64? = nil) throws(EngineError) {
        try control.withLock { core throws(EngineError) in
            try core.stop(node, atSampleTime: time)
            core.releaseFromInterruption(node)
        }
    }

    /// Adds `buffer` to the library. Its rate must equal the engine rate (convert at load). A buffer with
    /// the same name is replaced; players using it switch to the new one and rewind.
    public func addBuffer(_ buffer: SampleBuffer) throws(EngineError) {
        try control.withLock { core throws(EngineError) in try core.addBuffer(buffer) }
    }

    /// Removes a buffer; players using it stop and lose their material.
    public func removeBuffer(_ name: String) throws(EngineError) {
        try control.withLock { core throws(EngineError) in try core.removeBuffer(name) }
    }

    /// The loaded buffers, sorted by name.
    public func buffers() -> [SampleBuffer] {
        control.withLock { core in core.buffers() }
    }
}

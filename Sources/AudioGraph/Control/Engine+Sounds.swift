// Control side, the API. System sounds through a bounded pool of voices.
// Each method takes the engine's lock and hands the work to `EngineCore` (EngineCore+Sounds.swift).
import AudioDSP

extension Engine {
    /// Plays `buffer` once through the sound pool and returns the sound's id (reported again in
    /// `.soundFinished`). The pool's voices feed a mixer named `sounds` (created on first use and
    /// connected to `main`), so one volume controls all system sounds. When `soundVoiceCount` sounds are
    /// playing, the one that started longest ago is stolen: it fades out over 2 ms and ends with
    /// `completed: false`, while the new sound starts at once on a spare voice (only a burst of steals
    /// faster than the fades, more than `soundStealSpares` at once, cuts a stolen sound in one sample).
    @discardableResult
    public func playSound(_ buffer: String, volume: Double = 1, pan: Double = 0) throws(EngineError) -> Int {
        try control.withLock { core throws(EngineError) in try core.playSound(buffer, volume: volume, pan: pan) }
    }

    /// The name of the mixer the sound pool made for itself (`sounds`), nil when the pool has made none
    /// (never used, or it feeds a `sounds` mixer the user made). A saved patch leaves it out: the pool
    /// makes it again on first use.
    public var soundPoolMixerName: String? {
        control.withLock { $0.soundPoolMixerName }
    }
}

// Control side, the API. AVAudioPlayer semantics for `audioplayer` nodes: prepare, fades and metering.
// Each method takes the engine's lock and hands the work to `EngineCore` (EngineCore+AudioPlayer.swift).
import AudioDSP

extension Engine {
    /// Prepares an audioplayer (AVAudioPlayer.prepareToPlay): queues its material from the current
    /// time, so `play` starts at once. Returns false when it has no material.
    @discardableResult
    public func prepareToPlay(_ node: String) throws(EngineError) -> Bool {
        try control.withLock { core throws(EngineError) in try core.prepareToPlay(node) }
    }

    /// Fades an audioplayer's (or any source's) volume to `volume` over `seconds`
    /// (AVAudioPlayer.setVolume(_:fadeDuration:)); 0 s jumps.
    public func fadeVolume(
        _ node: String, to volume: Double, over seconds: Double,
        atSampleTime time: Int64? = nil
    ) throws(EngineError) {
        try control.withLock { core throws(EngineError) in
            try core.fadeVolume(node, to: volume, over: seconds, atSampleTime: time)
        }
    }

    /// Average and peak power per channel since the previous call, in dBFS (−160…0), for an audioplayer
    /// with `meteringEnabled` (AVAudioPlayer.updateMeters, averagePower, peakPower).
    public func audioPlayerPower(_ node: String) throws(EngineError) -> [(average: Float, peak: Float)] {
        try control.withLock { core throws(EngineError) in try core.audioPlayerPower(node) }
    }
}

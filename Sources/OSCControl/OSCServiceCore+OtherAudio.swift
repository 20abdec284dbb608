// OSC thread. Other audio (AVAudioSession's isOtherAudioPlaying and secondary-audio hint, Wwise's BGM
// bus): the host's monitor port hears the other clients that feed physical playback ports; when they
// are audible, subscribers are told and nodes marked `secondary` fade out. See docs/SESSION.md.
import AudioGraph

extension OSCServiceCore {
    /// `/session/monitorOtherAudio [i]`: set → `/done` (`/error 69` when the host cannot); get → 0 or 1.
    func sessionMonitorOtherAudio(_ r: OSCRequest) throws(OSCFailure) {
        var a = OSCArguments(r)
        if a.isAtEnd {
            reply(r.client, OSCMessage(r.address, [.int32(session.monitorsOtherAudio ? 1 : 0)]))
            return
        }
        let on = try a.flag("monitorOtherAudio")
        try a.end()
        if on != session.monitorsOtherAudio {
            guard let host else { throw OSCFailure(.unsupported, "\(r.address): this engine has no JACK host") }
            if let problem = host.setOtherAudioMonitoring(on) {
                throw OSCFailure(.unsupported, "\(r.address): \(problem)")
            }
            session.monitorsOtherAudio = on
            // Not listening any more: nothing is known to play.
            if !on && session.otherAudio.isPlaying { otherAudioChanged(playing: false) }
            if !on { session.otherAudio = OtherAudioDetector() }
        }
        done(r.client, r.address)
    }

    /// `/session/otherAudioPlaying` → `/session/otherAudioPlaying i:playing`.
    func sessionOtherAudioPlaying(_ r: OSCRequest) throws(OSCFailure) {
        try OSCArguments(r).end()
        reply(r.client, OSCMessage(r.address, [.int32(session.otherAudio.isPlaying ? 1 : 0)]))
    }

    /// Every 10 ms while monitoring: the peak heard since, through the detector.
    func followOtherAudio(now: Double) {
        let peak = host?.takeOtherAudioPeak() ?? 0
        if let playing = session.otherAudio.update(peak: peak, now: now) { otherAudioChanged(playing: playing) }
    }

    private func otherAudioChanged(playing: Bool) {
        notify(OSCMessage("/session/other_audio", [.int32(playing ? 1 : 0)]))
        notify(OSCMessage("/session/silence_secondary_audio", [.string(playing ? "begin" : "end")]))
        _ = try? engine.silenceSecondaryAudio(playing)
    }
}

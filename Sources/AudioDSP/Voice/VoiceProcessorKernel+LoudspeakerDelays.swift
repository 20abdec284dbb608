// Render side (the thread that calls `process`): the delay line's delay for two loudspeakers that play
// different signals.

extension VoiceProcessorKernel {
    /// The reference carries two signals on two loudspeakers (two channels, unfolded).
    var playsTwoSignals: Bool { settings.referenceChannels == 2 && !referenceFolded }

    /// The delay the line takes for an unfolded reference, given the tracker's `estimate` (samples):
    /// the earlier of the two loudspeakers' delays seen within `nearerLoudspeakerMemorySeconds`. An
    /// estimate within 2 ms of one of them refreshes it; one within `loudspeakerSpread` of the only one
    /// known is the other loudspeaker; any other (a third delay, or one too far away) means the echo
    /// path moved, and the line follows it at once, as with one loudspeaker.
    func nearerLoudspeakerDelay(_ estimate: Double) -> Double {
        let tolerance = Double(realignmentThreshold)
        let now = framesProcessed
        if loudspeakerDelays.0 >= 0 && now - loudspeakerDelayFrames.0 > nearerLoudspeakerMemoryFrames {
            loudspeakerDelays.0 = -1
        }
        if loudspeakerDelays.1 >= 0 && now - loudspeakerDelayFrames.1 > nearerLoudspeakerMemoryFrames {
            loudspeakerDelays.1 = -1
        }
        if loudspeakerDelays.0 >= 0 && abs(estimate - loudspeakerDelays.0) <= tolerance {
            loudspeakerDelayFrames.0 = now
        } else if loudspeakerDelays.1 >= 0 && abs(estimate - loudspeakerDelays.1) <= tolerance {
            loudspeakerDelayFrames.1 = now
        } else if loudspeakerDelays.1 < 0
            && (loudspeakerDelays.0 < 0 || abs(estimate - loudspeakerDelays.0) <= Double(loudspeakerSpread))
        {
            loudspeakerDelays.1 = estimate
            loudspeakerDelayFrames.1 = now
        } else if loudspeakerDelays.0 < 0 && abs(estimate - loudspeakerDelays.1) <= Double(loudspeakerSpread) {
            loudspeakerDelays.0 = estimate
            loudspeakerDelayFrames.0 = now
        } else {
            loudspeakerDelays = (estimate, -1)
            loudspeakerDelayFrames = (now, 0)
        }
        let (a, b) = loudspeakerDelays
        return a < 0 ? b : b < 0 ? a : min(a, b)
    }
}

// Render side (the thread that calls `process`): the delay line's delay for two loudspeakers that play
// different signals.

extension VoiceProcessorKernel {
    /// The reference carries two signals on two loudspeakers (two channels, unfolded).
    var playsTwoSignals: Bool { settings.referenceChannels == 2 && !referenceFolded }

    /// The delay the line takes for an unfolded reference, given the tracker's `estimate` (samples).
    /// Two loudspeakers' delays are kept (each forgotten `nearerLoudspeakerMemoryFrames` after it was
    /// last seen); an estimate within 2 ms of one of them refreshes it. A new estimate within
    /// `loudspeakerSpread` of the only one known is the other loudspeaker at once; one farther, within
    /// `widestLoudspeakerSpread`, is the other loudspeaker once the first is seen again after it, and
    /// until then the line follows it, as it would a moved echo path (a first estimate that was wrong
    /// is not held), and a new estimate within `loudspeakerSpread` of it is the other loudspeaker
    /// instead of the first. Any other estimate (a third delay, or one too far away) means the echo
    /// path moved, and the line follows it at once, as with one loudspeaker; but not an earlier peak
    /// of the correlation (`mayMovePath` false), which is another loudspeaker or nothing: a chance peak
    /// at the start of double talk once moved the line through it (docs/DECISIONS.md). With two
    /// loudspeakers known, the line takes the earlier delay.
    func nearerLoudspeakerDelay(_ estimate: Double, mayMovePath: Bool = true) -> Double {
        let tolerance = Double(realignmentThreshold)
        let now = framesProcessed
        if loudspeakerDelays.0 >= 0 && now - loudspeakerDelayFrames.0 > nearerLoudspeakerMemoryFrames {
            loudspeakerDelays.0 = -1
        }
        if loudspeakerDelays.1 >= 0 && now - loudspeakerDelayFrames.1 > nearerLoudspeakerMemoryFrames {
            loudspeakerDelays.1 = -1
        }
        let (a, b) = loudspeakerDelays
        if a >= 0 && abs(estimate - a) <= tolerance {
            loudspeakerDelayFrames.0 = now
            if b >= 0 && latestLoudspeaker == 1 { loudspeakersConfirmed = true }
            latestLoudspeaker = 0
        } else if b >= 0 && abs(estimate - b) <= tolerance {
            loudspeakerDelayFrames.1 = now
            if a >= 0 && latestLoudspeaker == 0 { loudspeakersConfirmed = true }
            latestLoudspeaker = 1
        } else if a >= 0 && b >= 0 && !loudspeakersConfirmed
            && abs(estimate - (latestLoudspeaker == 0 ? a : b)) <= Double(loudspeakerSpread)
        {
            // The delay the line follows and this one are the two loudspeakers; the other was not one.
            let slot = 1 - latestLoudspeaker
            setLoudspeaker(slot, to: estimate, at: now)
            loudspeakersConfirmed = true
            latestLoudspeaker = slot
        } else if (a >= 0) != (b >= 0), abs(estimate - max(a, b)) <= Double(widestLoudspeakerSpread) {
            // The other loudspeaker, in the free slot.
            let slot = a >= 0 ? 1 : 0
            setLoudspeaker(slot, to: estimate, at: now)
            loudspeakersConfirmed = abs(estimate - max(a, b)) <= Double(loudspeakerSpread)
            latestLoudspeaker = slot
        } else if !mayMovePath {
            // A secondary peak that is neither loudspeaker: not evidence that the path moved.
        } else {
            loudspeakerDelays = (estimate, -1)
            loudspeakerDelayFrames = (now, 0)
            loudspeakersConfirmed = false
            latestLoudspeaker = 0
        }
        let (left, right) = loudspeakerDelays
        if left < 0 { return right }
        if right < 0 { return left }
        if loudspeakersConfirmed { return min(left, right) }
        return latestLoudspeaker == 0 ? left : right
    }

    /// Loudspeaker `slot`'s delay is `estimate`, seen at frame `frame`.
    private func setLoudspeaker(_ slot: Int, to estimate: Double, at frame: Int) {
        if slot == 0 {
            loudspeakerDelays.0 = estimate
            loudspeakerDelayFrames.0 = frame
        } else {
            loudspeakerDelays.1 = estimate
            loudspeakerDelayFrames.1 = frame
        }
    }
}

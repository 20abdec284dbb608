// Render side (the thread that calls `process`): the delay line's delay from the tracker's estimate.

extension VoiceProcessorKernel {
    /// How much later than the line's delay an echo estimate may be without moving the line (samples):
    /// 25 ms in quality mode with one signal, whose filter reaches 150 ms past the line; 0 otherwise (the
    /// low-complexity filter's 40 ms would lose too much of the room, and two loudspeakers have rules of
    /// their own). In a live room whose direct sound is weak, the correlation's peak moves among the
    /// early reflections from one estimate to the next (76 … 89 ms for a loudspeaker 80 ms away, 20 dB
    /// under its reflections); when each such move realigned the line, the MDF never converged
    /// (docs/VOICE.md). An earlier estimate, or one later by more, moves the line as before.
    var laterEchoSlack: Int {
        settings.mode == .quality && !playsTwoSignals ? Int(Self.laterEchoSlackSeconds * settings.sampleRate) : 0
    }

    static let laterEchoSlackSeconds = 0.025

    /// Takes the tracker's estimate (through the two loudspeakers' rules when the reference carries two
    /// signals) and moves the delay line when it must: the first time, when the echo comes earlier than
    /// the line by more than `realignmentThreshold`, or later by more than `laterEchoSlack` too.
    func followTrackedDelay() {
        guard estimator.delaySamples >= 0 else { return }
        // Two loudspeakers (two signals, or one signal played by both at different distances): the
        // tracker heads one path at a time; a confirmed earlier peak is the nearer one, heard after it,
        // so the two are confirmed together, and the line takes the nearer.
        var delay = nearerLoudspeakerDelay(estimator.delaySamples)
        let earlier = estimator.earlierPeakSamples
        if earlier >= 0 && (playsTwoSignals || estimator.earlierPeakRecurs)
            && estimator.delaySamples - earlier <= Double(widestLoudspeakerSpread)
        {
            delay = nearerLoudspeakerDelay(earlier, mayMovePath: false)
        }
        current.delayMs = Float(delay * 1000 / settings.sampleRate)
        let target = min(max(Int(delay.rounded()) - alignmentMargin, 0), maximumLineDelay)
        // A later estimate within the slack leaves the line: the filter reaches past it.
        let later = target - lineDelay
        let withinSlack = later > 0 && later <= laterEchoSlack
        if !isAligned || (abs(target - lineDelay) > realignmentThreshold && !withinSlack) {
            lineDelay = target
            isAligned = true
            converged = false
            framesSinceAlignment = 0
            farChannel = -1
            channelShiftFrames = 0
        }
    }
}

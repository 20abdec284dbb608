// Render side (the thread that calls `process`): whether a two-channel reference carries one signal,
// and the switch between the two-loudspeaker MDF and the folded one-loudspeaker MDF.
import CSpeexDSP

extension VoiceProcessorKernel {
    /// Folds a two-channel reference into one, or unfolds it, from an incoming frame's energies: left,
    /// right, their difference and their sum (see `referenceFolded`).
    func updateFolding(left: Float, right: Float, side: Float, sum: Float) {
        // Far-end sound: a channel above 1e-7 (`referencePower`'s threshold).
        guard max(left, right) > 1e-7 * Float(frameLength) else { return }
        let r = Self.foldingSideRatio
        let direction =
            side <= r * sum
            ? Self.foldMean : right <= r * left ? Self.foldLeft : left <= r * right ? Self.foldRight : Self.foldUnknown
        if referenceFolded {
            if direction == foldDirection { return }
            if foldDirection == Self.foldUnknown && direction != Self.foldUnknown {
                setFolding(direction)
                return
            }
            setFolding(Self.foldUnknown)
        }
        if direction == Self.foldUnknown || direction != foldCandidate {
            foldCandidate = direction
            foldingRun = direction == Self.foldUnknown ? 0 : 1
            return
        }
        foldingRun += 1
        if foldingRun >= foldingReturnFrames { setFolding(direction) }
    }

    /// Folds onto `direction`, or unfolds (`foldUnknown`). A switch restarts the convergence check, so
    /// that the suppressor holds the echo down with the reference's peak while the other MDF catches up
    /// with the reference it missed; a folded MDF that modelled another direction starts afresh (as do
    /// its copy and the learned distortion, another loudspeaker's).
    func setFolding(_ direction: Int) {
        let first = foldDirection == Self.foldUnknown && referenceFolded
        referenceFolded = direction != Self.foldUnknown
        foldDirection = direction
        foldCandidate = Self.foldUnknown
        foldingRun = 0
        if referenceFolded && foldedModelDirection != Self.foldUnknown && foldedModelDirection != direction,
            let foldedEchoState
        {
            speex_echo_state_reset(foldedEchoState)
            let notch = notchMemory + 2 * settings.micChannels
            for i in 0..<(2 * settings.micChannels) { notch[i] = 0 }
            foreground.forget()
            distortion.reset()
        }
        if referenceFolded { foldedModelDirection = direction }
        guard !first else { return }
        converged = false
        framesSinceAlignment = 0
        foregroundShare = 0
    }
}

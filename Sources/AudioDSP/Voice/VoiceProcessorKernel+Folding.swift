// Render side (the thread that calls `process`): whether a two-channel reference carries one signal,
// and the switch between the two-loudspeaker MDF and the folded one-loudspeaker MDF.
import CSpeexDSP

extension VoiceProcessorKernel {
    /// Whether `gain` times the `direction` channel (`foldLeft` or `foldRight`) gives the other channel
    /// of an incoming frame to within `foldingSideRatio` of the louder channel's energy, from the frame's
    /// energies (`left`, `right`) and their cross product.
    static func explains(direction: Int, gain: Double, left: Double, right: Double, cross: Double) -> Bool {
        let (fold, other) = direction == foldLeft ? (left, right) : (right, left)
        // ‖other − gain · fold‖²
        let residual = other - 2 * gain * cross + gain * gain * fold
        return residual <= foldingSideRatio * max(left, right)
    }

    /// A frame whose two channels have these energies carries far-end sound: a channel's mean square
    /// above 1e-7 (`referencePower`'s threshold).
    func hasFarEndSound(left: Double, right: Double) -> Bool { max(left, right) > 1e-7 * Double(frameLength) }

    /// Folds a two-channel reference into one, or unfolds it, from an incoming frame's energies: left,
    /// right and their cross product (see `referenceFolded`).
    func updateFolding(left: Double, right: Double, cross: Double) {
        guard hasFarEndSound(left: left, right: right) else { return }
        if referenceFolded && foldDirection != Self.foldUnknown
            && Self.explains(direction: foldDirection, gain: foldGain, left: left, right: right, cross: cross)
        {
            return
        }
        if foldCandidate != Self.foldUnknown
            && Self.explains(direction: foldCandidate, gain: candidateGain, left: left, right: right, cross: cross)
        {
            foldingRun += 1
        } else {
            // The louder channel carries the signal; the other is that times a gain, if anything.
            let direction = left >= right ? Self.foldLeft : Self.foldRight
            let gain = cross / max(left, right)
            let fits = Self.explains(direction: direction, gain: gain, left: left, right: right, cross: cross)
            foldCandidate = fits ? direction : Self.foldUnknown
            candidateGain = fits ? gain : 0
            foldingRun = fits ? 1 : 0
        }
        if referenceFolded && foldDirection == Self.foldUnknown {
            // The first frame with far-end sound: folds onto its channel and gain, or unfolds.
            setFolding(foldCandidate, gain: candidateGain)
        } else if referenceFolded {
            // A frame the fold does not explain: the candidate's run starts here.
            setFolding(Self.foldUnknown, gain: 0)
        } else if foldCandidate != Self.foldUnknown && foldingRun >= foldingReturnFrames {
            setFolding(foldCandidate, gain: candidateGain)
        }
    }

    /// Folds onto `direction` with `gain`, or unfolds (`foldUnknown`). A switch restarts the convergence
    /// check, so that the suppressor holds the echo down with the reference's peak while the other MDF
    /// catches up with the reference it missed; a folded MDF that modelled another channel, or the same
    /// one with another gain (`foldingModelGainChange`), starts afresh, as do its copy and the learned
    /// distortion.
    func setFolding(_ direction: Int, gain: Double) {
        let first = foldDirection == Self.foldUnknown && referenceFolded
        referenceFolded = direction != Self.foldUnknown
        foldDirection = direction
        foldGain = gain
        if referenceFolded {
            foldCandidate = Self.foldUnknown
            foldingRun = 0
        }
        if referenceFolded && foldedModelDirection != Self.foldUnknown
            && (foldedModelDirection != direction || abs(gain - foldedModelGain) > Self.foldingModelGainChange),
            let foldedEchoState
        {
            speex_echo_state_reset(foldedEchoState)
            let notch = notchMemory + 2 * settings.micChannels
            for i in 0..<(2 * settings.micChannels) { notch[i] = 0 }
            foreground.forget()
            distortion.reset()
        }
        if referenceFolded {
            foldedModelDirection = direction
            foldedModelGain = gain
        }
        guard !first else { return }
        converged = false
        framesSinceAlignment = 0
        foregroundShare = 0
    }
}

// Render side (the thread that calls `process`): the farther of two loudspeakers that play different
// signals, delayed on its channel so that its room starts where the nearer one's does.

import CSpeexDSP

extension VoiceProcessorKernel {
    /// The fewest whole frames worth a shift (30 ms; loudspeakers at least 25 ms apart): closer ones
    /// leave the filter most of the farther room.
    static let shortestChannelShiftFrames = 3
    /// A shift starts the MDF again, which costs more the longer it has learned: one is made only this
    /// long after the line's delay was set (4 s). Made after 5 s, on a stereo mix whose two-loudspeaker
    /// MDF converges slowly, it left that MDF 5–10 dB behind through the double talk (docs/DECISIONS.md).
    static let channelShiftWindowFrames = 400

    /// Two loudspeakers `shortestChannelShiftFrames` frames or more apart: once each channel's own tracker
    /// shows one of the two loudspeakers' delays, and not the same one, the channel of the farther one is
    /// delayed by the difference in whole frames (at most `longestChannelShiftFrames`), so that the
    /// filter, which starts at the nearer one's delay, covers both rooms from their start instead of
    /// only the first 155 ms less the difference of the farther one's. The MDF starts again (its response
    /// for that channel would be that many frames late), and so do the reference's decorrelation (a
    /// stereo mix's two channels, one shifted, are no longer the pair it measured) and the
    /// two-loudspeaker copy's ring, whose response for that channel is moved as many frames earlier.
    func considerChannelShift() {
        guard channelEstimatorsRun, loudspeakersConfirmed,
            let leftEstimate = leftEstimator?.delaySamples, let rightEstimate = rightEstimator?.delaySamples,
            (leftEstimator?.agreements ?? 0) >= 2, (rightEstimator?.agreements ?? 0) >= 2
        else { return }
        let (a, b) = loudspeakerDelays
        guard a >= 0 && b >= 0 else { return }
        let f = frameLength
        let frames = min(Int((abs(a - b) / Double(f)).rounded()), longestChannelShiftFrames)
        guard frames >= Self.shortestChannelShiftFrames else { return }
        let tolerance = Double(realignmentThreshold)
        let near = min(a, b)
        let far = max(a, b)
        if abs(leftEstimate - near) <= tolerance && abs(rightEstimate - far) <= tolerance {
            farChannel = 1
        } else if abs(leftEstimate - far) <= tolerance && abs(rightEstimate - near) <= tolerance {
            farChannel = 0
        } else {
            return
        }
        channelShiftFrames = frames
        twoLoudspeakerCopy.advance(farChannel, byFrames: frames)
        // The copy's ring holds the channel undelayed: it stands aside until the ring is refilled.
        twoLoudspeakerCopy.skip()
        decorrelation = VoiceReferenceDecorrelation(frameSeconds: Double(f) / settings.sampleRate)
        speex_echo_state_reset(echoState)
        // SpeexDSP's reset clears its DC notch too; the kernel's copy of it follows.
        let notch = notchMemory
        for i in 0..<(2 * settings.micChannels) { notch[i] = 0 }
        converged = false
        framesSinceAlignment = 0
    }

    /// Feeds each reference channel's own tracker while a shift may be made: two signals, none shifted
    /// yet, within `channelShiftWindowFrames` of the line's delay. They start afresh each time, and cost
    /// nothing otherwise.
    func pushChannelEstimators(reference: UnsafePointer<UnsafeMutablePointer<Float>>, mic: UnsafePointer<Float>) {
        let runs =
            allowsChannelShift && leftEstimator != nil && playsTwoSignals && channelShiftFrames == 0
            && framesSinceAlignment <= Self.channelShiftWindowFrames
        if runs && !channelEstimatorsRun {
            leftEstimator?.reset()
            rightEstimator?.reset()
        }
        channelEstimatorsRun = runs
        guard runs else { return }
        leftEstimator?.push(reference: reference[0], mic: mic, count: frameLength)
        rightEstimator?.push(reference: reference[1], mic: mic, count: frameLength)
    }

    /// The decorrelation's statistics from this frame's pair as the MDF gets it, the farther channel
    /// delayed.
    func updateShiftedDecorrelation() {
        let f = frameLength
        let mask = ringLength - 1
        let start = ringWrite - f - lineDelay
        let leftStart = start - (farChannel == 0 ? channelShiftFrames * f : 0)
        let rightStart = start - (farChannel == 1 ? channelShiftFrames * f : 0)
        var left = 0.0
        var right = 0.0
        var cross = 0.0
        for n in 0..<f {
            let l = Double(rings[(leftStart + n) & mask])
            let r = Double(rings[ringLength + ((rightStart + n) & mask)])
            left += l * l
            right += r * r
            cross += l * r
        }
        if hasFarEndSound(left: left, right: right) { decorrelation.update(left: left, right: right, cross: cross) }
    }
}

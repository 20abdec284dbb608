// Render side (the thread that calls `process`): the frame's entry, which keeps NaN, infinity and
// absurdly large samples out.

extension VoiceProcessorKernel {
    /// The largest input magnitude processed as it is (+36 dBFS); larger finite samples are clipped.
    static let inputLimit: Float = 64

    /// Processes exactly one frame (render thread; no allocation, no locks).
    /// - Parameters:
    ///   - mic: `settings.micChannels` pointers to `frameLength` microphone samples.
    ///   - reference: `settings.referenceChannels` pointers to `frameLength` samples of what the
    ///     loudspeakers play in the same period (the echo's source, undelayed).
    ///   - output: `settings.micChannels` pointers to `frameLength` samples; may alias `mic`.
    ///
    /// A NaN or an infinity on an input (another JACK client's bad output) counts as silence: it would
    /// stop the 16-bit conversion for the MDF, and stay for good in every average it reached (the delay
    /// tracker's cross-spectrum, the suppressor's estimates, the reference's statistics). A finite sample
    /// beyond ±`inputLimit` is clipped there: the loudspeaker-distortion learner raises the reference to
    /// the fifth power and its moments to the sixth, which overflow to infinity from about 10⁶. A frame
    /// is checked with a multiply-add and a maximum per sample (x · 0 is 0 for every finite x), and
    /// copied only when it holds such a sample.
    public func process(
        mic: UnsafePointer<UnsafeMutablePointer<Float>>, reference: UnsafePointer<UnsafeMutablePointer<Float>>,
        output: UnsafePointer<UnsafeMutablePointer<Float>>
    ) {
        let f = frameLength
        let limit = Self.inputLimit
        var check: Float = 0
        var peak: Float = 0
        for c in 0..<settings.micChannels {
            let x = mic[c]
            for n in 0..<f {
                check += x[n] * 0
                peak = max(peak, abs(x[n]))
            }
        }
        for c in 0..<settings.referenceChannels {
            let x = reference[c]
            for n in 0..<f {
                check += x[n] * 0
                peak = max(peak, abs(x[n]))
            }
        }
        if check == 0 && peak <= limit {
            processFinite(mic: mic, reference: reference, output: output)
            return
        }
        for c in 0..<settings.micChannels {
            let x = mic[c]
            let y = finiteMic[c]
            for n in 0..<f { y[n] = x[n].isFinite ? min(max(x[n], -limit), limit) : 0 }
        }
        for c in 0..<settings.referenceChannels {
            let x = reference[c]
            let y = finiteReference[c]
            for n in 0..<f { y[n] = x[n].isFinite ? min(max(x[n], -limit), limit) : 0 }
        }
        processFinite(mic: finiteMic, reference: finiteReference, output: output)
    }
}

// Render side (the thread that calls `process`): the frame's entry, which keeps NaN and infinity out.

extension VoiceProcessorKernel {
    /// Processes exactly one frame (render thread; no allocation, no locks).
    /// - Parameters:
    ///   - mic: `settings.micChannels` pointers to `frameLength` microphone samples.
    ///   - reference: `settings.referenceChannels` pointers to `frameLength` samples of what the
    ///     loudspeakers play in the same period (the echo's source, undelayed).
    ///   - output: `settings.micChannels` pointers to `frameLength` samples; may alias `mic`.
    ///
    /// A NaN or an infinity on an input (another JACK client's bad output) counts as silence: it would
    /// stop the 16-bit conversion for the MDF, and stay for good in every average it reached (the delay
    /// tracker's cross-spectrum, the suppressor's estimates, the reference's statistics). A frame is
    /// checked with one multiply-add per sample (x · 0 is 0 for every finite x), and copied only when
    /// it holds such a sample.
    public func process(
        mic: UnsafePointer<UnsafeMutablePointer<Float>>, reference: UnsafePointer<UnsafeMutablePointer<Float>>,
        output: UnsafePointer<UnsafeMutablePointer<Float>>
    ) {
        let f = frameLength
        var check: Float = 0
        for c in 0..<settings.micChannels {
            let x = mic[c]
            for n in 0..<f { check += x[n] * 0 }
        }
        for c in 0..<settings.referenceChannels {
            let x = reference[c]
            for n in 0..<f { check += x[n] * 0 }
        }
        if check == 0 {
            processFinite(mic: mic, reference: reference, output: output)
            return
        }
        for c in 0..<settings.micChannels {
            let x = mic[c]
            let y = finiteMic[c]
            for n in 0..<f { y[n] = x[n].isFinite ? x[n] : 0 }
        }
        for c in 0..<settings.referenceChannels {
            let x = reference[c]
            let y = finiteReference[c]
            for n in 0..<f { y[n] = x[n].isFinite ? x[n] : 0 }
        }
        processFinite(mic: finiteMic, reference: finiteReference, output: output)
    }
}

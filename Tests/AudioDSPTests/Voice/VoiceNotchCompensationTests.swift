import AudioDSP
import DSPTestSupport
import Testing

/// SpeexDSP's DC notch (mdf.c, float build) on one signal.
func speexNotch(_ x: [Float], sampleRate: Double) -> [Float] {
    let r = VoiceNotchCompensation.notchRadius(sampleRate: sampleRate)
    let den2 = VoiceNotchCompensation.notchPoleTerm(radius: r)
    var m0: Float = 0
    var m1: Float = 0
    return x.map { vin in
        let vout = m0 + vin
        m0 = m1 + 2 * (-vin + r * vout)
        m1 = vin - den2 * vout
        return r * vout
    }
}

@Suite struct VoiceNotchCompensationTests {
    /// Runs the compensation over `x` in frames, all marked `nearEndActive`.
    func compensate(_ x: [Float], sampleRate: Double, nearEndActive: Bool) -> [Float] {
        let f = 2 * Int(sampleRate / 200)
        var compensation = VoiceNotchCompensation(frameLength: f, sampleRate: sampleRate)
        var y = x
        let frame = UnsafeMutablePointer<Float>.allocate(capacity: f)
        defer { frame.deallocate() }
        var pointers = [frame]
        for start in stride(from: 0, to: x.count - f + 1, by: f) {
            for n in 0..<f { frame[n] = y[start + n] }
            compensation.process(&pointers, channelCount: 1, nearEndActive: nearEndActive)
            for n in 0..<f { y[start + n] = frame[n] }
        }
        return y
    }

    @Test(arguments: [16_000.0, 44_100.0, 48_000.0])
    func notchThenCompensationIsTheNotchMovedToThirtyHertz(sampleRate fs: Double) {
        // Closed form of N·C: the same notch at radius q, 1 − q = 2π·30 Hz/fs:
        // q(1 − z⁻¹)² / (1 − 2q z⁻¹ + e z⁻²), e = q² + 0.7(1 − q)².
        let q = 1 - 2 * EffectMath.pi * VoiceNotchCompensation.cornerHertz / fs
        let e = q * q + 0.7 * (1 - q) * (1 - q)
        func expected(_ hertz: Double) -> Double {
            let w = 2 * EffectMath.pi * hertz / fs
            let zero = 2 - 2 * EffectMath.cos(w)
            let poleRe = 1 - 2 * q * EffectMath.cos(w) + e * EffectMath.cos(2 * w)
            let poleIm = 2 * q * EffectMath.sin(w) - e * EffectMath.sin(2 * w)
            return 20 * EffectMath.log(q * zero / (poleRe * poleRe + poleIm * poleIm).squareRoot())
                / EffectMath.log(10)
        }
        let count = Int(2 * fs)
        for hertz in [60.0, 100.0, 150.0, 300.0, 1000.0] {
            let x = (0..<count).map { Float(0.1 * EffectMath.sin(2 * EffectMath.pi * hertz * Double($0) / fs)) }
            let notched = speexNotch(x, sampleRate: fs)
            let y = compensate(notched, sampleRate: fs, nearEndActive: true)
            // After the transients, over whole periods of the tone.
            let periods = Int((Double(count / 2) * hertz / fs).rounded(.down))
            let range = (count / 2)..<(count / 2 + Int((Double(periods) * fs / hertz).rounded()))
            let gain = Decibels.fromAmplitude(
                Goertzel.measure(y[range], frequency: hertz, sampleRate: fs).amplitude / 0.1)
            #expect(abs(gain - expected(hertz)) < 0.02, "\(hertz) Hz at \(fs): \(gain) dB, not \(expected(hertz))")
            let notchOnly = Decibels.fromAmplitude(
                Goertzel.measure(notched[range], frequency: hertz, sampleRate: fs).amplitude / 0.1)
            // What it gives back: the notch alone is below the high-pass wherever the two differ.
            #expect(gain >= notchOnly - 0.001)
        }
        #expect(expected(100) > -0.5, "\(expected(100)) dB at 100 Hz")
    }

    @Test func inFarEndTalkTheSignalPassesUntouched() {
        let fs = 48_000.0
        var talker = SpeechLikeSignal(seed: 3)
        let x = talker.make(count: Int(fs), sampleRate: fs, level: 0.1)
        #expect(compensate(x, sampleRate: fs, nearEndActive: false) == x)
    }

    @Test func aTalkersLowEndSurvivesTheProcessor() {
        // No far end: a 100 Hz talker (a male fundamental) under a syllabic envelope, through the whole
        // kernel. The DC notch alone takes 2.5 dB at 100 Hz at 48 kHz; the compensated chain 0.3 dB.
        let fs = 48_000.0
        let kernel = VoiceProcessorKernel(
            settings: VoiceProcessorSettings(agc: false, noiseSuppression: false, sampleRate: fs))
        let count = Int(4 * fs)
        let mic = (0..<count).map { n -> Float in
            let t = Double(n) / fs
            let syllable = 0.5 - 0.5 * EffectMath.cos(2 * EffectMath.pi * 4 * t)
            return Float(0.05 * syllable * EffectMath.sin(2 * EffectMath.pi * 100 * t))
        }
        let silence = [Float](repeating: 0, count: count)
        let (out, analysis) = runVoiceKernel(kernel, mic: mic, reference: silence)
        #expect(analysis.suffix(100).allSatisfy { $0.nearEndActive })
        let lag = kernel.latencyFrames
        let range = Int(fs)..<(count - lag)
        let delayed = [Float](repeating: 0, count: lag) + mic
        let gain = Decibels.fromAmplitude(
            Goertzel.measure(out[range], frequency: 100, sampleRate: fs).amplitude
                / Goertzel.measure(delayed[range], frequency: 100, sampleRate: fs).amplitude)
        #expect(gain > -0.6, "100 Hz talker through the processor: \(gain) dB")
        #expect(gain < 0.3, "100 Hz talker through the processor: \(gain) dB")
    }
}

// Tests. The cookbook biquads and the N-band EQ: measured response equals the analytic one for all 11
// filter types, the analytic designs hit their targets, band bypass, global gain, glides.
import AudioDSP
import DSPTestSupport
import Foundation
import Testing

@Suite struct EQKernelTests {
    /// Measured and analytic magnitudes agree within this many dB wherever |H| > −60 dB.
    static let responseToleranceDecibels = 0.05
    /// Below −60 dB the comparison is absolute (the measurement's floor is Float rounding).
    static let deepAbsoluteTolerance = 1e-5
    /// (frequency, bandwidth, gain) settings each filter type is measured at.
    static let settings: [(Double, Double, Double)] = [(100, 1, 12), (1000, 0.3, -18), (8000, 3, 6)]

    /// A one-band EQ with `type` at the given settings, band enabled.
    static func singleBand(_ type: EQFilterType, _ f: Double, _ bw: Double, _ gain: Double) -> EQKernel {
        var eq = EQKernel(sampleRate: effectTestRate, maxBlockFrames: 128, channelCount: 1, bandCount: 1)
        eq.setBandFilterType(0, type)
        eq.setBandFrequency(0, f)
        eq.setBandBandwidth(0, bw)
        eq.setBandGain(0, decibels: gain)
        eq.setBandBypass(0, false)
        return eq
    }

    /// Impulse response (16384 frames, all designs here decay below −200 dB well within it) → FFT,
    /// compared with `BiquadCoefficients.response(at:)` at 160 log-spaced bins from 20 Hz to 20 kHz.
    @Test(arguments: EQFilterType.allCases)
    func measuredResponseMatchesAnalyticBiquad(type: EQFilterType) {
        let size = 16_384
        for (f, bw, gain) in Self.settings {
            var eq = Self.singleBand(type, f, bw, gain)
            defer { eq.deallocate() }
            let design = BiquadCoefficients.eqBand(
                type: type, frequency: f, bandwidth: bw, gainDecibels: gain, sampleRate: effectTestRate)
            #expect(eq.bandCoefficients(0) == design, "settled coefficients are exactly the design")
            let ir = render(&eq, [impulse(frames: size)], blocks: [128])[0]
            let measured = FFT.magnitudes(ir, size: size)
            for step in 0..<160 {
                let target = 20 * pow(1000, Double(step) / 159)
                let bin = Int((target * Double(size) / effectTestRate).rounded())
                let frequency = Double(bin) * effectTestRate / Double(size)
                let analytic = design.response(at: frequency, sampleRate: effectTestRate).magnitude
                if analytic > 1e-3 {
                    let error = abs(20 * log10(measured[bin] / analytic))
                    #expect(
                        error <= Self.responseToleranceDecibels,
                        "\(type.name) f=\(f) bw=\(bw) g=\(gain): \(error) dB off at \(frequency) Hz")
                } else {
                    #expect(abs(measured[bin] - analytic) <= Self.deepAbsoluteTolerance)
                }
            }
        }
    }

    static func decibels(_ k: BiquadCoefficients, _ f: Double) -> Double {
        20 * log10(k.response(at: f, sampleRate: effectTestRate).magnitude)
    }

    @Test(arguments: [50.0, 1000, 12_000])
    func butterworthPassesAreMinus3dBAtCutoff(frequency: Double) {
        for type in [EQFilterType.lowPass, .highPass] {
            let k = BiquadCoefficients.eqBand(
                type: type, frequency: frequency, bandwidth: 2, gainDecibels: 10, sampleRate: effectTestRate)
            #expect(abs(Self.decibels(k, frequency) + 3.0103) < 1e-3, "\(type.name) at \(frequency)")
        }
        let lp = BiquadCoefficients.eqBand(
            type: .lowPass, frequency: frequency, bandwidth: 1, gainDecibels: 0, sampleRate: effectTestRate)
        #expect(abs(Self.decibels(lp, 1)) < 1e-3, "low pass is unity at DC")
        #expect(Self.decibels(lp, frequency * 2) < -3.0103, "and falls above the cutoff")
    }

    @Test func resonantPassesPeakAtTheirQ() {
        for bw in [0.1, 0.5, 1, 3] {
            let q = BiquadCoefficients.quality(bandwidth: bw, frequency: 1000, sampleRate: effectTestRate)
            for type in [EQFilterType.resonantLowPass, .resonantHighPass] {
                let k = BiquadCoefficients.eqBand(
                    type: type, frequency: 1000, bandwidth: bw, gainDecibels: 0, sampleRate: effectTestRate)
                let magnitude = k.response(at: 1000, sampleRate: effectTestRate).magnitude
                #expect(abs(magnitude - q) < 1e-9 * q, "\(type.name) bw \(bw): |H(f)| = Q")
            }
        }
        // 0.5 octave at 1 kHz is Q ≈ 2.87: a resonance about 9 dB above the pass band.
        let q = BiquadCoefficients.quality(bandwidth: 0.5, frequency: 1000, sampleRate: effectTestRate)
        #expect(abs(q - 2.871) < 0.01)
    }

    @Test func parametricPeaksAtGainWithHalfGainEdgesBandwidthApart() {
        for (f, bw, gain) in [(1000.0, 1.0, 12.0), (100, 0.3, -18), (2000, 2, 6)] {
            let k = BiquadCoefficients.eqBand(
                type: .parametric, frequency: f, bandwidth: bw, gainDecibels: gain, sampleRate: effectTestRate)
            #expect(abs(Self.decibels(k, f) - gain) < 1e-9)
            // The cookbook's bandwidth is between the gain/2 points; the bilinear correction makes it
            // exact to 0.01 octave below a few kHz (it compresses towards Nyquist).
            let edges = Self.edges(k, f, level: gain / 2)
            #expect(abs(log2(edges.upper / edges.lower) - bw) < 0.01, "f \(f) bw \(bw)")
            #expect(abs(Self.decibels(k, 1)) < 0.05 && abs(Self.decibels(k, 23_000)) < 0.5, "flat far away")
        }
    }

    @Test func bandPassAndStopShapes() {
        let bp = BiquadCoefficients.eqBand(
            type: .bandPass, frequency: 1000, bandwidth: 1, gainDecibels: 0, sampleRate: effectTestRate)
        #expect(abs(Self.decibels(bp, 1000)) < 1e-9)
        let edges = Self.edges(bp, 1000, level: -3.0103)
        #expect(abs(log2(edges.upper / edges.lower) - 1) < 0.01)
        let notch = BiquadCoefficients.eqBand(
            type: .bandStop, frequency: 1000, bandwidth: 1, gainDecibels: 0, sampleRate: effectTestRate)
        #expect(notch.response(at: 1000, sampleRate: effectTestRate).magnitude < 1e-9)
        #expect(abs(Self.decibels(notch, 20)) < 0.01 && abs(Self.decibels(notch, 20_000)) < 0.1)
    }

    @Test(arguments: [-18.0, 6, 15])
    func shelvesReachTheirPlateauWithHalfGainAtTheCorner(gain: Double) {
        let low = BiquadCoefficients.eqBand(
            type: .lowShelf, frequency: 300, bandwidth: 1, gainDecibels: gain, sampleRate: effectTestRate)
        #expect(abs(Self.decibels(low, 0) - gain) < 1e-9)
        #expect(abs(Self.decibels(low, 300) - gain / 2) < 1e-9)
        #expect(abs(Self.decibels(low, 24_000)) < 1e-6)
        let high = BiquadCoefficients.eqBand(
            type: .highShelf, frequency: 3000, bandwidth: 1, gainDecibels: gain, sampleRate: effectTestRate)
        #expect(abs(Self.decibels(high, 24_000) - gain) < 1e-9)
        #expect(abs(Self.decibels(high, 3000) - gain / 2) < 1e-9)
        #expect(abs(Self.decibels(high, 0)) < 1e-6)
        // Slope S = 1: monotonic, never beyond the plateau.
        for f in stride(from: 10.0, to: 23_000, by: 37) {
            #expect(abs(Self.decibels(low, f)) <= abs(gain) + 1e-9)
            #expect(abs(Self.decibels(high, f)) <= abs(gain) + 1e-9)
        }
    }

    @Test func resonantShelvesOvershootTheirPlateau() {
        let k = BiquadCoefficients.eqBand(
            type: .resonantLowShelf, frequency: 300, bandwidth: 0.5, gainDecibels: 12, sampleRate: effectTestRate)
        #expect(abs(Self.decibels(k, 0) - 12) < 1e-9)
        #expect(abs(Self.decibels(k, 300) - 6) < 1e-9)
        let peak = stride(from: 10.0, to: 1000, by: 5).map { Self.decibels(k, $0) }.max()!
        #expect(peak > 13, "resonant bump above the 12 dB plateau (\(peak) dB)")
        let h = BiquadCoefficients.eqBand(
            type: .resonantHighShelf, frequency: 3000, bandwidth: 0.5, gainDecibels: -12, sampleRate: effectTestRate)
        #expect(abs(Self.decibels(h, 24_000) + 12) < 1e-9)
        let dip = stride(from: 1000.0, to: 23_000, by: 50).map { Self.decibels(h, $0) }.min()!
        #expect(dip < -13, "resonant dip below the −12 dB plateau (\(dip) dB)")
    }

    /// The frequencies below and above `f` where the response crosses `level` dB (bisection).
    static func edges(_ k: BiquadCoefficients, _ f: Double, level: Double) -> (lower: Double, upper: Double) {
        func cross(_ a: Double, _ b: Double) -> Double {
            var lo = a, hi = b
            let sign = (decibels(k, lo) - level) > 0
            for _ in 0..<80 {
                let mid = (lo * hi).squareRoot()
                if ((decibels(k, mid) - level) > 0) == sign { lo = mid } else { hi = mid }
            }
            return (lo * hi).squareRoot()
        }
        return (cross(1, f), cross(f, 23_999))
    }

    @Test func bandsStartBypassedAndPassTheInputExactly() {
        var eq = EQKernel(sampleRate: effectTestRate, maxBlockFrames: 64, channelCount: 2, bandCount: 16)
        defer { eq.deallocate() }
        #expect((0..<16).allSatisfy { eq.band($0).isBypassed })
        eq.setBandGain(3, decibels: 12)  // a bypassed band's settings do not matter
        let x = noise(frames: 2000, seed: 11)
        let out = render(&eq, [x, noise(frames: 2000, seed: 12)], blocks: [64])
        #expect(out[0] == x)
    }

    @Test func globalGainScalesTheOutput() {
        var eq = EQKernel(sampleRate: effectTestRate, maxBlockFrames: 64, channelCount: 1, bandCount: 2)
        defer { eq.deallocate() }
        eq.setGlobalGain(decibels: -6)
        let x = noise(frames: 1000, seed: 3)
        let out = render(&eq, [x], blocks: [64])[0]
        let g = Float(pow(10, -6.0 / 20))
        #expect(zip(out, x).allSatisfy { abs($0 - $1 * g) <= 1e-6 })
    }

    @Test func bypassingOneBandLeavesTheOtherBandsResponse() {
        var eq = EQKernel(sampleRate: effectTestRate, maxBlockFrames: 128, channelCount: 1, bandCount: 2)
        defer { eq.deallocate() }
        for (band, f) in [(0, 200.0), (1, 5000.0)] {
            eq.setBandFrequency(band, f)
            eq.setBandGain(band, decibels: 9)
            eq.setBandBandwidth(band, 1)
            eq.setBandBypass(band, false)
        }
        eq.setBandBypass(0, true)
        let ir = render(&eq, [impulse(frames: 8192)], blocks: [128])[0]
        let measured = FFT.magnitudes(ir, size: 8192)
        let band1 = eq.bandCoefficients(1)
        for bin in stride(from: 4, to: 4000, by: 40) {
            let f = Double(bin) * effectTestRate / 8192
            let analytic = band1.response(at: f, sampleRate: effectTestRate).magnitude
            #expect(abs(20 * log10(measured[bin] / analytic)) < Self.responseToleranceDecibels)
        }
    }

    /// Frequency, gain and type changes on a running band glide: the output's steps stay within what a
    /// 1 kHz sine through a +12 dB band can produce (4 × 2π·1000/48000), and the glide lands exactly on
    /// the new design.
    @Test func bandChangesGlideWithoutClicks() {
        var eq = Self.singleBand(.parametric, 1000, 1, 0)
        defer { eq.deallocate() }
        let x = TestSignal.sine(frequency: 1000, sampleRate: effectTestRate, frames: 24_000, amplitude: 1)
        let out = render(&eq, [x], blocks: [128]) { k, offset in
            if offset == 4096 { k.setBandGain(0, decibels: 12) }
            if offset == 8192 { k.setBandFrequency(0, 3000) }
            if offset == 12_288 { k.setBandFilterType(0, .lowPass) }
            if offset == 16_384 { k.setBandBypass(0, true) }
        }[0]
        #expect(SignalStats.maxStep(out[...]) <= 4 * 2 * Float.pi * 1000 / 48_000)
        #expect(eq.band(0).type == .lowPass && eq.band(0).isBypassed)
        let landed = BiquadCoefficients.eqBand(
            type: .lowPass, frequency: 3000, bandwidth: 1, gainDecibels: 12, sampleRate: effectTestRate)
        #expect(eq.bandCoefficients(0) == landed)
    }
}

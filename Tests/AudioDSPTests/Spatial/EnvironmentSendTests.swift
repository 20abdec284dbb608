// Tests. Reverb blend (equal power), obstruction and occlusion levels measured at 5 kHz, which paths
// each one filters, and the identity at the defaults.
import AudioDSP
import DSPTestSupport
import Foundation
import Testing

@Suite struct EnvironmentSendTests {
    @Test func reverbBlendIsAnEqualPowerCrossfade() {
        for i in 0...20 {
            let b = Double(i) / 20
            let (dry, wet) = EnvironmentSend.reverbBlendGains(b)
            #expect(abs(dry * dry + wet * wet - 1) < 1e-15)
        }
        #expect(EnvironmentSend.reverbBlendGains(0) == (1, 0))
        #expect(EnvironmentSend.reverbBlendGains(1) == (0, 1))
        let half = EnvironmentSend.reverbBlendGains(0.5)
        #expect(abs(half.dry - half.wet) < 1e-15 && abs(half.dry - 0.5.squareRoot()) < 1e-15)
    }

    /// Renders a sine through the filter and returns the (direct, reverb) amplitudes.
    static func measure(
        frequency: Double, blend: Double, obstruction: Double, occlusion: Double,
        occlusionRatio: Double = 0
    ) -> (direct: Double, reverb: Double) {
        var f = SourceEnvironmentFilter(sampleRate: spatialTestRate)
        f.occlusionLowFrequencyRatio = occlusionRatio
        f.setParameters(
            reverbBlend: blend, obstructionDecibels: obstruction, occlusionDecibels: occlusion, rampFrames: 0)
        let x = TestSignal.sine(frequency: frequency, sampleRate: spatialTestRate, frames: 14_400)
        var direct = x
        var send = [Float](repeating: 0, count: x.count)
        x.withUnsafeBufferPointer { i in
            direct.withUnsafeMutableBufferPointer { d in
                send.withUnsafeMutableBufferPointer { s in
                    f.process(
                        input: i.baseAddress!, direct: d.baseAddress!, reverbSend: s.baseAddress!, frames: x.count)
                }
            }
        }
        let window = 4800..<14_400  // 0.2 s, whole cycles of 5 kHz and 100 Hz
        return (
            Goertzel.measure(direct[window], frequency: frequency, sampleRate: spatialTestRate).amplitude,
            Goertzel.measure(send[window], frequency: frequency, sampleRate: spatialTestRate).amplitude
        )
    }

    @Test(arguments: [-3.0, -12, -40, -80])
    func obstructionIsTheLevelAt5kHzOnTheDirectPathOnly(decibels: Double) {
        let m = Self.measure(frequency: 5000, blend: 0.5, obstruction: decibels, occlusion: 0)
        let dry = 0.5.squareRoot()
        #expect(abs(20 * log10(m.direct / dry) - decibels) < 0.01, "direct \(20 * log10(m.direct / dry)) dB")
        #expect(abs(m.reverb - dry) < 1e-4, "the reverb send is untouched")
        // A low-pass: low frequencies pass (unless the level is extreme).
        if decibels >= -12 {
            let low = Self.measure(frequency: 100, blend: 0.5, obstruction: decibels, occlusion: 0)
            #expect(abs(20 * log10(low.direct / dry)) < 0.1)
        }
    }

    @Test(arguments: [-6.0, -20, -60])
    func occlusionIsTheLevelAt5kHzOnBothPaths(decibels: Double) {
        let m = Self.measure(frequency: 5000, blend: 0.5, obstruction: 0, occlusion: decibels)
        let dry = 0.5.squareRoot()
        #expect(abs(20 * log10(m.direct / dry) - decibels) < 0.01)
        #expect(abs(20 * log10(m.reverb / dry) - decibels) < 0.01)
        // Obstruction and occlusion add on the direct path.
        let both = Self.measure(frequency: 5000, blend: 0, obstruction: -10, occlusion: decibels)
        #expect(abs(20 * log10(both.direct) - (decibels - 10)) < 0.01)
    }

    /// With I3DL2's low-frequency ratio r, r·A is a broadband gain and the total at 5 kHz is still A.
    @Test func lowFrequencyRatioMovesPartOfTheLevelIntoABroadbandGain() {
        let at5k = Self.measure(frequency: 5000, blend: 0, obstruction: 0, occlusion: -24, occlusionRatio: 0.25)
        #expect(abs(20 * log10(at5k.direct) + 24) < 0.01)
        let at100 = Self.measure(frequency: 100, blend: 0, obstruction: 0, occlusion: -24, occlusionRatio: 0.25)
        // Expected at 100 Hz: −6 dB broadband times the one-pole y += a(x − y) designed for −18 dB at
        // 5 kHz: |H|² = a²/(1 − 2p cos ω + p²), p = 1 − a, solved for p at 5 kHz (smaller root).
        let g2 = pow(10, -18.0 / 10)
        let c5 = cos(2 * Double.pi * 5000 / spatialTestRate)
        let (qa, qb, qc) = (1 - g2, -2 * (1 - g2 * c5), 1 - g2)  // qa·p² + qb·p + qc = 0
        let p = (-qb - (qb * qb - 4 * qa * qc).squareRoot()) / (2 * qa)
        let c1 = cos(2 * Double.pi * 100 / spatialTestRate)
        let expected = -6 + 20 * log10((1 - p) / (1 - 2 * p * c1 + p * p).squareRoot())
        #expect(abs(20 * log10(at100.direct) - expected) < 0.01, "\(20 * log10(at100.direct)) dB at 100 Hz")
    }

    /// A first-order low-pass at −100 dB (at 5 kHz) still lets the lowest frequencies through, as the
    /// closed form says (SPATIAL.md: −70.6 dB at 200 Hz, −58.6 at 50 for obstruction): a wall muffles.
    @Test(arguments: [50.0, 200.0])
    func minus100dBStillPassesTheLowestFrequenciesAsTheClosedFormSays(frequency: Double) {
        let dry = 0.5.squareRoot()
        let m = Self.measure(frequency: frequency, blend: 0.5, obstruction: -100, occlusion: 0)
        let a = EnvironmentSend.lowPassCoefficient(decibels: -100, sampleRate: spatialTestRate)
        let expected =
            20 * log10(EnvironmentSend.lowPassMagnitude(a: a, frequency: frequency, sampleRate: spatialTestRate))
        #expect(abs(20 * log10(m.direct / dry) - expected) < 0.05, "\(frequency) Hz: \(20 * log10(m.direct / dry)) dB")
        #expect(expected > -75 && expected < -55, "\(frequency) Hz: \(expected) dB")
    }

    @Test func defaultsAreTheIdentityAndMinus100dBIsSilentAt5kHz() {
        let x = spatialNoise(frames: 500, seed: 5)
        var f = SourceEnvironmentFilter(sampleRate: spatialTestRate)
        var direct = [Float](repeating: 0, count: x.count)
        var send = [Float](repeating: 0, count: x.count)
        x.withUnsafeBufferPointer { i in
            direct.withUnsafeMutableBufferPointer { d in
                send.withUnsafeMutableBufferPointer { s in
                    f.process(
                        input: i.baseAddress!, direct: d.baseAddress!, reverbSend: s.baseAddress!, frames: x.count)
                }
            }
        }
        #expect(direct == x && send.allSatisfy { $0 == 0 })
        let silent = Self.measure(frequency: 5000, blend: 0.5, obstruction: 0, occlusion: -100)
        #expect(20 * log10(silent.direct) < -100 && 20 * log10(silent.reverb) < -100)
        // The closed-form magnitude agrees with the design.
        for level in [-0.5, -30.0, -100] {
            let a = EnvironmentSend.lowPassCoefficient(decibels: level, sampleRate: spatialTestRate)
            let m = EnvironmentSend.lowPassMagnitude(a: a, frequency: 5000, sampleRate: spatialTestRate)
            #expect(abs(20 * log10(m) - level) < 1e-9, "\(level) dB")
        }
    }
}

// Tests. The distortion presets: bounded output, pre-gain and wet/dry laws, and the signature of the
// components (harmonics of the polynomial terms, ring-modulation sidebands, echo spacing).
import AudioDSP
import DSPTestSupport
import Foundation
import Testing

@Suite struct DistortionKernelTests {
    static func kernel(_ preset: DistortionPreset, preGain: Double = -6, wet: Double = 100) -> DistortionKernel {
        var k = DistortionKernel(sampleRate: effectTestRate, maxBlockFrames: 128, channelCount: 1)
        k.setPreset(preset)
        k.setPreGain(decibels: preGain)
        k.setWetDryMix(percent: wet)
        return k
    }

    static func sine(_ f: Double = 1000, frames: Int = 9600, amplitude: Float = 1) -> [Float] {
        TestSignal.sine(frequency: f, sampleRate: effectTestRate, frames: frames, amplitude: amplitude)
    }

    /// At the loudest pre-gain the output stays within ±4/3: the soft clipper's ±2/3 through the output DC
    /// blocker y = x − (1 − R)·Σ R^(k−1)·x(n − k), whose second term is a weighted mean of past inputs
    /// (weights summing to 1), so |y| ≤ 2·max|x|. At the default pre-gain it is audible.
    @Test(arguments: DistortionPreset.allCases)
    func everyPresetGivesFiniteBoundedOutput(preset: DistortionPreset) {
        for gain in [20.0, -6] {
            var k = Self.kernel(preset, preGain: gain)
            defer { k.deallocate() }
            let out = render(&k, [Self.sine()])[0]
            #expect(out.allSatisfy { $0.isFinite && abs($0) <= 4.0 / 3.0 })
            #expect(SignalStats.rms(out[...]) > 0.01, "\(preset.name) at \(gain) dB is audible")
        }
    }

    /// No preset leaves DC. A steady 1 kHz sine (full scale and −12 dBFS), 100 % wet, at the default
    /// pre-gain and at 0 dB: the mean of the output from 1 s to 2 s, Hann-weighted (so the partial periods
    /// of slow ring carriers at the window's edges do not count), is below −60 dBFS (0.001). Before the
    /// output DC blocker, multiBrokenSpeaker left −0.15, multiEverythingIsBroken −0.30.
    @Test(arguments: DistortionPreset.allCases)
    func outputHasNoDC(preset: DistortionPreset) {
        for gain in [-6.0, 0] {
            for amplitude: Float in [1, 0.25] {
                var k = Self.kernel(preset, preGain: gain)
                defer { k.deallocate() }
                let y = render(&k, [Self.sine(frames: 96_000, amplitude: amplitude)])[0]
                var sum = 0.0
                var weights = 0.0
                for i in 0..<48_000 {
                    let w = 0.5 - 0.5 * cos(2 * Double.pi * Double(i) / 48_000)
                    sum += w * Double(y[48_000 + i])
                    weights += w
                }
                let mean = sum / weights
                #expect(abs(mean) < 0.001, "\(preset.name), pre-gain \(gain) dB, amplitude \(amplitude): DC \(mean)")
            }
        }
    }

    @Test(arguments: DistortionPreset.allCases)
    func minus80dBPreGainSilencesTheWetPath(preset: DistortionPreset) {
        var k = Self.kernel(preset, preGain: -80)
        defer { k.deallocate() }
        let out = render(&k, [Self.sine()])[0]
        // x·10⁻⁴ through at most ×6 drive and ×20 echo build-up: below −40 dBFS.
        #expect(SignalStats.peak(out[...]) < 0.01)
    }

    @Test func zeroWetIsTheDryInputExactly() {
        for preset in DistortionPreset.allCases {
            var k = Self.kernel(preset, preGain: 20, wet: 0)
            defer { k.deallocate() }
            let x = noise(frames: 2000, seed: UInt64(preset.rawValue + 1))
            #expect(render(&k, [x])[0] == x, "\(preset.name)")
        }
    }

    @Test func wetDryMixIsLinear() {
        let x = Self.sine(frames: 4800)
        var wet = Self.kernel(.multiBrokenSpeaker, wet: 100)
        var half = Self.kernel(.multiBrokenSpeaker, wet: 25)
        defer {
            wet.deallocate()
            half.deallocate()
        }
        let w = render(&wet, [x])[0]
        let m = render(&half, [x])[0]
        for i in 0..<x.count { #expect(abs(m[i] - (0.75 * x[i] + 0.25 * w[i])) < 1e-6) }
    }

    /// Amplitude of harmonic `n` of 1 kHz in the last 0.1 s (an integer number of cycles).
    static func harmonic(_ y: [Float], _ n: Double) -> Double {
        Goertzel.measure(y[(y.count - 4800)...], frequency: 1000 * n, sampleRate: effectTestRate).amplitude
    }

    /// The cubed term and the soft clip are odd: only odd harmonics. The squared term adds even ones.
    @Test func polynomialTermsGiveTheirHarmonics() {
        var cubed = Self.kernel(.multiDistortedCubed, preGain: -12)
        var squared = Self.kernel(.multiDistortedSquared, preGain: -12)
        defer {
            cubed.deallocate()
            squared.deallocate()
        }
        let c = render(&cubed, [Self.sine()])[0]
        let s = render(&squared, [Self.sine()])[0]
        #expect(Self.harmonic(c, 3) > 0.01 && Self.harmonic(c, 2) < 1e-4 * Self.harmonic(c, 1))
        #expect(Self.harmonic(s, 2) > 0.05 * Self.harmonic(s, 1))
    }

    /// Ring modulation (speechAlienChatter: 700 and 1130 Hz, ring mix 1) moves a 1 kHz sine to
    /// 1000 ± 700 and 1000 ± 1130 Hz and suppresses 1 kHz itself.
    @Test func ringModulationMovesTheSineToSidebands() {
        var k = Self.kernel(.speechAlienChatter, preGain: -20)
        defer { k.deallocate() }
        let y = render(&k, [Self.sine(frames: 48_000)])[0]
        let tail = y[(y.count - 48_000 / 2)...]
        func amplitude(_ f: Double) -> Double {
            Goertzel.measure(tail, frequency: f, sampleRate: effectTestRate).amplitude
        }
        let carrier = amplitude(1000)
        let sideband = amplitude(1700)
        #expect(sideband > 100 * carrier, "sideband \(sideband), residual carrier \(carrier)")
    }

    /// The echo presets repeat a click at their delay, each repeat smaller by the feedback.
    @Test func echoPresetsRepeatAtTheirDelay() {
        var k = Self.kernel(.multiEcho1, preGain: 0, wet: 100)
        defer { k.deallocate() }
        let delay = Int(0.15 * effectTestRate + 0.5)
        let y = render(&k, [impulse(frames: 4 * delay + 10, amplitude: 0.01)])[0]
        // Small enough that the soft clip is linear within 1e-5: the direct click is 0.005·1.2, each echo
        // 0.5 (mix) · 0.5^(n−1) (feedback) of the input after the drive.
        #expect(abs(y[0] - 0.006) < 1e-5)
        #expect(abs(y[delay] - 0.006) < 1e-5)
        #expect(abs(y[2 * delay] - 0.003) < 1e-5)
        #expect(abs(y[3 * delay] - 0.0015) < 1e-5)
    }

    @Test func presetNamesFollowTheInventory() {
        #expect(DistortionPreset.allCases.count == 22)
        #expect(DistortionPreset.allNames.first == "drumsBitBrush")
        #expect(DistortionPreset.allNames.last == "speechWaves")
        #expect(DistortionPreset(name: "multiDecimated3")?.rawValue == 7)
        #expect(DistortionPreset(name: "speechRadioTower")?.rawValue == 20)
    }
}

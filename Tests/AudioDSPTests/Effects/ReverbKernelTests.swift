// Tests. The FDN reverb: RT60 of every preset measured from its impulse response, stereo decorrelation,
// echo density, absence of metallic ringing, and a decaying, finite tail.
import AudioDSP
import DSPTestSupport
import Foundation
import Testing

@Suite struct ReverbKernelTests {
    /// The stereo impulse response of `preset`, 100 % wet, `seconds` long.
    static func impulseResponse(_ preset: ReverbPreset, seconds: Double) -> [[Float]] {
        var kernel = ReverbKernel(sampleRate: effectTestRate, maxBlockFrames: 256, channelCount: 2)
        defer { kernel.deallocate() }
        kernel.setPreset(preset)
        kernel.setWetDryMix(percent: 100)
        let x = impulse(frames: Int(seconds * effectTestRate))
        return render(&kernel, [x, x], blocks: [256])
    }

    /// 0.6 s impulse responses of all presets, rendered once and shared by the tail-quality tests.
    static let tails: [[[Float]]] = ReverbPreset.allCases.map { impulseResponse($0, seconds: 0.6) }

    /// First frame after the pre-delay and `milliseconds` more.
    static func frame(after milliseconds: Double, _ preset: ReverbPreset) -> Int {
        Int((preset.design.preDelay + milliseconds) / 1000 * effectTestRate)
    }

    /// ISO 3382 T30 in the 1 kHz octave band (three cascaded cookbook band-passes), from the Schroeder
    /// curve of an impulse response long enough to reach about −51 dB; must be within ±10 %.
    @Test(arguments: ReverbPreset.allCases)
    func presetRT60MatchesDocumentedValue(preset: ReverbPreset) {
        let design = preset.design
        let ir = Self.impulseResponse(preset, seconds: design.preDelay / 1000 + design.rt60 * 0.85)
        for (side, channel) in ir.enumerated() {
            let band = Decay.octaveBand(channel, center: 1000, sampleRate: effectTestRate)
            let measured = Decay.rt60(curve: Decay.energyDecayCurve(band), sampleRate: effectTestRate)
            #expect(
                abs(measured - design.rt60) <= 0.1 * design.rt60,
                "\(preset.name) channel \(side): measured \(measured) s, documented \(design.rt60) s")
        }
    }

    @Test func presetsHaveDistinctDecayTimesAndNames() {
        let times = ReverbPresetDesign.table.map(\.rt60)
        #expect(Set(times).count == 13)
        #expect(
            ReverbPreset.allNames == [
                "smallRoom", "mediumRoom", "largeRoom", "mediumHall", "largeHall", "plate", "mediumChamber",
                "largeChamber", "cathedral", "largeRoom2", "mediumHall2", "mediumHall3", "largeHall2"
            ])
        #expect(ReverbPreset(name: "cathedral") == .cathedral)
        #expect(ReverbPreset(name: "closet") == nil)
    }

    /// Left and right tails (50 ms after the pre-delay onwards) are nearly uncorrelated.
    @Test(arguments: ReverbPreset.allCases)
    func stereoTailsAreDecorrelated(preset: ReverbPreset) {
        let ir = Self.tails[preset.rawValue]
        let start = Self.frame(after: 50, preset)
        let rho = Decay.correlation(ir[0][start...], ir[1][start...])
        #expect(abs(rho) < 0.2, "\(preset.name): L/R correlation \(rho)")
    }

    /// Normalized echo density (J. S. Abel and P. Huang, "A simple, robust measure of reverberation echo
    /// density", AES 121st Convention, 2006): the share of samples beyond one local standard deviation
    /// in 20 ms windows, divided by Gaussian noise's share (erfc(1/√2) = 0.3173). Sparse early echoes
    /// give ≪ 1; a dense, noise-like tail gives ≈ 1. It must start low and reach ≥ 0.9 by 0.4–0.6 s.
    @Test(arguments: ReverbPreset.allCases)
    func echoDensityGrowsToThatOfNoise(preset: ReverbPreset) {
        let ir = Self.tails[preset.rawValue][0]
        let window = Int(0.02 * effectTestRate)
        func density(at start: Int) -> Double {
            let segment = ir[start..<(start + window)]
            let energy = segment.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(window)
            let sigma = energy.squareRoot()
            return Double(segment.filter { Double(abs($0)) > sigma }.count) / Double(window) / 0.317_310_5
        }
        let first = density(at: 0)
        let late =
            stride(from: Int(0.4 * effectTestRate), to: Int(0.6 * effectTestRate), by: window)
            .map(density).reduce(0, +) / 10
        #expect(first < 0.7, "\(preset.name): first 20 ms density \(first)")
        #expect(late >= 0.9, "\(preset.name): density at 0.4–0.6 s \(late)")
    }

    /// No resonance stands out of the tail's spectrum: a Welch average of Hann-windowed 2048-point
    /// periodograms (each normalized to unit energy, 50 % overlap, from 50 ms to 0.6 s) stays within
    /// `peakLimitDecibels` of its running median over ±1/6 octave, 200 Hz – 8 kHz. With ≥ 20 averaged
    /// segments a dense tail's bins scatter by about ±1 dB; a metallic mode persists in every segment
    /// and stands 10 dB or more above its neighbours (the comb check below proves the detector sees it).
    @Test(arguments: ReverbPreset.allCases)
    func tailSpectrumHasNoMetallicPeaks(preset: ReverbPreset) {
        let ir = Self.tails[preset.rawValue]
        for channel in ir {
            let start = Self.frame(after: 50, preset)
            let peak = Spectrum.largestPeakAboveMedian(Array(channel[start..<Int(0.6 * effectTestRate)]))
            #expect(peak < Spectrum.peakLimitDecibels, "\(preset.name): peak \(peak) dB above local median")
        }
    }

    @Test func ringingDetectorFlagsAFeedbackComb() {
        // A single comb (8 ms loop, gain 0.9) fed with an impulse: the textbook metallic ringer.
        let loop = 384
        var y = [Float](repeating: 0, count: Int(0.6 * effectTestRate))
        y[0] = 1
        for i in loop..<y.count { y[i] += 0.9 * y[i - loop] }
        #expect(Spectrum.largestPeakAboveMedian(Array(y[2400...])) > Spectrum.peakLimitDecibels)
    }

    /// After the build-up, every 100 ms window holds less energy than the one before, and the IR is
    /// finite.
    @Test(arguments: ReverbPreset.allCases)
    func tailEnergyIsFiniteAndDecays(preset: ReverbPreset) {
        for channel in Self.tails[preset.rawValue] {
            #expect(channel.allSatisfy { $0.isFinite })
            let window = Int(0.1 * effectTestRate)
            let start = Self.frame(after: 100, preset)
            var previous = Double.infinity
            for w in stride(from: start, through: channel.count - window, by: window) {
                let energy = channel[w..<(w + window)].reduce(0.0) { $0 + Double($1) * Double($1) }
                #expect(energy < previous, "\(preset.name): energy rose at \(w) frames")
                previous = energy
            }
        }
    }

    @Test func presetChangeFadesWithoutClick() {
        var kernel = ReverbKernel(sampleRate: effectTestRate, maxBlockFrames: 128, channelCount: 2)
        defer { kernel.deallocate() }
        kernel.setWetDryMix(percent: 100)
        let x = TestSignal.sine(frequency: 300, sampleRate: effectTestRate, frames: 24_000, amplitude: 0.5)
        let out = render(&kernel, [x, x], blocks: [128]) { k, offset in
            if offset == 12_032 { k.setPreset(.smallRoom) }
        }
        #expect(kernel.preset == .smallRoom)
        // Across the change no step exceeds the steady steps of the old or the new preset by more than
        // the fade's share.
        let before = SignalStats.maxStep(out[0][6000..<12_000])
        let after = SignalStats.maxStep(out[0][18_000..<24_000])
        let across = SignalStats.maxStep(out[0][12_000..<14_000])
        #expect(across <= 1.2 * max(before, after), "step \(across); steady \(before) before, \(after) after")
    }
}

enum Spectrum {
    static let peakLimitDecibels = 9.0

    static func largestPeakAboveMedian(_ x: [Float], sampleRate: Double = effectTestRate) -> Double {
        let n = 2048
        var psd = [Double](repeating: 0, count: n / 2 + 1)
        var start = 0
        while start + n <= x.count {
            let segment = (0..<n).map { i in
                Float(Double(x[start + i]) * (0.5 - 0.5 * cos(2 * Double.pi * Double(i) / Double(n))))
            }
            let power = FFT.magnitudes(segment, size: n).map { $0 * $0 }
            let total = max(power.reduce(0, +), 1e-300)
            for k in 0..<power.count { psd[k] += power[k] / total }
            start += n / 2
        }
        let sixth = pow(2, 1.0 / 6)
        var worst = -Double.infinity
        for k in Int(200 / sampleRate * Double(n))...Int(8000 / sampleRate * Double(n)) {
            let lo = max(1, Int(Double(k) / sixth)), hi = min(psd.count - 1, Int(Double(k) * sixth) + 1)
            let neighbourhood = psd[lo...hi].sorted()
            worst = max(worst, 10 * log10(psd[k] / neighbourhood[neighbourhood.count / 2]))
        }
        return worst
    }
}

// Tests. The render-side contract every effect kernel shares: bypass null test and click-free bypass,
// block-size and in-place invariance, reset clears the tail, and a seeded robustness sweep over every
// declared parameter range.
import AudioDSP
import DSPTestSupport
import Foundation
import Testing

/// The four effect kernels, each built with non-trivial settings so that their output differs from
/// their input.
enum EffectKind: String, CaseIterable, CustomTestStringConvertible {
    case eq, delay, reverb, distortion

    var testDescription: String { rawValue }

    func make(channelCount: Int = 2, maxBlockFrames: Int = 128) -> any EffectKernelUnderTest {
        switch self {
        case .eq:
            var k = EQKernel(
                sampleRate: effectTestRate, maxBlockFrames: maxBlockFrames, channelCount: channelCount, bandCount: 3)
            let bands: [(Int, EQFilterType, Double)] = [
                (0, .lowShelf, 200), (1, .parametric, 1500), (2, .resonantLowPass, 9000)
            ]
            for (band, type, f) in bands {
                k.setBandFilterType(band, type)
                k.setBandFrequency(band, f)
                k.setBandGain(band, decibels: 6)
                k.setBandBypass(band, false)
            }
            return k
        case .delay:
            var k = DelayKernel(sampleRate: effectTestRate, maxBlockFrames: maxBlockFrames, channelCount: channelCount)
            k.setDelayTime(0.0123)
            k.setFeedback(percent: -60)
            k.setLowPassCutoff(3000)
            k.setWetDryMix(percent: 60)
            return k
        case .reverb:
            var k = ReverbKernel(sampleRate: effectTestRate, maxBlockFrames: maxBlockFrames, channelCount: channelCount)
            k.setPreset(.smallRoom)
            k.setWetDryMix(percent: 50)
            return k
        case .distortion:
            var k = DistortionKernel(
                sampleRate: effectTestRate, maxBlockFrames: maxBlockFrames, channelCount: channelCount)
            k.setPreset(.multiEverythingIsBroken)
            return k
        }
    }

    /// Applies a mid-stream change that exercises the kernel's glides, ticks or fades.
    func change(_ kernel: inout any EffectKernelUnderTest) {
        switch kernel {
        case var k as EQKernel:
            k.setBandFrequency(1, 4000)
            k.setBandFilterType(0, .highShelf)
            k.setGlobalGain(decibels: -3)
            kernel = k
        case var k as DelayKernel:
            k.setDelayTime(0.0071)
            k.setLowPassCutoff(500)
            k.setFeedback(percent: 40)
            kernel = k
        case var k as ReverbKernel:
            k.setPreset(.plate)
            k.setWetDryMix(percent: 80)
            kernel = k
        case var k as DistortionKernel:
            k.setPreset(.speechWaves)
            k.setPreGain(decibels: 6)
            kernel = k
        default:
            Issue.record("unknown kernel")
        }
    }
}

/// Renders `input` in two segments with `change` between them, so glides start mid-stream.
func renderWithChange(
    _ kind: EffectKind, _ input: [[Float]], blocks: [Int], inPlace: Bool = false, changeAt: Int
) -> [[Float]] {
    var kernel = kind.make(channelCount: input.count)
    defer { kernel.deallocate() }
    let first = render(&kernel, input.map { Array($0[..<changeAt]) }, blocks: blocks, inPlace: inPlace)
    kind.change(&kernel)
    let second = render(&kernel, input.map { Array($0[changeAt...]) }, blocks: blocks, inPlace: inPlace)
    return zip(first, second).map { $0 + $1 }
}

@Suite struct EffectKernelContractTests {
    static let stereoNoise = [
        noise(frames: 6000, seed: 21, amplitude: 0.5), noise(frames: 6000, seed: 22, amplitude: 0.5)
    ]

    /// A kernel bypassed before it runs, and one bypassed mid-stream once its 10 ms crossfade has settled,
    /// output exactly their input.
    @Test(arguments: EffectKind.allCases)
    func bypassedKernelPassesInputBitExactly(kind: EffectKind) {
        var kernel = kind.make()
        defer { kernel.deallocate() }
        kernel.setBypass(true)
        #expect(render(&kernel, Self.stereoNoise) == Self.stereoNoise)

        var running = kind.make()
        defer { running.deallocate() }
        _ = render(&running, Self.stereoNoise)
        running.setBypass(true)
        let out = render(&running, Self.stereoNoise)
        #expect(out.map { Array($0[480...]) } == Self.stereoNoise.map { Array($0[480...]) })
        #expect(out != Self.stereoNoise, "the first 10 ms crossfade")
    }

    /// Toggling bypass on a sine never steps further than the steady steps of the processed or the dry
    /// signal plus the crossfade's own slope (|processed − dry| / 480 per frame).
    @Test(arguments: EffectKind.allCases)
    func bypassCrossfadeIsClickFree(kind: EffectKind) {
        var kernel = kind.make(channelCount: 1)
        defer { kernel.deallocate() }
        let x = TestSignal.sine(frequency: 330, sampleRate: effectTestRate, frames: 28_800, amplitude: 0.5)
        let processed = render(&kernel, [Array(x[..<9600])])[0]
        kernel.setBypass(true)
        let fadeOut = render(&kernel, [Array(x[9600..<19_200])])[0]
        kernel.setBypass(false)
        let fadeIn = render(&kernel, [Array(x[19_200...])])[0]
        let out = processed + fadeOut + fadeIn
        let steady = max(
            SignalStats.maxStep(processed[4800...]), SignalStats.maxStep(x[...]),
            SignalStats.maxStep(fadeIn[9600...]))
        let bound = steady + 2 / 480
        #expect(SignalStats.maxStep(out[9000..<10_600]) <= bound)
        #expect(SignalStats.maxStep(out[18_600..<20_200]) <= bound)
    }

    /// Blocks of 1, 7, 64 and 128 frames, random splits, and in-place processing all give the same
    /// samples, bit for bit, including a parameter change mid-stream.
    @Test(arguments: EffectKind.allCases)
    func blockSizeDoesNotChangeOutput(kind: EffectKind) {
        let reference = renderWithChange(kind, Self.stereoNoise, blocks: [128], changeAt: 2500)
        for blocks in [[1], [7], [64], randomSplits(seed: 77), randomSplits(seed: 78, maximum: 40)] {
            let out = renderWithChange(kind, Self.stereoNoise, blocks: blocks, changeAt: 2500)
            #expect(out == reference, "blocks \(blocks.prefix(4))…: max difference \(maxDifference(out, reference))")
        }
        let inPlace = renderWithChange(kind, Self.stereoNoise, blocks: [64], inPlace: true, changeAt: 2500)
        #expect(inPlace == reference, "in place")
    }

    /// After `reset()`, silence in gives silence out: no tail survives.
    @Test(arguments: EffectKind.allCases)
    func resetClearsTheTail(kind: EffectKind) {
        var kernel = kind.make()
        defer { kernel.deallocate() }
        _ = render(&kernel, Self.stereoNoise)
        kernel.reset()
        let silence = [[Float]](repeating: [Float](repeating: 0, count: 4800), count: 2)
        let out = render(&kernel, silence)
        #expect(out.allSatisfy { $0.allSatisfy { $0 == 0 } })
        // Without the reset the tail is audible (the check above is not vacuous).
        var other = kind.make()
        defer { other.deallocate() }
        _ = render(&other, Self.stereoNoise)
        let tail = render(&other, silence)
        #expect(tail.contains { $0.contains { $0 != 0 } })
    }

    /// Seeded random parameters across each kernel's declared ranges (including the extremes), changed
    /// every 20 ms, with random input, bypass toggles and presets: the output stays finite, bounded and
    /// free of subnormal numbers, also through half a second of silence afterwards.
    @Test(arguments: EffectKind.allCases)
    func robustnessSweepStaysFiniteBoundedAndNormal(kind: EffectKind) {
        var rng = SeededRandom(seed: 0xF00D &+ UInt64(kind.rawValue.count))
        for round in 0..<3 {
            var kernel = kind.make(channelCount: 2, maxBlockFrames: 256)
            defer { kernel.deallocate() }
            var worstCaseDecibels = -Double.infinity
            let segments = 24
            var outputs: [Float] = []
            for segment in 0..<(segments + 25) {
                let loud = segment < segments
                if loud { worstCaseDecibels = max(worstCaseDecibels, Self.randomize(&kernel, &rng)) }
                let frames = 960
                let amplitude: Float = loud ? (round == 0 ? 1 : Float(rng.nextInt(1..<1000)) / 1000) : 0
                let input = (0..<2).map { _ in (0..<frames).map { _ in rng.nextFloat() * amplitude } }
                let blocks = randomSplits(seed: rng.next(), count: 16, maximum: 256)
                for channel in render(&kernel, input, blocks: blocks) { outputs += channel }
            }
            let bound = Float(Self.bound(kind, worstCaseDecibels: worstCaseDecibels))
            #expect(outputs.allSatisfy { $0.isFinite }, "\(kind) round \(round): non-finite output")
            #expect(outputs.allSatisfy { abs($0) <= bound }, "\(kind) round \(round): beyond \(bound)")
            let subnormals = outputs.filter(\.isSubnormal).count
            #expect(subnormals == 0, "\(kind) round \(round): \(subnormals) subnormal samples")
        }
    }

    /// A loose ceiling on |output| for input within ±1.
    static func bound(_ kind: EffectKind, worstCaseDecibels: Double) -> Double {
        switch kind {
        case .eq: return pow(10, (max(worstCaseDecibels, 0) + 20) / 20)  // peak analytic gain + 20 dB
        case .delay: return 17  // dry 1 + the loop's ±16 clamp
        case .reverb: return 8
        case .distortion: return 1  // dry ≤ 1 and wet ≤ 2/3, mixed linearly
        }
    }

    /// Sets every parameter of the kernel to a random value in its declared range (a quarter of the
    /// time exactly at an end). Returns, for the EQ, its largest analytic gain in dB (the sum over the
    /// active bands of each design's peak, plus the global gain).
    static func randomize(_ kernel: inout any EffectKernelUnderTest, _ rng: inout SeededRandom) -> Double {
        func value(_ p: EffectParameter) -> Double {
            let range = p.range(sampleRate: effectTestRate)
            switch rng.nextInt(0..<8) {
            case 0: return range.lowerBound
            case 1: return range.upperBound
            default:
                let fraction = Double(rng.nextInt(0..<10_001)) / 10_000
                return range.lowerBound + fraction * (range.upperBound - range.lowerBound)
            }
        }
        let bypass = rng.nextInt(0..<6) == 0
        switch kernel {
        case var k as EQKernel:
            var total = 0.0
            let global = value(EQKernel.globalParameters[0])
            k.setParameter(0, value: global)
            for band in 0..<k.bandCount {
                for p in EQBandParameter.allCases {
                    let v = value(EQKernel.bandParameters[p.rawValue])
                    k.setParameter(EQKernel.parameterIndex(band: band, p), value: v)
                }
                let band = k.band(band)
                if !band.isBypassed {
                    let design = BiquadCoefficients.eqBand(
                        type: band.requestedType, frequency: band.frequency, bandwidth: band.bandwidth,
                        gainDecibels: band.gainDecibels, sampleRate: effectTestRate)
                    let peak = (0...400).map {
                        design.response(at: 10 * pow(2400, Double($0) / 400), sampleRate: effectTestRate).magnitude
                    }.max()!
                    total += max(0, 20 * log10(peak))
                }
            }
            k.setBypass(bypass)
            kernel = k
            return total + max(global, 0)
        case var k as DelayKernel:
            for (i, p) in DelayKernel.parameters.enumerated() { k.setParameter(i, value: value(p)) }
            k.setBypass(bypass)
            kernel = k
        case var k as ReverbKernel:
            for (i, p) in ReverbKernel.parameters.enumerated() { k.setParameter(i, value: value(p)) }
            k.setBypass(bypass)
            kernel = k
        case var k as DistortionKernel:
            for (i, p) in DistortionKernel.parameters.enumerated() { k.setParameter(i, value: value(p)) }
            k.setBypass(bypass)
            kernel = k
        default:
            Issue.record("unknown kernel")
        }
        return 0
    }

    /// NaN never reaches the render state: setters ignore it.
    @Test func notANumberIsIgnored() {
        var delay = DelayKernel(sampleRate: effectTestRate, maxBlockFrames: 64, channelCount: 1)
        defer { delay.deallocate() }
        for i in 0..<4 { delay.setParameter(i, value: .nan) }
        #expect(delay.delayTime == 1)
        var eq = EQKernel(sampleRate: effectTestRate, maxBlockFrames: 64, channelCount: 1, bandCount: 1)
        defer { eq.deallocate() }
        for i in 0..<6 { eq.setParameter(i, value: .nan) }
        #expect(eq.band(0).frequency == 1000 && eq.band(0).bandwidth == 0.5)
        let x = noise(frames: 256, seed: 1)
        #expect(render(&delay, [x])[0].allSatisfy { $0.isFinite })
        #expect(render(&eq, [x])[0] == x)
    }
}

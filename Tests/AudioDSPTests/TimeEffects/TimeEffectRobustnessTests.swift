// Tests. Seeded random sweeps of every time-effect parameter across its declared range (extremes
// included), with random input, block sizes, bypass toggles and resets: the output stays finite, bounded
// and free of subnormal numbers, also through silence afterwards.
import AudioDSP
import DSPTestSupport
import Foundation
import Testing

@Suite struct TimeEffectRobustnessTests {
    /// A random value in `parameter`'s range: one of the ends a quarter of the time, otherwise uniform
    /// (log-uniform for the rates).
    static func randomValue(_ parameter: EffectParameter, _ rng: inout SeededRandom) -> Double {
        let range = parameter.range(sampleRate: effectTestRate)
        switch rng.nextInt(0..<8) {
        case 0: return range.lowerBound
        case 1: return range.upperBound
        default:
            let u = Double(rng.nextInt(0..<10_001)) / 10_000
            if parameter.name == "rate" {
                return exp(log(range.lowerBound) + u * (log(range.upperBound) - log(range.lowerBound)))
            }
            return range.lowerBound + u * (range.upperBound - range.lowerBound)
        }
    }

    static func sweep<K: PullKernelUnderTest>(
        _ kernel: inout K, parameters: [EffectParameter], seed: UInt64, seconds: Int, bound: Float
    ) {
        var rng = SeededRandom(seed: seed)
        var amplitude: Float = 1
        var outputs: [[Float]] = []
        let loudBlocks = seconds * 375
        let run = pullRun(&kernel, frames: (loudBlocks + 150) * 128, block: 128) { _, _ in
            rng.nextFloat() * amplitude
        } onBlock: { k, frame in
            let block = frame / 128
            if block >= loudBlocks {
                amplitude = 0
                return
            }
            if block % 8 == 0 {
                for (index, parameter) in parameters.enumerated() where rng.nextInt(0..<2) == 0 {
                    k.setParameter(index, value: randomValue(parameter, &rng))
                }
                amplitude = [1, 0.5, 1e-3, 1e-6][rng.nextInt(0..<4)]
            }
            if block % 97 == 50 { k.setBypass(rng.nextInt(0..<2) == 0) }
            if block % 331 == 200 { k.reset() }
        }
        outputs = run.output
        #expect(outputs.allSatisfy { $0.allSatisfy(\.isFinite) }, "non-finite output")
        let peak = outputs.map { SignalStats.peak($0[...]) }.max() ?? 0
        #expect(peak <= bound, "peak \(peak)")
        #expect(!hasSubnormal(outputs), "subnormal output")
        #expect(!run.hitPushLimit)
        // The silence at the end decays to (exact) silence.
        #expect(outputs.allSatisfy { $0.suffix(6400).allSatisfy { $0 == 0 } }, "no silence after the input stops")
    }

    @Test func timePitchSweepStaysFiniteBoundedAndNormal() {
        var k = TimePitchKernel(sampleRate: effectTestRate, maxBlockFrames: 128, channelCount: 2)
        defer { k.deallocate() }
        // A phase vocoder does not bound its output by the input's peak; 4 (+12 dBFS) is a loose ceiling.
        Self.sweep(&k, parameters: TimePitchKernel.parameters, seed: 0xBEEF, seconds: 12, bound: 4)
    }

    @Test func varispeedSweepStaysFiniteBoundedAndNormal() {
        var k = VarispeedKernel(sampleRate: effectTestRate, maxBlockFrames: 128, channelCount: 2)
        defer { k.deallocate() }
        // Band-limited interpolation of full-scale noise overshoots: |y| ≤ Σ|taps| ≈ 3.4 half-way between
        // samples (the sum of |sinc| over 64 taps); random noise reaches about 1.8.
        Self.sweep(&k, parameters: VarispeedKernel.parameters, seed: 0xCAFE, seconds: 12, bound: 3.5)
    }
}

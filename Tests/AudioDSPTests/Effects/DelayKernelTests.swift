// Tests. The feedback delay: exact impulse response, feedback filtering against a Double reference,
// wet/dry law, click-free delay-time glides.
import AudioDSP
import DSPTestSupport
import Foundation
import Testing

@Suite struct DelayKernelTests {
    static func kernel(delay: Double, feedback: Double, cutoff: Double = 24_000, wet: Double = 100) -> DelayKernel {
        var k = DelayKernel(sampleRate: effectTestRate, maxBlockFrames: 128, channelCount: 1)
        k.setDelayTime(delay)
        k.setFeedback(percent: feedback)
        k.setLowPassCutoff(cutoff)
        k.setWetDryMix(percent: wet)
        return k
    }

    /// With the low-pass at Nyquist (exactly the identity) the echoes are δ at n·D scaled by
    /// feedback^(n−1), and every other sample is exactly zero. Negative feedback alternates the sign.
    @Test(arguments: [50.0, -50, 100, -100])
    func echoesSitAtMultiplesOfTheDelayScaledByFeedbackPowers(feedback: Double) {
        let delayFrames = 480
        var k = Self.kernel(delay: Double(delayFrames) / effectTestRate, feedback: feedback)
        defer { k.deallocate() }
        let out = render(&k, [impulse(frames: delayFrames * 6 + 7)], blocks: [128])[0]
        let fb = Float(feedback / 100)
        for (i, v) in out.enumerated() {
            if i > 0 && i % delayFrames == 0 {
                let n = i / delayFrames
                var expected: Float = 1
                for _ in 1..<n { expected *= fb }
                #expect(v == expected, "echo \(n)")
            } else {
                #expect(v == 0, "frame \(i) between echoes")
            }
        }
    }

    /// With a cutoff below Nyquist the whole response equals a Double-precision reference of the same
    /// structure (y = s(n − D), s = x + fb·LP(y), LP the prewarped bilinear one-pole), to 1e-6.
    @Test(arguments: [(2000.0, 60.0), (300, -80), (10, 95)])
    func feedbackLowPassFiltersEveryEcho(cutoff: Double, feedback: Double) {
        let delayFrames = 300
        var k = Self.kernel(delay: Double(delayFrames) / effectTestRate, feedback: feedback, cutoff: cutoff)
        defer { k.deallocate() }
        let x = noise(frames: 4000, seed: 5, amplitude: 0.5)
        let out = render(&k, [x], blocks: [128])[0]
        // Reference.
        let kk = tan(Double.pi * cutoff / effectTestRate)
        let b = kk / (1 + kk), a1 = (kk - 1) / (kk + 1)
        var state = 0.0
        var line = [Double](repeating: 0, count: x.count)
        var worst = 0.0
        for n in 0..<x.count {
            let y = n >= delayFrames ? line[n - delayFrames] : 0
            let lp = b * y + state
            state = b * y - a1 * lp
            line[n] = Double(x[n]) + feedback / 100 * lp
            worst = max(worst, abs(y - Double(out[n])))
        }
        #expect(worst < 1e-6, "largest deviation \(worst)")
    }

    @Test func wetDryMixIsLinearAndZeroIsDryExactly() {
        let x = noise(frames: 3000, seed: 9)
        var dryOnly = Self.kernel(delay: 0.003, feedback: 40, wet: 0)
        var wetOnly = Self.kernel(delay: 0.003, feedback: 40, wet: 100)
        var mixed = Self.kernel(delay: 0.003, feedback: 40, wet: 30)
        defer {
            dryOnly.deallocate()
            wetOnly.deallocate()
            mixed.deallocate()
        }
        #expect(render(&dryOnly, [x])[0] == x)
        let wet = render(&wetOnly, [x])[0]
        let mix = render(&mixed, [x])[0]
        for i in 0..<x.count { #expect(abs(mix[i] - (0.7 * x[i] + 0.3 * wet[i])) < 1e-6) }
    }

    @Test func zeroDelayIsTheIdentity() {
        var k = Self.kernel(delay: 0, feedback: 0)
        defer { k.deallocate() }
        let x = noise(frames: 1000, seed: 2)
        #expect(render(&k, [x])[0] == x)
    }

    /// Long and short jumps of the delay time mid-stream: the read position glides at ≤ 0.5 frame per
    /// frame, so each pass through the line scales a sine's frequency (and slope) by at most 1.5; the
    /// n-th echo has passed n times and is scaled by feedback^(n−1). A unit sine's steps therefore stay
    /// within 2πf/fs · Σ 0.3ⁿ·1.5ⁿ⁺¹ = 2πf/fs · 1.5/(1 − 0.45) (plus 2 % for interpolation), where a jump
    /// would step by up to 2. The glide ends exactly on the new delay.
    @Test func delayTimeChangesGlideWithoutClicks() {
        var k = Self.kernel(delay: 0.1, feedback: 30, cutoff: 24_000)
        defer { k.deallocate() }
        let f = 440.0
        let x = TestSignal.sine(frequency: f, sampleRate: effectTestRate, frames: 96_000)
        let out = render(&k, [x], blocks: [128]) { k, offset in
            if offset == 9600 { k.setDelayTime(0.35) }
            if offset == 48_000 { k.setDelayTime(0.002) }
            if offset == 60_032 { k.setDelayTime(0.0021) }
        }[0]
        let bound = Float(2 * Double.pi * f / effectTestRate * 1.5 / (1 - 0.3 * 1.5) * 1.02)
        #expect(SignalStats.maxStep(out[...]) <= bound)
        #expect(abs(k.delayTime - 0.0021) < 1e-12)
        // After the glide the taps are exactly 0.0021 s (100.8 frames) late: compare with a fresh kernel.
        var fresh = Self.kernel(delay: 0.0021, feedback: 30)
        defer { fresh.deallocate() }
        let reference = render(&fresh, [x])[0]
        #expect(maxDifference([Array(out[86_000...])], [Array(reference[86_000...])]) < 1e-4)
    }
}

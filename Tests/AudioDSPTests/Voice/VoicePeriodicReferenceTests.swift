@testable import AudioDSP
import DSPTestSupport
import Testing

/// A reference that repeats (a game's looped tones, a held synthesizer note) correlates with the echo
/// at every repetition, and GCC-PHAT's whitening of its line spectrum raises peaks between them; the
/// tracker once moved the delay line between 0.4, 64 and 500 ms on such a reference, and each move cost
/// the canceller up to 45 dB for a second.
@Suite struct VoicePeriodicReferenceTests {
    static let fs = 48_000.0

    static func triangle(_ n: Int, _ frequency: Double) -> Float {
        let p = (Double(n) * frequency / fs).truncatingRemainder(dividingBy: 1)
        return Float(p < 0.5 ? 4 * p - 1 : 3 - 4 * p)
    }

    static func square(_ n: Int, _ frequency: Double) -> Float {
        (Double(n) * frequency / fs).truncatingRemainder(dividingBy: 1) < 0.5 ? 1 : -1
    }

    /// `patches/gamechat.yaml`'s game sound on the engine's two outputs (a 220 Hz triangle in the
    /// middle, a 660 Hz square panned right), its echo 64 ms later: the delay found stays, and the
    /// echo stays cancelled in every 100 ms after the first 2 s.
    @Test(arguments: [VoiceProcessingMode.quality, .lowComplexity])
    func aLoopingReferenceKeepsItsDelay(mode: VoiceProcessingMode) {
        let fs = Self.fs
        let kernel = VoiceProcessorKernel(
            settings: VoiceProcessorSettings(
                mode: mode, agc: false, noiseSuppression: true, referenceChannels: 2, sampleRate: fs))
        let count = Int(12 * fs)
        let music = (0..<count).map { 0.2 * 0.7 * 0.707 * Self.triangle($0, 220) }
        let effects = (0..<count).map { 0.1 * 0.5 * Self.square($0, 660) }
        let left = (0..<count).map { music[$0] + 0.383 * effects[$0] }
        let right = (0..<count).map { music[$0] + 0.924 * effects[$0] }
        let mic = echoPath(
            (0..<count).map { left[$0] + right[$0] }, delay: Int(0.064 * fs), sampleRate: fs, gain: 0.5)
        var delays: [Float] = []
        let out = processWithTwoReferences(
            kernel, mic: mic, left: left, right: right,
            afterFrame: { _ in
                delays.append(kernel.analysis.delayMs)
            })
        let known = delays.filter { $0 >= 0 }
        #expect(known.count > delays.count - 50, "a delay within 0.5 s")
        #expect(known.allSatisfy { abs($0 - 64) <= 1 }, "delays \(Set(known.map { Int($0.rounded()) }).sorted()) ms")
        var worst = Double.infinity
        for start in stride(from: Int(2 * fs), to: count - 4800, by: 4800) {
            let window = start..<(start + 4800)
            worst = min(worst, decibels(meanSquare(mic[window]) / meanSquare(out[window])))
        }
        // 20 dB (low complexity) and 32 dB (quality) while the line moved; 76 and 66 dB since.
        #expect(worst >= 45, "worst 100 ms: \(worst) dB")
    }

    /// Chords (three notes with harmonics, a new one every 0.5 s, decaying): tonal, but not one loop;
    /// a jump of the echo path from 20 to 110 ms is followed within 2 s.
    @Test func changingChordsAreStillTracked() {
        let fs = Self.fs
        var estimator = EchoDelayEstimator(sampleRate: fs, maximumDelaySeconds: 0.5)
        defer { estimator.deallocate() }
        let count = Int(8 * fs)
        let roots: [Double] = [220, 246.94, 261.63, 293.66, 329.63, 349.23, 392, 440]
        let reference = (0..<count).map { n -> Float in
            let t = Double(n) / fs
            let chord = Int(t / 0.5)
            let root = roots[chord % roots.count]
            var v = 0.0
            for ratio in [1.0, 1.26, 1.5] {
                for h in 1...5 { v += EffectMath.sin(2 * EffectMath.pi * root * ratio * Double(h) * t) / Double(h) }
            }
            return Float(0.03 * v * EffectMath.exp(-2 * (t - Double(chord) * 0.5)))
        }
        let first = echoPath(reference, delay: Int(0.020 * fs), sampleRate: fs, gain: 0.5)
        let second = echoPath(reference, delay: Int(0.110 * fs), sampleRate: fs, gain: 0.5)
        let jump = Int(4 * fs)
        let mic = (0..<count).map { $0 < jump ? first[$0] : second[$0] }
        var estimates: [Double] = []
        var repeating = 0
        reference.withUnsafeBufferPointer { r in
            mic.withUnsafeBufferPointer { m in
                for start in stride(from: 0, to: count, by: 480) {
                    estimator.push(reference: r.baseAddress! + start, mic: m.baseAddress! + start, count: 480)
                    estimates.append(estimator.delayMilliseconds)
                    if estimator.referenceRepeats { repeating += 1 }
                }
            }
        }
        #expect(abs(estimates[jump / 480 - 1] - 20) <= 1)
        #expect(abs(estimates[(jump + Int(2 * fs)) / 480] - 110) <= 1)
        // Some held chords count as repeating, most blocks do not.
        #expect(repeating < estimates.count / 4)
    }

    /// The same loop from the first sample: the tracker may take any of its repetitions first, and then
    /// holds it; the canceller is as good at any of them.
    @Test func aLoopHeardFromTheStartIsCancelledWhereverTheDelayLands() {
        let fs = Self.fs
        let kernel = VoiceProcessorKernel(
            settings: VoiceProcessorSettings(mode: .lowComplexity, agc: false, noiseSuppression: false, sampleRate: fs))
        let count = Int(8 * fs)
        let reference = (0..<count).map { 0.1 * Self.triangle($0, 220) + 0.05 * Self.square($0, 660) }
        let mic = echoPath(reference, delay: Int(0.120 * fs), sampleRate: fs, gain: 0.5)
        var delays: [Float] = []
        let (out, _) = runVoiceKernel(kernel, mic: mic, reference: reference) { _ in
            delays.append(kernel.analysis.delayMs)
        }
        let known = delays.filter { $0 >= 0 }
        #expect(Set(known).count <= 1, "delays \(Set(known).sorted()) ms")
        let tail = (count - Int(4 * fs))..<count
        let erle = decibels(meanSquare(mic[tail]) / meanSquare(out[tail]))
        #expect(erle >= 40, "ERLE \(erle) dB")
    }
}

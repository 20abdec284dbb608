@testable import AudioDSP
import DSPTestSupport
import Testing

/// Deterministic speech-like test signals: low-passed noise under a syllabic envelope with pauses.
struct SpeechLikeSignal {
    var state: UInt64
    var low: Float = 0
    init(seed: UInt64) { state = seed }

    mutating func noise() -> Float {
        state ^= state << 13
        state ^= state >> 7
        state ^= state << 17
        return Float(Double(state >> 11) / Double(1 << 53)) * 2 - 1
    }

    /// `count` samples at `sampleRate`, active level about `level` (RMS) while the envelope is on.
    mutating func make(count: Int, sampleRate: Double, level: Float) -> [Float] {
        var out = [Float](repeating: 0, count: count)
        for n in 0..<count {
            let t = Double(n) / sampleRate
            // Four syllables a second, a 0.4 s pause every 2 s.
            let syllable = Float(0.5 - 0.5 * EffectMath.cos(2 * EffectMath.pi * 4 * t))
            let gate: Float = t.truncatingRemainder(dividingBy: 2) < 1.6 ? 1 : 0
            low = 0.7 * low + 0.3 * noise()
            out[n] = low * syllable * gate * level * 3.2
        }
        return out
    }
}

func meanSquare(_ x: ArraySlice<Float>) -> Double {
    x.reduce(0) { $0 + Double($1) * Double($1) } / Double(max(1, x.count))
}

func decibels(_ ratio: Double) -> Double { 10 * EffectMath.log(max(ratio, 1e-30)) / EffectMath.log(10) }

/// Runs a mono kernel over whole signals, frame by frame; returns the output and the per-frame analysis.
/// `afterFrame`, if given, is called after each frame with the frame's first sample index.
func runVoiceKernel(
    _ kernel: VoiceProcessorKernel, mic: [Float], reference: [Float], afterFrame: ((Int) -> Void)? = nil
) -> (output: [Float], analysis: [VoiceAnalysis]) {
    let f = kernel.frameLength
    let micFrame = UnsafeMutablePointer<Float>.allocate(capacity: f)
    let referenceFrame = UnsafeMutablePointer<Float>.allocate(capacity: f)
    let outFrame = UnsafeMutablePointer<Float>.allocate(capacity: f)
    defer {
        micFrame.deallocate()
        referenceFrame.deallocate()
        outFrame.deallocate()
    }
    var micPointers = [micFrame]
    var referencePointers = [referenceFrame]
    var outPointers = [outFrame]
    var output = [Float](repeating: 0, count: mic.count)
    var analysis: [VoiceAnalysis] = []
    var start = 0
    while start + f <= mic.count {
        for n in 0..<f {
            micFrame[n] = mic[start + n]
            referenceFrame[n] = reference[start + n]
        }
        kernel.process(mic: &micPointers, reference: &referencePointers, output: &outPointers)
        for n in 0..<f { output[start + n] = outFrame[n] }
        analysis.append(kernel.analysis)
        afterFrame?(start)
        start += f
    }
    return (output, analysis)
}

/// The talker's part of `output` (which lags the input by `lag` samples) over `range` of the talker's
/// samples: its projection on the talker, in dB.
func talkerGain(_ output: [Float], _ talker: [Float], over range: Range<Int>, lag: Int) -> Double {
    var cross: Double = 0
    var power: Double = 0
    for n in range {
        cross += Double(output[n + lag]) * Double(talker[n])
        power += Double(talker[n]) * Double(talker[n])
    }
    return 20 * EffectMath.log(max(cross / power, 1e-9)) / EffectMath.log(10)
}

/// A fixed echo path: the direct sound after `delay` samples, then a decaying sparse tail over 40 ms.
func echoPath(_ x: [Float], delay: Int, sampleRate: Double, gain: Float) -> [Float] {
    var taps: [(Int, Float)] = [(delay, gain)]
    var seed = SpeechLikeSignal(seed: 99)
    let tail = Int(0.04 * sampleRate)
    for k in stride(from: 7, to: tail, by: 5) {
        let decay = Float(EffectMath.exp(-5 * Double(k) / Double(tail)))
        taps.append((delay + k, gain * 0.3 * decay * seed.noise()))
    }
    var y = [Float](repeating: 0, count: x.count)
    for (lag, g) in taps {
        for n in lag..<x.count { y[n] += g * x[n - lag] }
    }
    return y
}

/// Runs `kernel` (one microphone, two reference channels) over whole signals, frame by frame, and returns
/// its output. `around(frame, process)` makes each `process` call (to count what it allocates, say);
/// `afterFrame(frame)` runs after each.
func processWithTwoReferences(
    _ kernel: VoiceProcessorKernel, mic: [Float], left: [Float], right: [Float],
    around: (Int, () -> Void) -> Void = { $1() }, afterFrame: (Int) -> Void = { _ in }
) -> [Float] {
    let f = kernel.frameLength
    let buffers = (0..<4).map { _ in UnsafeMutablePointer<Float>.allocate(capacity: f) }
    defer { buffers.forEach { $0.deallocate() } }
    var micPointers = [buffers[0]]
    var referencePointers = [buffers[1], buffers[2]]
    var outPointers = [buffers[3]]
    var output = [Float](repeating: 0, count: mic.count)
    var start = 0
    while start + f <= mic.count {
        for n in 0..<f {
            buffers[0][n] = mic[start + n]
            buffers[1][n] = left[start + n]
            buffers[2][n] = right[start + n]
        }
        around(start / f) { kernel.process(mic: &micPointers, reference: &referencePointers, output: &outPointers) }
        for n in 0..<f { output[start + n] = buffers[3][n] }
        afterFrame(start / f)
        start += f
    }
    return output
}

@Suite struct VoiceProcessorKernelTests {
    @Test func withoutReferenceTheOutputIsTheMicDelayedByTheLatency() {
        let fs = 16_000.0
        let kernel = VoiceProcessorKernel(
            settings: VoiceProcessorSettings(agc: false, noiseSuppression: false, sampleRate: fs))
        #expect(kernel.frameLength == 160)
        // Half a frame: the suppressor's hop.
        #expect(kernel.latencyFrames == 80)
        let count = Int(fs)
        let mic = (0..<count).map { n -> Float in
            let t = Double(n) / fs
            return Float(
                0.02 * EffectMath.sin(2 * EffectMath.pi * 1000 * t) + 0.01
                    * EffectMath.sin(2 * EffectMath.pi * 2500 * t)
                    + 0.01 * EffectMath.sin(2 * EffectMath.pi * 4100 * t))
        }
        let silence = [Float](repeating: 0, count: count)
        let (out, _) = runVoiceKernel(kernel, mic: mic, reference: silence)
        // The output is the mic half a frame later, up to speex's DC notch (a few degrees of phase at
        // 1 kHz, 0.16 dB of gain) and 16-bit quantization: the best-matching lag is the latency, the
        // match is close and the level the same.
        func correlation(_ lag: Int) -> Double {
            var cross = 0.0
            var outPower = 0.0
            var micPower = 0.0
            for n in 3200..<count {
                cross += Double(out[n]) * Double(mic[n - lag])
                outPower += Double(out[n]) * Double(out[n])
                micPower += Double(mic[n - lag]) * Double(mic[n - lag])
            }
            return cross / (outPower * micPower).squareRoot()
        }
        let lags = (kernel.latencyFrames - 8)...(kernel.latencyFrames + 8)
        let best = lags.max { correlation($0) < correlation($1) }
        #expect(best == kernel.latencyFrames)
        #expect(correlation(kernel.latencyFrames) > 0.99)
        let gain = decibels(meanSquare(out[3200...]) / meanSquare(mic[3200...]))
        #expect(abs(gain) < 0.3, "gain \(gain) dB")
    }

    @Test func aPureEchoIsCancelledAndItsDelayFound() {
        let fs = 16_000.0
        let kernel = VoiceProcessorKernel(
            settings: VoiceProcessorSettings(agc: false, noiseSuppression: false, sampleRate: fs))
        let count = Int(8 * fs)
        var talker = SpeechLikeSignal(seed: 42)
        let reference = talker.make(count: count, sampleRate: fs, level: 0.05)
        let delay = Int(0.060 * fs)
        let mic = echoPath(reference, delay: delay, sampleRate: fs, gain: 0.5)
        let (out, analysis) = runVoiceKernel(kernel, mic: mic, reference: reference)
        // Converged: the last 2 s, where the echo is active.
        let tail = (count - Int(2 * fs))..<count
        let erle = decibels(meanSquare(mic[tail]) / meanSquare(out[tail]))
        #expect(erle >= 30, "ERLE \(erle) dB")
        let reported = analysis.last?.delayMs ?? -1
        #expect(abs(Double(reported) - 60) <= 1, "delay \(reported) ms")
        // The meter's ERLE is the output's: within 8 dB of what the last 2 s measure (it read 38 dB
        // where 63 dB were measured, leaving the linear stage's share out).
        let meter = Double(analysis.last?.erleDb ?? 0)
        #expect(abs(meter - erle) < 8, "meter \(meter) dB, measured \(erle) dB")
    }

    /// At quality mode's hop (128 ms) and low-complexity mode's (256 ms): the delay within 2 s of a jump.
    @Test(arguments: [1024, 2048])
    func theDelayTrackerFollowsAJump(hop: Int) {
        let fs = 16_000.0
        var estimator = EchoDelayEstimator(sampleRate: fs, maximumDelaySeconds: 0.5, hop: hop)
        defer { estimator.deallocate() }
        var talker = SpeechLikeSignal(seed: 7)
        let count = Int(6 * fs)
        let reference = talker.make(count: count, sampleRate: fs, level: 0.05)
        let first = echoPath(reference, delay: Int(0.020 * fs), sampleRate: fs, gain: 0.5)
        let second = echoPath(reference, delay: Int(0.110 * fs), sampleRate: fs, gain: 0.5)
        let jump = Int(3 * fs)
        let mic = (0..<count).map { $0 < jump ? first[$0] : second[$0] }
        var estimates: [Double] = []
        reference.withUnsafeBufferPointer { r in
            mic.withUnsafeBufferPointer { m in
                for start in stride(from: 0, to: count, by: 160) {
                    estimator.push(reference: r.baseAddress! + start, mic: m.baseAddress! + start, count: 160)
                    estimates.append(estimator.delayMilliseconds)
                }
            }
        }
        #expect(abs(estimates[jump / 160 - 1] - 20) <= 1)
        // Within 2 s of the jump.
        #expect(abs(estimates[(jump + Int(2 * fs)) / 160] - 110) <= 1)
    }

    @Test func theAGCBringsAQuietTalkerToTheTarget() {
        let fs = 16_000.0
        let kernel = VoiceProcessorKernel(
            settings: VoiceProcessorSettings(agc: true, noiseSuppression: false, sampleRate: fs))
        let count = Int(8 * fs)
        var talker = SpeechLikeSignal(seed: 3)
        // −40 dBFS active level.
        let mic = talker.make(count: count, sampleRate: fs, level: 0.01)
        let (out, _) = runVoiceKernel(kernel, mic: mic, reference: [Float](repeating: 0, count: count))
        // Active level over the last 2 s: frames within 20 dB of the loudest.
        let frames = stride(from: count - Int(2 * fs), to: count - 160, by: 160).map {
            meanSquare(out[$0..<($0 + 160)])
        }
        let loudest = frames.max() ?? 0
        let active = frames.filter { $0 > loudest * 0.01 }
        let level = decibels(active.reduce(0, +) / Double(max(1, active.count)))
        #expect(abs(level + 26) <= 3, "level \(level) dBFS")
    }

    /// Stereo against stereo (one signal on both reference channels for the first second, folded into
    /// one, then two), and against one reference; the microphones hear the reference, so that the MDF
    /// converges and the loudspeaker's distortion is learned.
    @Test(arguments: [2, 1])
    func processingAllocatesNothingAndTakesNoLock(referenceChannels: Int) {
        guard AllocationProbe.isActive, !AllocationProbe.isSanitized else { return }
        let kernel = VoiceProcessorKernel(
            settings: VoiceProcessorSettings(
                agc: true, noiseSuppression: true, micChannels: 2, referenceChannels: referenceChannels,
                sampleRate: 48_000))
        let f = kernel.frameLength
        let buffers = (0..<6).map { _ in UnsafeMutablePointer<Float>.allocate(capacity: f) }
        defer { buffers.forEach { $0.deallocate() } }
        var talker = SpeechLikeSignal(seed: 11)
        let mic = UnsafeMutablePointer<UnsafeMutablePointer<Float>>.allocate(capacity: 2)
        let reference = UnsafeMutablePointer<UnsafeMutablePointer<Float>>.allocate(capacity: 2)
        let output = UnsafeMutablePointer<UnsafeMutablePointer<Float>>.allocate(capacity: 2)
        defer {
            mic.deallocate()
            reference.deallocate()
            output.deallocate()
        }
        for c in 0..<2 {
            mic[c] = buffers[c]
            reference[c] = buffers[2 + c]
            output[c] = buffers[4 + c]
        }
        let probe = AllocationProbe()
        // 2.8 s, counted from 0.2 s on: past the distortion learner's warm-up (0.25 s) and the
        // convergence check (0.5 s), whose first calls must not initialise anything lazily either, and,
        // with two signals from 1 s on, past the two-loudspeaker copy's first second of learning.
        var foldedAtFirst = false
        for frame in 0..<280 {
            for n in 0..<f {
                let far = talker.noise() * 0.05
                buffers[2][n] = far
                buffers[3][n] = frame < 100 ? far : talker.noise() * 0.05
                buffers[0][n] = 0.5 * far + talker.noise() * 0.001
                buffers[1][n] = 0.4 * far + talker.noise() * 0.001
            }
            // Counted after a warm-up: only the process call itself.
            if frame >= 20 { probe.trackCurrentThread(true) }
            kernel.process(mic: mic, reference: reference, output: output)
            probe.trackCurrentThread(false)
            if frame == 19 { probe.reset() }
            if frame == 99 { foldedAtFirst = kernel.referenceFolded }
        }
        #expect(probe.allocations == 0, "allocations in process")
        #expect(probe.locks == 0, "locks in process")
        #expect((0..<5).contains { kernel.distortion.coefficient($0) != 0 }, "the distortion learner ran")
        #expect(foldedAtFirst == (referenceChannels == 2), "one signal on two channels folded")
        #expect(!kernel.referenceFolded, "unfolded at the second signal")
        #expect(kernel.twoLoudspeakerCopy.hasFilter == (referenceChannels == 2), "the two-loudspeaker copy in use")
    }
}

@Suite struct VoiceProcessorStereoTests {
    @Test func twoMicrophonesAreCancelledAgainstTwoReferences() {
        let fs = 16_000.0
        let kernel = VoiceProcessorKernel(
            settings: VoiceProcessorSettings(
                agc: false, noiseSuppression: false, micChannels: 2, referenceChannels: 2, sampleRate: fs))
        let count = Int(8 * fs)
        var left = SpeechLikeSignal(seed: 21)
        var right = SpeechLikeSignal(seed: 22)
        let references = [
            left.make(count: count, sampleRate: fs, level: 0.05), right.make(count: count, sampleRate: fs, level: 0.05)
        ]
        let delay = Int(0.040 * fs)
        let paths = [
            [
                echoPath(references[0], delay: delay, sampleRate: fs, gain: 0.5),
                echoPath(references[1], delay: delay + 16, sampleRate: fs, gain: 0.25)
            ],
            [
                echoPath(references[0], delay: delay + 16, sampleRate: fs, gain: 0.25),
                echoPath(references[1], delay: delay, sampleRate: fs, gain: 0.5)
            ]
        ]
        let mics = (0..<2).map { m in (0..<count).map { paths[m][0][$0] + paths[m][1][$0] } }
        let f = kernel.frameLength
        let buffers = (0..<6).map { _ in UnsafeMutablePointer<Float>.allocate(capacity: f) }
        defer { buffers.forEach { $0.deallocate() } }
        var micPointers = [buffers[0], buffers[1]]
        var referencePointers = [buffers[2], buffers[3]]
        var outPointers = [buffers[4], buffers[5]]
        var outputs = [[Float](repeating: 0, count: count), [Float](repeating: 0, count: count)]
        var start = 0
        while start + f <= count {
            for c in 0..<2 {
                for n in 0..<f {
                    buffers[c][n] = mics[c][start + n]
                    buffers[2 + c][n] = references[c][start + n]
                }
            }
            kernel.process(mic: &micPointers, reference: &referencePointers, output: &outPointers)
            for c in 0..<2 {
                for n in 0..<f { outputs[c][start + n] = buffers[4 + c][n] }
            }
            start += f
        }
        let tail = (count - Int(2 * fs))..<count
        for c in 0..<2 {
            let erle = decibels(meanSquare(mics[c][tail]) / meanSquare(outputs[c][tail]))
            #expect(erle >= 25, "channel \(c): ERLE \(erle) dB")
        }
    }
}

@testable import AudioDSP
import Testing

/// A loudspeaker's memoryless distortion followed by a room, against a linear filter that has learned
/// the room times the loudspeaker's linear gain (what an adaptive filter converges to): the learned
/// reference must leave far less of the distortion's echo than the linear filter alone.
struct HammersteinScene {
    let sampleRate = 16_000.0
    let frame = 160
    let room: [Float]
    let reference: [Float]
    let loudspeaker: [Float]
    /// The linear part of the loudspeaker: ⟨s(x), x⟩ / ⟨x, x⟩.
    let linearGain: Float

    init(drive: Float, seconds: Double = 8) {
        var talker = SpeechLikeSignal(seed: 21)
        let count = Int(seconds * sampleRate)
        reference = talker.make(count: count, sampleRate: sampleRate, level: 0.1)
        // A slightly asymmetric soft clipper; drive 0 is a linear loudspeaker.
        loudspeaker = reference.map { x in
            drive == 0 ? x : Float(1 - 2 / (EffectMath.exp(2 * Double(drive * (x + 0.2 * x * x))) + 1)) / drive
        }
        var sx: Double = 0
        var xx: Double = 0
        for n in 0..<count {
            sx += Double(loudspeaker[n]) * Double(reference[n])
            xx += Double(reference[n]) * Double(reference[n])
        }
        linearGain = Float(sx / xx)
        // 8 samples of delay, then a decaying tail over 20 ms.
        var noise = SpeechLikeSignal(seed: 5)
        room = (0..<320).map { n in
            n < 8 ? 0 : (n == 8 ? 0.5 : 0.2 * Float(EffectMath.exp(-Double(n) / 60)) * noise.noise())
        }
    }

    static func convolve(_ h: [Float], _ x: [Float], at n: Int) -> Float {
        var y: Float = 0
        for k in 0..<min(h.count, n + 1) { y += h[k] * x[n - k] }
        return y
    }

    /// Runs the canceller over the scene; returns the echo, what the linear filter alone leaves, and
    /// what is left with the learned reference.
    func run(_ canceller: inout NonlinearEchoCanceller) -> (echo: [Float], linear: [Float], learned: [Float]) {
        let count = reference.count
        let filter = room.map { $0 * linearGain }
        canceller.setFilter(length: filter.count) { filter[$0] }
        var echo = [Float](repeating: 0, count: count)
        var linear = [Float](repeating: 0, count: count)
        var learned = [Float](repeating: 0, count: count)
        var preprocessed = [Float](repeating: 0, count: count)
        let x = UnsafeMutablePointer<Float>.allocate(capacity: frame)
        let p = UnsafeMutablePointer<Float>.allocate(capacity: frame)
        let e = UnsafeMutablePointer<Float>.allocate(capacity: frame)
        defer {
            x.deallocate()
            p.deallocate()
            e.deallocate()
        }
        for start in stride(from: 0, to: count - frame + 1, by: frame) {
            for i in 0..<frame { x[i] = reference[start + i] }
            canceller.prepare(reference: x, preprocessed: p)
            var active: Float = 0
            for i in 0..<frame {
                preprocessed[start + i] = p[i]
                active += x[i] * x[i]
            }
            for i in 0..<frame {
                let n = start + i
                echo[n] = Self.convolve(room, loudspeaker, at: n)
                linear[n] = echo[n] - Self.convolve(filter, reference, at: n)
                learned[n] = echo[n] - Self.convolve(filter, preprocessed, at: n)
                e[i] = learned[n]
            }
            if active > 1e-7 * Float(frame) { canceller.learn(error: e) }
        }
        return (echo, linear, learned)
    }
}

@Suite struct NonlinearEchoCancellerTests {
    @Test func theLearnedReferenceCancelsASoftClippingLoudspeakersEcho() {
        let scene = HammersteinScene(drive: 16)
        var canceller = NonlinearEchoCanceller(
            frameLength: scene.frame, sampleRate: scene.sampleRate, filterLength: scene.room.count)
        defer { canceller.deallocate() }
        let (echo, linear, learned) = scene.run(&canceller)
        let tail = (echo.count - Int(2 * scene.sampleRate))..<echo.count
        // How far below the echo the distortion lies: the linear filter's best.
        let linearErle = decibels(meanSquare(echo[tail]) / meanSquare(linear[tail]))
        let learnedErle = decibels(meanSquare(echo[tail]) / meanSquare(learned[tail]))
        #expect(linearErle > 5 && linearErle < 20, "the scene's distortion: \(linearErle) dB")
        #expect(learnedErle >= linearErle + 12, "linear \(linearErle) dB, learned \(learnedErle) dB")
    }

    @Test func aLinearLoudspeakerIsLeftAlone() {
        let scene = HammersteinScene(drive: 0)
        var canceller = NonlinearEchoCanceller(
            frameLength: scene.frame, sampleRate: scene.sampleRate, filterLength: scene.room.count)
        defer { canceller.deallocate() }
        let (echo, _, learned) = scene.run(&canceller)
        let tail = (echo.count - Int(2 * scene.sampleRate))..<echo.count
        // Nothing to learn: the residual stays at the filter's own (float rounding) level.
        let erle = decibels(meanSquare(echo[tail]) / meanSquare(learned[tail]))
        #expect(erle >= 60, "ERLE \(erle) dB")
        for k in 0..<NonlinearEchoCanceller.functionCount {
            #expect(abs(canceller.coefficient(k)) < 1e-2, "a\(k) = \(canceller.coefficient(k))")
        }
    }

    @Test func theSolveInvertsAProductOfWidelyScaledUnknowns() {
        // m = s·a·s with a well-conditioned a and scales 1 … 10⁻⁸ (the filtered functions' powers
        // differ that much); x chosen, p = m·x: the solve returns x within the ridge's 10⁻⁶.
        let n = 4
        let a: [Double] = [4, 1, 0.5, 0.2, 1, 3, 0.2, 0.1, 0.5, 0.2, 2, 0.3, 0.2, 0.1, 0.3, 1]
        let scale: [Double] = [1, 1e-3, 1e-5, 1e-8]
        let x: [Double] = [1, -2e3, 0.5e5, 3e8]
        var m = [Double](repeating: 0, count: n * n)
        var p = [Double](repeating: 0, count: n)
        for i in 0..<n {
            for j in 0..<n { m[i * n + j] = scale[i] * a[i * n + j] * scale[j] }
        }
        for i in 0..<n {
            for j in 0..<n { p[i] += m[i * n + j] * x[j] }
        }
        var factor = [Double](repeating: 0, count: n * n)
        var solved = [Double](repeating: 0, count: n)
        #expect(NonlinearEchoCanceller.solve(count: n, m, p, factor: &factor, into: &solved))
        for i in 0..<n { #expect(abs(solved[i] / x[i] - 1) < 1e-5, "x\(i) = \(solved[i]), expected \(x[i])") }
        // A singular (zero) matrix is refused.
        let zero = [Double](repeating: 0, count: n * n)
        #expect(!NonlinearEchoCanceller.solve(count: n, zero, p, factor: &factor, into: &solved))
    }
}

@Suite struct VoiceProcessorDistortionTests {
    /// A far end through a soft-clipping loudspeaker (its distortion about 11 dB below its linear part)
    /// for 10 s, a near talker at the echo's level over the last 4: the far end alone is cancelled
    /// either way (the suppressor holds the distortion down), but in double talk a linear echo model
    /// takes the distortion for the talker's interference and suppresses the talker with it.
    @Test func aDistortingLoudspeakerCostsTheNearTalkerLittle() {
        let fs = 16_000.0
        let count = Int(10 * fs)
        var far = SpeechLikeSignal(seed: 42)
        let reference = far.make(count: count, sampleRate: fs, level: 0.1)
        let played = reference.map { x in
            Float(1 - 2 / (EffectMath.exp(2 * Double(16 * (x + 0.2 * x * x))) + 1)) / 16
        }
        let echo = echoPath(played, delay: Int(0.060 * fs), sampleRate: fs, gain: 0.5)
        var near = SpeechLikeSignal(seed: 77)
        let start = Int(6 * fs)
        let talker = near.make(count: count, sampleRate: fs, level: 0.03).enumerated().map { $0 < start ? 0 : $1 }
        let mic = (0..<count).map { echo[$0] + talker[$0] }
        func run(learning: Bool) -> (erle: Double, talkerGain: Double) {
            let kernel = VoiceProcessorKernel(
                settings: VoiceProcessorSettings(
                    agc: false, noiseSuppression: false, sampleRate: fs, learnsLoudspeakerDistortion: learning))
            let (out, _) = runVoiceKernel(kernel, mic: mic, reference: reference)
            let lag = kernel.latencyFrames
            let alone = Int(4 * fs)..<start
            let erle = decibels(
                meanSquare(mic[alone]) / meanSquare(out[(alone.lowerBound + lag)..<(alone.upperBound + lag)]))
            // The talker's part of the output over the double talk.
            return (erle, talkerGain(out, talker, over: (start + Int(0.5 * fs))..<(count - lag), lag: lag))
        }
        let linear = run(learning: false)
        let learned = run(learning: true)
        #expect(learned.erle >= 35, "far end alone: ERLE \(learned.erle) dB")
        #expect(learned.talkerGain >= linear.talkerGain + 6, "talker \(linear.talkerGain) → \(learned.talkerGain) dB")
        #expect(learned.talkerGain >= -1.5, "talker \(learned.talkerGain) dB")
    }
}

@Suite struct VoiceProcessorDistortionRobustnessTests {
    /// References the learning was not made for, each with its echo through a hard clipper and a room:
    /// a full-scale square wave, a pure tone, a DC step, white noise at 0 dBFS and a far end that is
    /// silent for 3 s and then bursts in. The output stays finite and never louder than the microphone
    /// (over each second): a learned distortion gone wrong would add to the echo instead.
    @Test(arguments: ["square", "tone", "dc", "noise", "burst"])
    func oddReferencesNeverMakeTheOutputLouderThanTheMicrophone(kind: String) {
        let fs = 48_000.0
        let count = Int(6 * fs)
        var random = SpeechLikeSignal(seed: 13)
        let reference: [Float] = (0..<count).map { n in
            let t = Double(n) / fs
            switch kind {
            case "square": return EffectMath.sin(2 * EffectMath.pi * 220 * t) >= 0 ? 1 : -1
            case "tone": return Float(0.5 * EffectMath.sin(2 * EffectMath.pi * 1000 * t))
            case "dc": return t < 2 ? 0 : 0.5
            case "noise": return random.noise()
            default: return t < 3 ? 0 : random.noise() * 0.3
            }
        }
        let played = reference.map { max(-0.6, min(0.6, $0)) }
        let mic = echoPath(played, delay: Int(0.030 * fs), sampleRate: fs, gain: 0.5)
        let kernel = VoiceProcessorKernel(
            settings: VoiceProcessorSettings(agc: false, noiseSuppression: true, sampleRate: fs))
        let (out, _) = runVoiceKernel(kernel, mic: mic, reference: reference)
        #expect(out.allSatisfy { $0.isFinite }, "\(kind): a non-finite output sample")
        let second = Int(fs)
        for start in stride(from: 0, to: count - second + 1, by: second) {
            let micPower = meanSquare(mic[start..<(start + second)])
            let outPower = meanSquare(out[start..<(start + second)])
            #expect(outPower <= micPower * 1.05 + 1e-12, "\(kind), second \(start / second): \(outPower) > \(micPower)")
        }
    }
}

@Suite struct VoiceForegroundFilterTests {
    /// The copy's estimate is the convolution of the reference with the response it was given, sample
    /// for sample (a 370-tap response over three partitions of 160-sample frames).
    @Test func itsEstimateIsTheConvolutionOfTheReferenceWithTheResponse() {
        let f = 160
        var taps = [Float](repeating: 0, count: 370)
        for n in stride(from: 0, to: taps.count, by: 10) {
            let sign: Float = n % 20 == 0 ? 0.5 : -0.3
            taps[n] = sign * Float(EffectMath.exp(-Double(n) / 100))
        }
        var filter = VoiceForegroundFilter(frameLength: f, filterLength: taps.count)
        defer { filter.deallocate() }
        filter.setFilter(length: taps.count) { taps[$0] }
        var source = SpeechLikeSignal(seed: 3)
        let x = source.make(count: 20 * f, sampleRate: 16_000, level: 0.1)
        var worst: Float = 0
        var peak: Float = 0
        x.withUnsafeBufferPointer { buffer in
            for frame in 0..<20 {
                filter.push(buffer.baseAddress! + frame * f)
                for i in 0..<f {
                    let n = frame * f + i
                    var y: Float = 0
                    for k in 0..<min(taps.count, n + 1) { y += taps[k] * x[n - k] }
                    worst = max(worst, abs(filter.estimate[i] - y))
                    peak = max(peak, abs(y))
                }
            }
        }
        #expect(worst <= 1e-5 * max(peak, 1e-9) + 1e-7, "largest difference \(worst) (peak \(peak))")
    }

    /// The room changes when a near talker starts (at 8 s; the talker at the echo's level until 11 s,
    /// then the far end alone until 15 s): the frozen copy from before is stale, and the detector takes
    /// the new room's echo for a talker too. Over the last 2 s the linear stage's error (what the
    /// suppressor gets) holds the new room's echo down again (36 dB measured): whichever of the MDF
    /// and the copy is used, the stale copy is not kept once the MDF has re-adapted.
    @Test func aRoomThatChangesInDoubleTalkIsCancelledAgain() {
        let fs = 16_000.0
        let count = Int(15 * fs)
        let change = Int(8 * fs)
        let quiet = Int(11 * fs)
        var far = SpeechLikeSignal(seed: 5)
        let reference = far.make(count: count, sampleRate: fs, level: 0.1)
        let before = echoPath(reference, delay: Int(0.045 * fs), sampleRate: fs, gain: 0.5)
        // Another room: the direct sound 2 ms later, weaker, of the opposite sign, with the same tail shape.
        let after = echoPath(reference, delay: Int(0.047 * fs), sampleRate: fs, gain: 0.4).map { -$0 }
        let echo = (0..<count).map { $0 < change ? before[$0] : after[$0] }
        var near = SpeechLikeSignal(seed: 8)
        let talker = near.make(count: count, sampleRate: fs, level: 0.05).enumerated().map {
            $0 < change || $0 >= quiet ? 0 : $1
        }
        let mic = (0..<count).map { echo[$0] + talker[$0] }
        let kernel = VoiceProcessorKernel(
            settings: VoiceProcessorSettings(agc: false, noiseSuppression: false, sampleRate: fs))
        let error = linearStageError(kernel, mic: mic, reference: reference)
        let erle = echoLeftInTheError(error, talker: talker, echo: echo, from: count - Int(2 * fs), sampleRate: fs)
        #expect(erle >= 30, "the new room's echo in the linear stage's error: \(erle) dB below the microphone's")
    }
}

/// Runs a mono kernel over whole signals and returns its linear stage's error (the first microphone's,
/// after the choice between the MDF and the frozen copy), frame by frame.
func linearStageError(_ kernel: VoiceProcessorKernel, mic: [Float], reference: [Float]) -> [Float] {
    var error = [Float](repeating: 0, count: mic.count)
    _ = runVoiceKernel(kernel, mic: mic, reference: reference) { start in
        for n in 0..<kernel.frameLength { error[start + n] = kernel.errorFrame[n] }
    }
    return error
}

/// The echo left in the linear stage's error from `from` on, in dB below the echo: the error minus the
/// talker through speex's DC notch (mdf.c, float build), which the error carries the talker through.
func echoLeftInTheError(_ error: [Float], talker: [Float], echo: [Float], from: Int, sampleRate: Double) -> Double {
    let r = Double(VoiceNotchCompensation.notchRadius(sampleRate: sampleRate))
    let den2 = r * r + 0.7 * (1 - r) * (1 - r)
    var m0 = 0.0
    var m1 = 0.0
    var left = 0.0
    var echoPower = 0.0
    for n in 0..<error.count {
        let vin = Double(talker[n])
        let vout = m0 + vin
        m0 = m1 + 2 * (-vin + r * vout)
        m1 = vin - den2 * vout
        guard n >= from else { continue }
        let residual = Double(error[n]) - r * vout
        left += residual * residual
        echoPower += Double(echo[n]) * Double(echo[n])
    }
    return decibels(echoPower / max(left, 1e-30))
}

@Suite struct VoiceProcessorLateDelayTests {
    /// A linear loudspeaker 150 ms away, whose delay the tracker finds only after the first frames, then
    /// a near talker at the echo's level: nothing is learned as distortion (the learner waits for an MDF
    /// that models the room), and the talker keeps its level in double talk.
    @Test func aLinearLoudspeakerFoundLateIsNotLearnedAsDistortion() {
        let fs = 16_000.0
        let count = Int(12 * fs)
        var far = SpeechLikeSignal(seed: 5)
        let reference = far.make(count: count, sampleRate: fs, level: 0.1)
        let echo = echoPath(reference, delay: Int(0.150 * fs), sampleRate: fs, gain: 0.5)
        var near = SpeechLikeSignal(seed: 6)
        let start = Int(8 * fs)
        let talker = near.make(count: count, sampleRate: fs, level: 0.03).enumerated().map { $0 < start ? 0 : $1 }
        let mic = (0..<count).map { echo[$0] + talker[$0] }
        let kernel = VoiceProcessorKernel(settings: VoiceProcessorSettings(noiseSuppression: false, sampleRate: fs))
        // Per frame, the learned distortion the MDF's reference carries, against the reference.
        var largest: Float = 0
        let f = kernel.frameLength
        let (out, _) = runVoiceKernel(kernel, mic: mic, reference: reference) { _ in
            var distortion: Float = 0
            var power: Float = 0
            for n in 0..<f {
                let x = kernel.alignedMono[n]
                let d = kernel.preprocessedReference[n] - x
                distortion += d * d
                power += x * x
            }
            if power > 1e-4 * Float(f) { largest = max(largest, distortion / power) }
        }
        let largestDb = decibels(Double(largest))
        #expect(largestDb < -25, "learned distortion up to \(largestDb) dB of the reference")
        let lag = kernel.latencyFrames
        let gain = talkerGain(out, talker, over: (start + Int(0.5 * fs))..<(count - lag), lag: lag)
        #expect(gain >= -1.5, "talker \(gain) dB")
    }
}

@testable import AudioDSP
import DSPTestSupport
import Testing

/// A two-channel reference that carries one signal (a mono source on two loudspeakers) is cancelled as
/// one channel, and unfolds to the two-channel filter when its channels differ.
@Suite struct VoiceReferenceFoldingTests {
    let fs = 16_000.0

    /// Runs `kernel` (one microphone, two reference channels) over whole signals; returns the output and
    /// whether the reference was folded after each frame.
    func run(
        _ kernel: VoiceProcessorKernel, mic: [Float], left: [Float], right: [Float], afterFrame: (() -> Void)? = nil
    ) -> ([Float], [Bool]) {
        var folded: [Bool] = []
        let output = processWithTwoReferences(
            kernel, mic: mic, left: left, right: right,
            afterFrame: { _ in
                folded.append(kernel.referenceFolded)
                afterFrame?()
            })
        return (output, folded)
    }

    /// `run`, with the delay the line took (`analysis.delayMs`) and the tracker's delay after each frame.
    func runTracking(_ kernel: VoiceProcessorKernel, mic: [Float], left: [Float], right: [Float])
        -> (output: [Float], folded: [Bool], lineDelays: [Float], tracked: [Double])
    {
        var lineDelays: [Float] = []
        var tracked: [Double] = []
        let (output, folded) = run(kernel, mic: mic, left: left, right: right) {
            lineDelays.append(kernel.analysis.delayMs)
            tracked.append(kernel.estimator.delayMilliseconds)
        }
        return (output, folded, lineDelays, tracked)
    }

    /// The largest sample-for-sample difference between two outputs.
    func largestDifference(_ a: [Float], _ b: [Float]) -> Float {
        zip(a, b).reduce(0) { max($0, abs($1.0 - $1.1)) }
    }

    /// The far end on both reference channels, through the sum of two loudspeakers' rooms, with a near
    /// talker: the output equals, sample for sample, that of a processor given the far end once.
    @Test func aMonoSourceOnTwoReferencesIsCancelledExactlyAsOnOne() {
        let count = Int(8 * fs)
        var far = SpeechLikeSignal(seed: 31)
        var near = SpeechLikeSignal(seed: 32)
        let reference = far.make(count: count, sampleRate: fs, level: 0.05)
        let talker = near.make(count: count, sampleRate: fs, level: 0.02)
        let delay = Int(0.030 * fs)
        let left = echoPath(reference, delay: delay, sampleRate: fs, gain: 0.4)
        let right = echoPath(reference, delay: delay + 23, sampleRate: fs, gain: 0.3)
        // The near end talks from 5 s on (double talk).
        let mic = (0..<count).map { left[$0] + right[$0] + ($0 >= Int(5 * fs) ? talker[$0] : 0) }
        let one = VoiceProcessorKernel(settings: VoiceProcessorSettings(sampleRate: fs))
        let two = VoiceProcessorKernel(settings: VoiceProcessorSettings(referenceChannels: 2, sampleRate: fs))
        let (expected, _) = runVoiceKernel(one, mic: mic, reference: reference)
        let (output, folded) = run(two, mic: mic, left: reference, right: reference)
        #expect(folded.allSatisfy { $0 }, "the reference stayed folded")
        let largest = largestDifference(output, expected)
        #expect(largest == 0, "largest difference \(largest)")
        let tail = Int(3 * fs)..<Int(5 * fs)
        #expect(decibels(meanSquare(mic[tail]) / meanSquare(output[tail])) >= 30)
    }

    /// The far end on the left reference channel only (the right port unconnected, the default of two
    /// reference channels): the output equals, sample for sample, that of a processor given it as its
    /// one reference, including the learned loudspeaker distortion and the frozen copy.
    @Test func aReferenceOnOneChannelIsCancelledExactlyAsOnOne() {
        let count = Int(8 * fs)
        var far = SpeechLikeSignal(seed: 51)
        var near = SpeechLikeSignal(seed: 52)
        // Silence, then the far end: the direction is taken from the first frame with sound.
        let reference = far.make(count: count, sampleRate: fs, level: 0.05).enumerated().map { $0 < 800 ? 0 : $1 }
        let talker = near.make(count: count, sampleRate: fs, level: 0.02)
        // A soft clipper, tanh(4x) / 4: something for the distortion learner to learn.
        let played = reference.map { x in Float(1 - 2 / (EffectMath.exp(Double(8 * x)) + 1)) / 4 }
        let echo = echoPath(played, delay: Int(0.050 * fs), sampleRate: fs, gain: 0.5)
        let mic = (0..<count).map { echo[$0] + ($0 >= Int(5 * fs) ? talker[$0] : 0) }
        let silent = [Float](repeating: 0, count: count)
        let one = VoiceProcessorKernel(settings: VoiceProcessorSettings(sampleRate: fs))
        let (expected, _) = runVoiceKernel(one, mic: mic, reference: reference)
        for (left, right) in [(reference, silent), (silent, reference)] {
            let two = VoiceProcessorKernel(settings: VoiceProcessorSettings(referenceChannels: 2, sampleRate: fs))
            let (output, folded) = run(two, mic: mic, left: left, right: right)
            #expect(folded.allSatisfy { $0 }, "the reference stayed folded")
            let largest = largestDifference(output, expected)
            #expect(largest == 0, "largest difference \(largest)")
        }
        #expect((0..<5).contains { one.distortion.coefficient($0) != 0 }, "the distortion was learned")
    }

    /// One signal panned onto both channels (the other channel a gain times the louder one, of either
    /// sign): the output equals, sample for sample, that of a processor given the louder channel once.
    @Test(arguments: [(Float(1), Float(-0.6)), (Float(0.3), Float(1))])
    func aPannedSourceIsCancelledExactlyAsOnOne(gains: (left: Float, right: Float)) {
        let count = Int(8 * fs)
        var far = SpeechLikeSignal(seed: 33)
        var near = SpeechLikeSignal(seed: 34)
        // Silence, then the far end: the channel and gain are taken from the first frame with sound.
        let signal = far.make(count: count, sampleRate: fs, level: 0.05).enumerated().map { $0 < 800 ? 0 : $1 }
        let talker = near.make(count: count, sampleRate: fs, level: 0.02)
        let left = signal.map { gains.left * $0 }
        let right = signal.map { gains.right * $0 }
        let fromLeft = echoPath(left, delay: Int(0.030 * fs), sampleRate: fs, gain: 0.4)
        let fromRight = echoPath(right, delay: Int(0.030 * fs) + 37, sampleRate: fs, gain: 0.3)
        let mic = (0..<count).map { fromLeft[$0] + fromRight[$0] + ($0 >= Int(5 * fs) ? talker[$0] : 0) }
        let louder = gains.left >= gains.right ? left : right
        let one = VoiceProcessorKernel(settings: VoiceProcessorSettings(sampleRate: fs))
        let two = VoiceProcessorKernel(settings: VoiceProcessorSettings(referenceChannels: 2, sampleRate: fs))
        let (expected, _) = runVoiceKernel(one, mic: mic, reference: louder)
        let (output, folded) = run(two, mic: mic, left: left, right: right)
        #expect(folded.allSatisfy { $0 }, "the reference stayed folded")
        let direction = gains.left >= gains.right ? VoiceProcessorKernel.foldLeft : VoiceProcessorKernel.foldRight
        #expect(two.foldDirection == direction)
        let gain = Double(min(gains.left, gains.right) / max(gains.left, gains.right))
        #expect(abs(two.foldGain - gain) <= 1e-6, "gain \(two.foldGain)")
        let largest = largestDifference(output, expected)
        #expect(largest == 0, "largest difference \(largest)")
        let tail = Int(3 * fs)..<Int(5 * fs)
        #expect(decibels(meanSquare(mic[tail]) / meanSquare(output[tail])) >= 30)
    }

    /// Two loudspeakers 7 ms apart playing different signals from the start, each louder by 10 dB in
    /// turn every 3 s, whose echo paths both grow 12 ms longer at 6 s (a buffer-size change): the
    /// reference unfolds at the first frame with sound; the delay line stays on the nearer
    /// loudspeaker's delay although the tracker, which hears their mix, follows whichever carries more
    /// (each move would re-align the filter and send it back to the start), and it follows the jump
    /// within 2 s.
    @Test func twoSignalsUnfoldAtOnceAndKeepTheNearerLoudspeakersDelay() {
        let count = Int(16 * fs)
        let turn = Int(3 * fs)
        let jump = 2 * turn
        var leftTalker = SpeechLikeSignal(seed: 43)
        var rightTalker = SpeechLikeSignal(seed: 44)
        // Silence, then both: the first frame with sound unfolds the reference.
        let a = leftTalker.make(count: count, sampleRate: fs, level: 0.05).enumerated().map { $0 < 800 ? 0 : $1 }
        let b = rightTalker.make(count: count, sampleRate: fs, level: 0.05).enumerated().map { $0 < 800 ? 0 : $1 }
        let leftLouder = { (n: Int) in (n / turn) % 2 == 0 }
        let left = (0..<count).map { leftLouder($0) ? a[$0] : 0.3 * a[$0] }
        let right = (0..<count).map { leftLouder($0) ? 0.3 * b[$0] : b[$0] }
        let echo = { (shift: Double) in
            zip(
                echoPath(left, delay: Int((0.030 + shift) * fs), sampleRate: fs, gain: 0.5),
                echoPath(right, delay: Int((0.037 + shift) * fs), sampleRate: fs, gain: 0.5)
            ).map { $0 + $1 }
        }
        let before = echo(0)
        let after = echo(0.012)
        let mic = (0..<count).map { $0 < jump ? before[$0] : after[$0] }
        let kernel = VoiceProcessorKernel(settings: VoiceProcessorSettings(referenceChannels: 2, sampleRate: fs))
        let f = kernel.frameLength
        let (output, folded, delays, tracked) = runTracking(kernel, mic: mic, left: left, right: right)
        #expect(folded[(800 / f + 1)...].allSatisfy { !$0 }, "unfolded from the first frame with sound")
        #expect(tracked[..<(jump / f)].contains { abs($0 - 37) <= 1 }, "the tracker heard the farther loudspeaker")
        #expect(tracked[(jump / f)...].contains { abs($0 - 49) <= 1 }, "and after the jump")
        let found = delays.firstIndex { abs($0 - 30) <= 1 } ?? delays.count
        #expect(found * f <= Int(fs), "the nearer loudspeaker's delay within 1 s")
        let away = delays[found..<(jump / f)].filter { abs($0 - 30) > 1 }
        #expect(away.isEmpty, "\(away.count) frames on another delay before the jump")
        let followed = delays[((jump + 2 * Int(fs)) / f)...].filter { abs($0 - 42) > 1 }
        #expect(followed.isEmpty, "\(followed.count) frames on another delay from 2 s after the jump")
        let last = (count - 2 * Int(fs))..<count
        let erle = decibels(meanSquare(mic[last]) / meanSquare(output[last]))
        #expect(erle >= 25, "ERLE \(erle) dB")
    }

    /// Two loudspeakers 45 ms apart (30 and 75 ms, farther than the 20 ms taken at once) that carry more
    /// in turns of 3 s: the tracker hears one, then the other, then the first again, and from then on
    /// the delay line keeps the nearer one's delay (the filter covers the other) instead of moving with
    /// each turn, so the echo is cancelled: at least 25 dB over the last 2 s of 16.
    @Test func twoLoudspeakersFartherApartAreKeptOnceSeenInTurn() {
        let count = Int(16 * fs)
        let turn = Int(3 * fs)
        var leftTalker = SpeechLikeSignal(seed: 53)
        var rightTalker = SpeechLikeSignal(seed: 54)
        let a = leftTalker.make(count: count, sampleRate: fs, level: 0.05)
        let b = rightTalker.make(count: count, sampleRate: fs, level: 0.05)
        let leftLouder = { (n: Int) in (n / turn) % 2 == 0 }
        let left = (0..<count).map { leftLouder($0) ? a[$0] : 0.3 * a[$0] }
        let right = (0..<count).map { leftLouder($0) ? 0.3 * b[$0] : b[$0] }
        let mic = zip(
            echoPath(left, delay: Int(0.030 * fs), sampleRate: fs, gain: 0.5),
            echoPath(right, delay: Int(0.075 * fs), sampleRate: fs, gain: 0.5)
        ).map { $0 + $1 }
        let kernel = VoiceProcessorKernel(settings: VoiceProcessorSettings(referenceChannels: 2, sampleRate: fs))
        let f = kernel.frameLength
        let (output, _, delays, tracked) = runTracking(kernel, mic: mic, left: left, right: right)
        #expect(
            tracked[(turn / f)..<(2 * turn / f)].contains { abs($0 - 75) <= 1 }, "the tracker heard the farther one")
        let settled = (2 * turn + Int(fs)) / f
        let away = delays[settled...].filter { abs($0 - 30) > 1 }
        #expect(away.isEmpty, "\(away.count) frames on another delay from 7 s: \(Set(away.map { $0.rounded() }))")
        let last = (count - 2 * Int(fs))..<count
        let erle = decibels(meanSquare(mic[last]) / meanSquare(output[last]))
        #expect(erle >= 25, "ERLE \(erle) dB")
    }

    /// One signal on both channels for 4 s, two independent ones for 8 s, one again for 6 s, through
    /// two different rooms: the reference unfolds at the first frame that differs, the two-channel
    /// filter cancels the stereo part, and the reference folds again after 2 s of one signal.
    @Test func aReferenceUnfoldsWhenItsChannelsDifferAndFoldsAgain() {
        let second = Int(fs)
        let count = 18 * second
        var mono = SpeechLikeSignal(seed: 41)
        var other = SpeechLikeSignal(seed: 42)
        let a = mono.make(count: count, sampleRate: fs, level: 0.05)
        let b = other.make(count: count, sampleRate: fs, level: 0.05)
        let stereo = (4 * second)..<(12 * second)
        let left = a
        let right = (0..<count).map { stereo.contains($0) ? b[$0] : a[$0] }
        let delay = Int(0.040 * fs)
        let fromLeft = echoPath(left, delay: delay, sampleRate: fs, gain: 0.5)
        let fromRight = echoPath(right, delay: delay + 16, sampleRate: fs, gain: 0.25)
        let mic = (0..<count).map { fromLeft[$0] + fromRight[$0] }
        let kernel = VoiceProcessorKernel(settings: VoiceProcessorSettings(referenceChannels: 2, sampleRate: fs))
        let (output, folded) = run(kernel, mic: mic, left: left, right: right)
        let f = kernel.frameLength
        func erle(_ range: Range<Int>) -> Double { decibels(meanSquare(mic[range]) / meanSquare(output[range])) }
        // Frames are judged as they come in (the delay line brings them to the MDF 35 ms later), from
        // the first with far-end sound (a channel's power above 1e-7).
        let firstStereoFrame =
            stride(from: stereo.lowerBound, to: stereo.upperBound, by: f).first { start in
                max(meanSquare(left[start..<(start + f)]), meanSquare(right[start..<(start + f)])) > 1e-7
            }.map { $0 / f } ?? 0
        #expect(firstStereoFrame - stereo.lowerBound / f <= 2, "the stereo part starts with sound")
        #expect(folded[..<firstStereoFrame].allSatisfy { $0 }, "folded while one signal plays")
        #expect(
            folded[firstStereoFrame..<(stereo.upperBound / f)].allSatisfy { !$0 },
            "unfolded from the first frame that differs")
        let refold = folded[(stereo.upperBound / f)...].firstIndex(of: true)
        #expect(refold.map { $0 * f - stereo.upperBound } ?? count >= 2 * second, "folds after 2 s")
        #expect(refold.map { $0 * f - stereo.upperBound } ?? count <= 3 * second, "folds within 3 s")
        if let refold { #expect(folded[refold...].allSatisfy { $0 }, "stays folded") }
        #expect(erle((3 * second)..<(4 * second)) >= 25, "one signal")
        #expect(erle((10 * second)..<(12 * second)) >= 25, "two signals")
        #expect(erle((16 * second)..<(18 * second)) >= 25, "one signal again")
    }
}

@Suite struct VoiceReferenceRepatchTests {
    /// The far end on the left reference channel for 6 s, then on the right one (a port repatched)
    /// through another room: the reference unfolds at the first right-only frame, folds onto the right
    /// channel 2–3 s later with the folded filter started afresh, and the echo is cancelled by at least
    /// 25 dB in each part's last 2 s.
    @Test func aReferenceThatMovesToTheOtherChannelFoldsOntoIt() {
        let fs = 16_000.0
        let second = Int(fs)
        let count = 14 * second
        let switchAt = 6 * second
        var far = SpeechLikeSignal(seed: 61)
        let signal = far.make(count: count, sampleRate: fs, level: 0.05)
        let left = (0..<count).map { $0 < switchAt ? signal[$0] : 0 }
        let right = (0..<count).map { $0 < switchAt ? 0 : signal[$0] }
        let fromLeft = echoPath(left, delay: Int(0.030 * fs), sampleRate: fs, gain: 0.5)
        let fromRight = echoPath(right, delay: Int(0.045 * fs), sampleRate: fs, gain: -0.3)
        let mic = (0..<count).map { fromLeft[$0] + fromRight[$0] }
        let kernel = VoiceProcessorKernel(settings: VoiceProcessorSettings(referenceChannels: 2, sampleRate: fs))
        let f = kernel.frameLength
        var directions: [Int] = []
        let (output, folded) = VoiceReferenceFoldingTests().run(kernel, mic: mic, left: left, right: right) {
            directions.append(kernel.foldDirection)
        }
        #expect(directions[switchAt / f - 1] == VoiceProcessorKernel.foldLeft, "folded onto the left channel")
        let unfolded = folded[(switchAt / f)...].firstIndex(of: false) ?? count
        #expect(unfolded - switchAt / f <= 2, "unfolded at the first right-only frame")
        let refold = folded[unfolded...].firstIndex(of: true) ?? count
        #expect((2 * second...3 * second).contains(refold * f - switchAt), "folded again after 2–3 s")
        #expect(directions.last == VoiceProcessorKernel.foldRight, "onto the right channel")
        func erle(_ range: Range<Int>) -> Double { decibels(meanSquare(mic[range]) / meanSquare(output[range])) }
        #expect(erle((4 * second)..<switchAt) >= 25, "left")
        #expect(erle((count - 2 * second)..<count) >= 25, "right")
    }
}

@Suite struct VoiceReferenceFoldingAllocationTests {
    /// The far end on the left channel, then on the right one: the fold, the unfold and the fold onto
    /// the other channel (which resets the folded MDF, its copy and the learned distortion) allocate
    /// nothing and take no lock.
    @Test func foldingOntoAnotherChannelAllocatesNothing() {
        guard AllocationProbe.isActive, !AllocationProbe.isSanitized else { return }
        let fs = 8_000.0
        let kernel = VoiceProcessorKernel(settings: VoiceProcessorSettings(referenceChannels: 2, sampleRate: fs))
        let f = kernel.frameLength
        let buffers = (0..<4).map { _ in UnsafeMutablePointer<Float>.allocate(capacity: f) }
        defer { buffers.forEach { $0.deallocate() } }
        var micPointers = [buffers[0]]
        var referencePointers = [buffers[1], buffers[2]]
        var outPointers = [buffers[3]]
        var noise = SpeechLikeSignal(seed: 71)
        let probe = AllocationProbe()
        var directions: Set<Int> = []
        // 3 s on the left, 3 s on the right (folded again onto it after 2 s).
        for frame in 0..<600 {
            for n in 0..<f {
                let far = noise.noise() * 0.05
                buffers[1][n] = frame < 300 ? far : 0
                buffers[2][n] = frame < 300 ? 0 : far
                buffers[0][n] = 0.5 * far + noise.noise() * 0.001
            }
            if frame >= 20 { probe.trackCurrentThread(true) }
            kernel.process(mic: &micPointers, reference: &referencePointers, output: &outPointers)
            probe.trackCurrentThread(false)
            if frame == 19 { probe.reset() }
            if kernel.referenceFolded { directions.insert(kernel.foldDirection) }
        }
        #expect(directions == [VoiceProcessorKernel.foldLeft, VoiceProcessorKernel.foldRight], "\(directions)")
        #expect(probe.allocations == 0, "allocations in process")
        #expect(probe.locks == 0, "locks in process")
    }
}

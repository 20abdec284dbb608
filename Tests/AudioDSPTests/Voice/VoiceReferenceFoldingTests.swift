@testable import AudioDSP
import Testing

/// A two-channel reference that carries one signal (a mono source on two loudspeakers) is cancelled as
/// one channel, and unfolds to the two-channel filter when its channels differ.
@Suite struct VoiceReferenceFoldingTests {
    let fs = 16_000.0

    /// Runs `kernel` (one microphone, two reference channels) over whole signals; returns the output and
    /// whether the reference was folded after each frame.
    func run(_ kernel: VoiceProcessorKernel, mic: [Float], left: [Float], right: [Float]) -> ([Float], [Bool]) {
        let f = kernel.frameLength
        let buffers = (0..<4).map { _ in UnsafeMutablePointer<Float>.allocate(capacity: f) }
        defer { buffers.forEach { $0.deallocate() } }
        var micPointers = [buffers[0]]
        var referencePointers = [buffers[1], buffers[2]]
        var outPointers = [buffers[3]]
        var output = [Float](repeating: 0, count: mic.count)
        var folded: [Bool] = []
        var start = 0
        while start + f <= mic.count {
            for n in 0..<f {
                buffers[0][n] = mic[start + n]
                buffers[1][n] = left[start + n]
                buffers[2][n] = right[start + n]
            }
            kernel.process(mic: &micPointers, reference: &referencePointers, output: &outPointers)
            for n in 0..<f { output[start + n] = buffers[3][n] }
            folded.append(kernel.referenceFolded)
            start += f
        }
        return (output, folded)
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
        var largest: Float = 0
        for n in 0..<count { largest = max(largest, abs(output[n] - expected[n])) }
        #expect(largest == 0, "largest difference \(largest)")
        let tail = Int(3 * fs)..<Int(5 * fs)
        #expect(decibels(meanSquare(mic[tail]) / meanSquare(output[tail])) >= 30)
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
        // The delay line aligns the reference 40 ms − 5 ms late: frames are judged as the MDF sees them.
        let lag = delay - kernel.alignmentMargin
        let firstStereoFrame = (stereo.lowerBound + lag) / f + 1
        #expect(folded[..<(stereo.lowerBound / f)].allSatisfy { $0 }, "folded while one signal plays")
        #expect(!folded[firstStereoFrame], "unfolded at the first frame that differs")
        #expect(folded[firstStereoFrame..<((stereo.upperBound + lag) / f)].allSatisfy { !$0 }, "stays unfolded")
        let refold = folded[((stereo.upperBound + lag) / f)...].firstIndex(of: true)
        #expect(refold.map { ($0 * f - stereo.upperBound - lag) } ?? count >= 2 * second, "folds after 2 s")
        #expect(refold.map { ($0 * f - stereo.upperBound - lag) } ?? count <= 3 * second, "folds within 3 s")
        if let refold { #expect(folded[refold...].allSatisfy { $0 }, "stays folded") }
        #expect(erle((3 * second)..<(4 * second)) >= 25, "one signal")
        #expect(erle((10 * second)..<(12 * second)) >= 25, "two signals")
        #expect(erle((16 * second)..<(18 * second)) >= 25, "one signal again")
    }
}

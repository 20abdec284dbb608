@testable import AudioDSP
import Testing

/// The delay line's choice between two loudspeakers' delays (`nearerLoudspeakerDelay`), fed the
/// tracker's estimates in turn: what the line takes after each, in milliseconds.
@Suite struct VoiceLoudspeakerDelayTests {
    static let fs = 48_000.0

    func lineDelays(_ estimates: [Double], mode: VoiceProcessingMode = .quality) -> [Double] {
        let kernel = VoiceProcessorKernel(
            settings: VoiceProcessorSettings(mode: mode, referenceChannels: 2, sampleRate: Self.fs))
        return estimates.map { kernel.nearerLoudspeakerDelay($0 * Self.fs / 1000) * 1000 / Self.fs }
    }

    /// Two loudspeakers 7 ms apart: the second is the other loudspeaker at once, and the line keeps
    /// the nearer whichever the tracker hears. A third delay is a moved echo path: the line follows.
    @Test func aCloseSecondDelayIsTheOtherLoudspeakerAtOnce() {
        #expect(lineDelays([30, 37, 30, 37, 49]) == [30, 30, 30, 30, 49])
    }

    /// 50 ms apart (farther than 20 ms): the line follows the second until the first is heard again,
    /// then keeps the nearer.
    @Test func aFartherSecondDelayCountsOnceTheFirstIsHeardAgain() {
        #expect(lineDelays([40, 90, 40, 90, 40]) == [40, 90, 40, 40, 40])
    }

    /// A wrong first estimate (50 ms) and then the two loudspeakers at 100 and 103 ms: the line follows
    /// 100, pairs it with 103, and never goes back to 50.
    @Test func aWrongFirstEstimateIsNotHeld() {
        #expect(lineDelays([50, 100, 103, 100, 103]) == [50, 100, 100, 100, 100])
    }

    /// An earlier peak of the correlation (`mayMovePath: false`) that is neither loudspeaker is not a
    /// moved echo path: with loudspeakers at 40 and 90 ms known, a peak at 0 ms (a chance peak of the
    /// first correlations of double talk after the far end was silent) leaves the line on the delay it
    /// had, where the tracker's own estimate there moves it. As the other loudspeaker it still counts.
    @Test func anEarlierPeakIsNeverAMovedPath() {
        let kernel = VoiceProcessorKernel(settings: VoiceProcessorSettings(referenceChannels: 2, sampleRate: Self.fs))
        let ms = Self.fs / 1000
        func line(_ estimate: Double, earlierPeak: Bool) -> Double {
            kernel.nearerLoudspeakerDelay(estimate * ms, mayMovePath: !earlierPeak) / ms
        }
        #expect(line(90, earlierPeak: false) == 90)
        #expect(line(40, earlierPeak: true) == 40, "the other loudspeaker, from an earlier peak")
        #expect(line(40, earlierPeak: false) == 40)
        #expect(line(0, earlierPeak: true) == 40, "a chance peak")
        #expect(kernel.loudspeakerDelays == (90 * ms, 40 * ms))
        #expect(line(0, earlierPeak: false) == 0, "the tracker's own estimate: the path moved")
    }

    /// Beyond 60 ms, or in low-complexity mode beyond 20 ms (its filter is 45 ms long), a second delay
    /// is a moved echo path.
    @Test func aSecondDelayBeyondTheFilterIsAMovedPath() {
        #expect(lineDelays([40, 110, 40]) == [40, 110, 40])
        #expect(lineDelays([40, 70, 40, 70], mode: .lowComplexity) == [40, 70, 40, 70])
    }

    /// Two loudspeakers 40 ms apart playing different talkers, the farther one's echo twice the nearer
    /// one's (16 kHz): the tracker, which hears their mix, takes the farther delay and shows the nearer
    /// one as an earlier peak. One loudspeaker, whose reflections all come after its direct sound, shows
    /// none.
    @Test func theTrackerShowsTheNearerLoudspeakerBehindTheLouderOne() {
        let fs = 16_000.0
        let count = Int(4 * fs)
        var first = SpeechLikeSignal(seed: 61)
        var second = SpeechLikeSignal(seed: 62)
        let a = first.make(count: count, sampleRate: fs, level: 0.05)
        let b = second.make(count: count, sampleRate: fs, level: 0.05)
        let mix = zip(a, b).map { $0 + $1 }
        let nearer = echoPath(a, delay: Int(0.030 * fs), sampleRate: fs, gain: 0.25)
        let farther = echoPath(b, delay: Int(0.070 * fs), sampleRate: fs, gain: 0.5)
        let twoLoudspeakers = zip(nearer, farther).map { $0 + $1 }
        let oneLoudspeaker = echoPath(mix, delay: Int(0.070 * fs), sampleRate: fs, gain: 0.5)
        for (mic, isTwo) in [(twoLoudspeakers, true), (oneLoudspeaker, false)] {
            var estimator = EchoDelayEstimator(sampleRate: fs, maximumDelaySeconds: 0.5)
            defer { estimator.deallocate() }
            var earlier: [Double] = []
            mix.withUnsafeBufferPointer { r in
                mic.withUnsafeBufferPointer { m in
                    for start in stride(from: 0, to: count, by: 160) {
                        estimator.push(reference: r.baseAddress! + start, mic: m.baseAddress! + start, count: 160)
                        earlier.append(estimator.earlierPeakSamples * 1000 / fs)
                    }
                }
            }
            #expect(abs(estimator.delayMilliseconds - 70) <= 1, "tracked \(estimator.delayMilliseconds) ms")
            let fromSecond = earlier[(Int(fs) / 160)...]
            if isTwo {
                let off = fromSecond.filter { abs($0 - 30) > 1 }
                #expect(off.isEmpty, "\(off.count) frames from 1 s without the nearer one: \(Set(off))")
            } else {
                #expect(
                    earlier.allSatisfy { $0 < 0 },
                    "an earlier peak with one loudspeaker: \(Set(earlier)) at \(earlier.indices.filter { earlier[$0] >= 0 })"
                )
            }
        }
    }

    /// The same two loudspeakers through the voice processor, the nearer one playing from the start or
    /// from 0.4 s: the tracker settles on the farther one, which carries more, and the delay line takes
    /// the nearer one's delay within 1 s of its start, from the tracker's earlier peak, and keeps it; the
    /// filter then covers both, and the echo is cancelled from the second second on. Before, the line
    /// followed the farther one until the tracker heard the nearer one again, which here it never does.
    @Test(arguments: [0.0, 0.4])
    func theNearerLoudspeakerIsTakenWhileTheFartherCarriesMore(nearerStart: Double) {
        let fs = 16_000.0
        let count = Int(6 * fs)
        var first = SpeechLikeSignal(seed: 61)
        var second = SpeechLikeSignal(seed: 62)
        let silent = Int(nearerStart * fs)
        let left = first.make(count: count, sampleRate: fs, level: 0.05).enumerated().map { $0 < silent ? 0 : $1 }
        let right = second.make(count: count, sampleRate: fs, level: 0.05)
        let mic = zip(
            echoPath(left, delay: Int(0.030 * fs), sampleRate: fs, gain: 0.25),
            echoPath(right, delay: Int(0.070 * fs), sampleRate: fs, gain: 0.5)
        ).map { $0 + $1 }
        let kernel = VoiceProcessorKernel(settings: VoiceProcessorSettings(referenceChannels: 2, sampleRate: fs))
        let f = kernel.frameLength
        let (output, _, delays, tracked) = VoiceReferenceFoldingTests().runTracking(
            kernel, mic: mic, left: left, right: right)
        #expect(tracked[(Int(fs) / f)...].allSatisfy { abs($0 - 70) <= 1 }, "the tracker hears the farther one")
        let found = delays.firstIndex { abs($0 - 30) <= 1 } ?? delays.count
        #expect(found * f <= silent + Int(fs), "the nearer loudspeaker's delay after \(found * f) samples")
        let away = delays[found...].filter { abs($0 - 30) > 1 }
        #expect(away.isEmpty, "\(away.count) frames on another delay: \(Set(away.map { $0.rounded() }))")
        for second in 1..<6 {
            let range = (second * Int(fs))..<((second + 1) * Int(fs))
            let erle = decibels(meanSquare(mic[range]) / meanSquare(output[range]))
            #expect(erle >= 20, "ERLE \(erle) dB over second \(second)")
        }
    }
}

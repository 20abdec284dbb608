@testable import AudioDSP
import DSPTestSupport
import Testing

/// Two correlated reference channels are made uncorrelated, each at its own power, by a transform that
/// leaves uncorrelated channels alone and moves smoothly; the two-loudspeaker MDF converges faster on a
/// stereo mix for it.
@Suite struct VoiceReferenceDecorrelationTests {
    let fs = 16_000.0
    let frame = 160

    /// Two independent speech-like signals.
    func sources(_ count: Int, seeds: (UInt64, UInt64) = (61, 62)) -> ([Float], [Float]) {
        var a = SpeechLikeSignal(seed: seeds.0)
        var b = SpeechLikeSignal(seed: seeds.1)
        return (a.make(count: count, sampleRate: fs, level: 0.05), b.make(count: count, sampleRate: fs, level: 0.05))
    }

    /// Feeds `update` the frames of `left` and `right` with sound in `range`, calling `afterFrame` after each.
    func learn(
        _ d: inout VoiceReferenceDecorrelation, _ left: [Float], _ right: [Float], _ range: Range<Int>,
        afterFrame: (VoiceReferenceDecorrelation) -> Void = { _ in }
    ) {
        var start = range.lowerBound
        while start + frame <= range.upperBound {
            var l = 0.0
            var r = 0.0
            var c = 0.0
            for n in start..<(start + frame) {
                l += Double(left[n]) * Double(left[n])
                r += Double(right[n]) * Double(right[n])
                c += Double(left[n]) * Double(right[n])
            }
            if max(l, r) > 1e-7 * Double(frame) { d.update(left: l, right: r, cross: c) }
            afterFrame(d)
            start += frame
        }
    }

    /// Powers and correlation of a pair over `range`.
    func statistics(_ x: [Float], _ y: [Float], _ range: Range<Int>) -> (Double, Double, Double) {
        var xx = 0.0
        var yy = 0.0
        var xy = 0.0
        for n in range {
            xx += Double(x[n]) * Double(x[n])
            yy += Double(y[n]) * Double(y[n])
            xy += Double(x[n]) * Double(y[n])
        }
        return (xx / Double(range.count), yy / Double(range.count), xy / EffectMath.squareRoot(xx * yy))
    }

    func transformed(_ d: VoiceReferenceDecorrelation, _ left: [Float], _ right: [Float]) -> ([Float], [Float]) {
        let pairs = zip(left, right).map { d.apply($0, $1) }
        return (pairs.map(\.0), pairs.map(\.1))
    }

    /// Two mixes of two signals at different levels (correlation 0.47, below the limit): after 6 s, the
    /// next 4 s come out uncorrelated, each channel at its own power.
    @Test func aMixComesOutUncorrelatedAtItsOwnPowers() {
        let count = Int(10 * fs)
        let (a, b) = sources(count)
        let left = zip(a, b).map { 2 * ($0 + 0.25 * $1) }
        let right = zip(a, b).map { 0.25 * $0 + $1 }
        var d = VoiceReferenceDecorrelation(frameSeconds: Double(frame) / fs)
        learn(&d, left, right, 0..<Int(6 * fs))
        let test = Int(6 * fs)..<count
        let before = statistics(left, right, test)
        #expect(abs(before.2 - 0.47) < 0.03, "input correlation \(before.2)")
        let (u, v) = transformed(d, left, right)
        let after = statistics(u, v, test)
        #expect(abs(after.2) < 0.03, "output correlation \(after.2)")
        #expect(abs(decibels(after.0 / before.0)) < 0.3, "left power \(decibels(after.0 / before.0)) dB")
        #expect(abs(decibels(after.1 / before.1)) < 0.3, "right power \(decibels(after.1 / before.1)) dB")
    }

    /// A stereo mix correlated beyond the limit (a + b/2 | a/2 + b, ρ = 0.8): the transform whitens
    /// as for ρ = 0.75, which leaves the sum's and the difference's powers in the ratio
    /// (1.8 / 1.75) : (0.2 / 0.25), an output correlation of 0.125.
    @Test func correlationBeyondTheLimitIsReducedAsTheClosedFormSays() {
        let count = Int(12 * fs)
        let (a, b) = sources(count, seeds: (63, 64))
        let left = zip(a, b).map { $0 + 0.5 * $1 }
        let right = zip(a, b).map { 0.5 * $0 + $1 }
        var d = VoiceReferenceDecorrelation(frameSeconds: Double(frame) / fs)
        learn(&d, left, right, 0..<Int(8 * fs))
        let test = Int(8 * fs)..<count
        let rho = statistics(left, right, test).2
        let sum = (1 + rho) / 1.75
        let difference = (1 - rho) / 0.25
        let expected = (sum - difference) / (sum + difference)
        let measured = statistics(transformed(d, left, right).0, transformed(d, left, right).1, test).2
        #expect(abs(rho - 0.8) < 0.03, "input correlation \(rho)")
        #expect(abs(measured - expected) < 0.02, "output correlation \(measured), closed form \(expected)")
        // The gain along the channels' difference: at most 2.
        // Its gains (eigenvalues: the diagonal ± the off-diagonals' geometric mean) are at most 2.
        let m = d.matrix
        let gains = (m.0 - (m.1 * m.2).squareRoot(), m.0 + (m.1 * m.2).squareRoot())
        #expect(gains.0 > 0.7 && gains.1 <= 2.0001, "gains \(gains)")
    }

    /// Two uncorrelated signals that take turns being 10 dB louder every 3 s, at equal power on
    /// average (where the principal components' axes turn by 90°): the transform stays within 0.05 of
    /// the identity and moves by less than 0.02 a frame (a turn of the axes would move it by 1).
    @Test func uncorrelatedChannelsPassAlmostUnchangedAndTheTransformMovesSmoothly() {
        let count = Int(20 * fs)
        let (a, b) = sources(count, seeds: (65, 66))
        let turn = Int(3 * fs)
        let left = (0..<count).map { ($0 / turn) % 2 == 0 ? a[$0] : 0.316 * a[$0] }
        let right = (0..<count).map { ($0 / turn) % 2 == 0 ? 0.316 * b[$0] : b[$0] }
        var d = VoiceReferenceDecorrelation(frameSeconds: Double(frame) / fs)
        var previous = d.matrix
        var largestStep: Float = 0
        var largestOffIdentity: Float = 0
        learn(&d, left, right, 0..<count) { now in
            let m = now.matrix
            largestStep = max(largestStep, abs(m.0 - previous.0), abs(m.1 - previous.1), abs(m.2 - previous.2))
            largestOffIdentity = max(largestOffIdentity, abs(m.0 - 1), abs(m.1), abs(m.2), abs(m.3 - 1))
            previous = m
        }
        #expect(largestOffIdentity < 0.05, "transform \(largestOffIdentity) from the identity")
        #expect(largestStep < 0.02, "largest step \(largestStep)")
    }

    /// Two correlated signals (a + b/2 | a/2 + b) on two loudspeakers 4 ms apart: the two-loudspeaker
    /// MDF's own ERLE (microphone over its error, far-end single talk) passes 35 dB within 9 s and is
    /// at least 40 dB over the last 2 s of 16. On the channels as they are it passed 35 dB after 15 s
    /// and ended at 35.6 dB.
    @Test func theTwoLoudspeakerFilterConvergesOnAStereoMix() {
        let count = Int(16 * fs)
        let (a, b) = sources(count, seeds: (67, 68))
        let left = zip(a, b).map { $0 + 0.5 * $1 }
        let right = zip(a, b).map { 0.5 * $0 + $1 }
        let mic = zip(
            echoPath(left, delay: Int(0.030 * fs), sampleRate: fs, gain: 0.5),
            echoPath(right, delay: Int(0.034 * fs), sampleRate: fs, gain: 0.35)
        ).map { $0 + $1 }
        let kernel = VoiceProcessorKernel(settings: VoiceProcessorSettings(referenceChannels: 2, sampleRate: fs))
        var erle: [Float] = []
        _ = VoiceReferenceFoldingTests().run(kernel, mic: mic, left: left, right: right) {
            erle.append(kernel.linearErleDb)
        }
        let perSecond = Int(fs) / kernel.frameLength
        let reached = erle.firstIndex { $0 >= 35 }.map { Double($0) / Double(perSecond) }
        let last = erle[(erle.count - 2 * perSecond)...]
        let ending = last.reduce(0, +) / Float(last.count)
        #expect(!kernel.referenceFolded)
        #expect((reached ?? 99) <= 9, "35 dB after \(reached ?? -1) s")
        #expect(ending >= 40, "\(ending) dB over the last 2 s")
    }
}

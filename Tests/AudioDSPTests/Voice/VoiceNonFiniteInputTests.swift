@testable import AudioDSP
import DSPTestSupport
import Testing

/// NaN and infinity arriving on the microphone or the reference (another JACK client's bad output), and
/// absurdly large finite samples: the processor does not trap, its output stays finite, and it keeps
/// cancelling the echo.
@Suite struct VoiceNonFiniteInputTests {
    /// 8 s of far end (one loudspeaker, or two playing different signals) and its echo at `rate`;
    /// `spoil` then changes the microphone and the two reference channels as they reach the processor.
    /// Returns the output's ERLE over the last 2 s and whether every output sample was finite.
    func run(
        referenceChannels: Int, rate: Double, seed: UInt64,
        spoil: (_ mic: inout [Float], _ left: inout [Float], _ right: inout [Float]) -> Void
    ) -> (erle: Double, finite: Bool) {
        let count = Int(8 * rate)
        var far = SpeechLikeSignal(seed: seed)
        var other = SpeechLikeSignal(seed: seed + 1)
        let left = far.make(count: count, sampleRate: rate, level: 0.05)
        let right = referenceChannels == 2 ? other.make(count: count, sampleRate: rate, level: 0.05) : left
        var echo = echoPath(left, delay: Int(0.030 * rate), sampleRate: rate, gain: 0.5)
        if referenceChannels == 2 {
            let second = echoPath(right, delay: Int(0.034 * rate), sampleRate: rate, gain: 0.4)
            echo = zip(echo, second).map { $0 + $1 }
        }
        var mic = echo
        var leftIn = left
        var rightIn = right
        spoil(&mic, &leftIn, &rightIn)
        let kernel = VoiceProcessorKernel(
            settings: VoiceProcessorSettings(referenceChannels: referenceChannels, sampleRate: rate))
        let output: [Float]
        if referenceChannels == 2 {
            output = VoiceReferenceFoldingTests().run(kernel, mic: mic, left: leftIn, right: rightIn).0
        } else {
            output = runVoiceKernel(kernel, mic: mic, reference: leftIn).output
        }
        let last = (count - 2 * Int(rate))..<count
        return (decibels(meanSquare(echo[last]) / meanSquare(output[last])), output.allSatisfy { $0.isFinite })
    }

    @Test(arguments: [1, 2])
    func nonFiniteSamplesAreTreatedAsSilence(referenceChannels: Int) {
        let rate = 16_000.0
        let result = run(referenceChannels: referenceChannels, rate: rate, seed: 71) { mic, left, right in
            // A burst of bad samples at 3 s on every input: NaN, +inf, −inf.
            let bad: [Float] = [.nan, .infinity, -.infinity]
            for i in 0..<30 {
                let n = Int(3 * rate) + 7 * i
                mic[n] = bad[i % 3]
                left[n + 1] = bad[(i + 1) % 3]
                right[n + 2] = bad[(i + 2) % 3]
            }
        }
        #expect(result.finite, "the output stayed finite")
        #expect(result.erle >= 25, "ERLE \(result.erle) dB over the last 2 s")
    }

    /// Absurdly large but finite samples (a client writing raw integers, or a gain gone wrong) used to
    /// overflow the loudspeaker-distortion learner's fifth powers into NaN and trap in the 16-bit
    /// conversion. They are clipped at the entry: the output stays finite, and the canceller is back
    /// within seconds. At 48 kHz, where the distortion learner runs.
    @Test(arguments: [1, 2])
    func hugeFiniteSamplesAreClipped(referenceChannels: Int) {
        let rate = 48_000.0
        let result = run(referenceChannels: referenceChannels, rate: rate, seed: 81) { mic, left, right in
            // At 3 s: single samples of 1e7 … 3e38 on every input, then a 20 ms run of 10⁶ on the reference.
            let huge: [Float] = [1e7, -1e12, 3e38, -3e38]
            for i in 0..<20 {
                let n = Int(3 * rate) + 11 * i
                mic[n] = huge[i % 4]
                left[n + 1] = huge[(i + 1) % 4]
                right[n + 2] = huge[(i + 2) % 4]
            }
            for n in Int(3.5 * rate)..<Int(3.52 * rate) { left[n] *= 2e7 }
        }
        #expect(result.finite, "the output stayed finite")
        #expect(result.erle >= 25, "ERLE \(result.erle) dB over the last 2 s")
    }
}

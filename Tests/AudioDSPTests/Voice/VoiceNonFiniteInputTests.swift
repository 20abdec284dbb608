@testable import AudioDSP
import DSPTestSupport
import Testing

/// NaN and infinity arriving on the microphone or the reference (another JACK client's bad output): the
/// processor does not trap, its output stays finite, and it keeps cancelling the echo.
@Suite struct VoiceNonFiniteInputTests {
    let fs = 16_000.0

    @Test(arguments: [1, 2])
    func nonFiniteSamplesAreTreatedAsSilence(referenceChannels: Int) {
        let count = Int(8 * fs)
        var far = SpeechLikeSignal(seed: 71)
        var other = SpeechLikeSignal(seed: 72)
        let left = far.make(count: count, sampleRate: fs, level: 0.05)
        let right = referenceChannels == 2 ? other.make(count: count, sampleRate: fs, level: 0.05) : left
        var echo = echoPath(left, delay: Int(0.030 * fs), sampleRate: fs, gain: 0.5)
        if referenceChannels == 2 {
            let second = echoPath(right, delay: Int(0.034 * fs), sampleRate: fs, gain: 0.4)
            echo = zip(echo, second).map { $0 + $1 }
        }
        var mic = echo
        var leftIn = left
        var rightIn = right
        // A burst of bad samples at 3 s on every input: NaN, +inf, −inf.
        let bad: [Float] = [.nan, .infinity, -.infinity]
        for i in 0..<30 {
            let n = Int(3 * fs) + 7 * i
            mic[n] = bad[i % 3]
            leftIn[n + 1] = bad[(i + 1) % 3]
            rightIn[n + 2] = bad[(i + 2) % 3]
        }
        let kernel = VoiceProcessorKernel(
            settings: VoiceProcessorSettings(referenceChannels: referenceChannels, sampleRate: fs))
        let output: [Float]
        if referenceChannels == 2 {
            output = VoiceReferenceFoldingTests().run(kernel, mic: mic, left: leftIn, right: rightIn).0
        } else {
            output = runVoiceKernel(kernel, mic: mic, reference: leftIn).output
        }
        #expect(output.allSatisfy { $0.isFinite }, "the output stayed finite")
        let last = (count - 2 * Int(fs))..<count
        let erle = decibels(meanSquare(echo[last]) / meanSquare(output[last]))
        #expect(erle >= 25, "ERLE \(erle) dB over the last 2 s")
    }
}

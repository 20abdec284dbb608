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

    /// Absurdly large but finite samples (a client writing raw integers, or a gain gone wrong) used to
    /// overflow the loudspeaker-distortion learner's fifth powers into NaN and trap in the 16-bit
    /// conversion. They are clipped at the entry: the output stays finite, the samples within range are
    /// untouched, and the canceller is back within seconds.
    @Test(arguments: [1, 2])
    func hugeFiniteSamplesAreClipped(referenceChannels: Int) {
        let rate = 48_000.0
        let count = Int(8 * rate)
        var far = SpeechLikeSignal(seed: 81)
        var other = SpeechLikeSignal(seed: 82)
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
        // At 3 s: single samples of 1e7 … 3e38 on every input, then a 20 ms run of 1e6 on the reference.
        let huge: [Float] = [1e7, -1e12, 3e38, -3e38]
        for i in 0..<20 {
            let n = Int(3 * rate) + 11 * i
            mic[n] = huge[i % 4]
            leftIn[n + 1] = huge[(i + 1) % 4]
            rightIn[n + 2] = huge[(i + 2) % 4]
        }
        for n in Int(3.5 * rate)..<Int(3.52 * rate) { leftIn[n] *= 2e7 }
        let kernel = VoiceProcessorKernel(
            settings: VoiceProcessorSettings(referenceChannels: referenceChannels, sampleRate: rate))
        let output: [Float]
        if referenceChannels == 2 {
            output = VoiceReferenceFoldingTests().run(kernel, mic: mic, left: leftIn, right: rightIn).0
        } else {
            output = runVoiceKernel(kernel, mic: mic, reference: leftIn).output
        }
        #expect(output.allSatisfy { $0.isFinite }, "the output stayed finite")
        let last = (count - 2 * Int(rate))..<count
        let erle = decibels(meanSquare(echo[last]) / meanSquare(output[last]))
        #expect(erle >= 25, "ERLE \(erle) dB over the last 2 s")
    }
}

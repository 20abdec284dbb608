import AudioDSP
import DSPTestSupport
import Testing

/// The suppressor's noise suppression on its own (no far end): a steady noise goes down to near the
/// noise floor, a talker over it keeps its level, and a microphone that starts in digital silence (a
/// port connected after the engine started, a source muted by sending zeros) is treated alike.
@Suite struct NoiseSuppressionTests {
    static let f = 480
    static let rate = 48_000.0

    /// Runs a suppressor with noise suppression over `silentFrames` frames of digital silence and then
    /// `frames` frames of white noise at −40 dBFS RMS plus `talker` (aligned to the noise's start).
    /// Returns the input and the output from the noise's start, the output moved back by the latency.
    func run(silentFrames: Int = 0, frames: Int, talker: [Float] = []) -> (input: [Float], output: [Float]) {
        let f = Self.f
        var suppressor = ResidualEchoSuppressor(frameLength: f, sampleRate: Self.rate)
        defer { suppressor.deallocate() }
        let buffers = SuppressorBuffers(frameLength: f, binCount: suppressor.binCount)
        defer { buffers.deallocate() }
        buffers.peak.initialize(repeating: 0, count: suppressor.binCount)
        buffers.echo.initialize(repeating: 0, count: f)
        var random = SpeechLikeSignal(seed: 41)
        var input: [Float] = []
        var output: [Float] = []
        for frame in 0..<(silentFrames + frames) {
            let index = frame - silentFrames
            for n in 0..<f {
                let i = index * f + n
                let noise = 0.0173 * random.noise()
                buffers.error[n] = index < 0 ? 0 : noise + (i < talker.count ? talker[i] : 0)
            }
            suppressor.process(
                error: buffers.error, echo: buffers.echo, referencePeak: buffers.peak, referenceWeight: 0,
                farEndActive: false, nearEndActive: false, clearTalker: false, noiseSuppression: true,
                output: buffers.output)
            if index >= 0 {
                input += Array(UnsafeBufferPointer(start: buffers.error, count: f))
                output += Array(UnsafeBufferPointer(start: buffers.output, count: f))
            }
        }
        let latency = suppressor.hopLength
        return (input, Array(output.dropFirst(latency)) + [Float](repeating: 0, count: latency))
    }

    @Test func steadyNoiseIsTakenDownFromTheStartAndAfterDigitalSilence() {
        // The last second of 4 s of noise.
        let last = (3 * 48_000)..<(4 * 48_000)
        let fromStart = run(frames: 400)
        let afterSilence = run(silentFrames: 100, frames: 400)
        let gain = decibels(meanSquare(fromStart.output[last]) / meanSquare(fromStart.input[last]))
        let gainAfterSilence = decibels(meanSquare(afterSilence.output[last]) / meanSquare(afterSilence.input[last]))
        print("steady white noise: \(gain) dB from the start, \(gainAfterSilence) dB after 1 s of digital silence")
        // The noise floor is −15 dB.
        #expect(gain < -10, "from the start: \(gain) dB")
        #expect(gain > -16, "below the noise floor: \(gain) dB")
        #expect(abs(gainAfterSilence - gain) < 1, "after silence \(gainAfterSilence) dB, from the start \(gain) dB")
    }

    @Test func aTalkerOverTheNoiseKeepsItsLevel() {
        // A speech-like talker 20 dB above the noise (−20 dBFS while it talks), from 2 s on.
        var source = SpeechLikeSignal(seed: 42)
        let talker =
            [Float](repeating: 0, count: 2 * 48_000) + source.make(count: 4 * 48_000, sampleRate: Self.rate, level: 0.1)
        let result = run(frames: 600, talker: talker)
        let span = (2 * 48_000)..<(6 * 48_000)
        var cross = 0.0
        var power = 0.0
        for i in span {
            cross += Double(result.output[i]) * Double(talker[i])
            power += Double(talker[i]) * Double(talker[i])
        }
        let kept = decibels((cross / power) * (cross / power))
        print("talker kept: \(kept) dB")
        #expect(kept > -1, "the talker over the noise: \(kept) dB")
    }
}

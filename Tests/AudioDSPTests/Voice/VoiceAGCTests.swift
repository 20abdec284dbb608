@testable import AudioDSP
import DSPTestSupport
import Testing

/// The AGC raises the near talker, and only the near talker: not the residue of the far end's words
/// that the suppressor leaves between them, not the room's noise while nobody talks.
@Suite struct VoiceAGCTests {
    let fs = 48_000.0

    /// Two processors that differ only in the AGC, on the same signals.
    func outputs(mic: [Float], reference: [Float]) -> (on: [Float], off: [Float]) {
        let on = VoiceProcessorKernel(settings: VoiceProcessorSettings(agc: true, sampleRate: fs))
        let off = VoiceProcessorKernel(settings: VoiceProcessorSettings(agc: false, sampleRate: fs))
        return (
            runVoiceKernel(on, mic: mic, reference: reference).output,
            runVoiceKernel(off, mic: mic, reference: reference).output
        )
    }

    func noise(count: Int, level: Float, seed: UInt64) -> [Float] {
        var source = SpeechLikeSignal(seed: seed)
        // Uniform on ±1 has an RMS of 1/√3.
        return (0..<count).map { _ in source.noise() * level * 1.732_050_8 }
    }

    /// Far end only, with its pauses, and noise at −60 dBFS: the AGC leaves the output where it is
    /// (it used to take the residue between words for a quiet talker and raise it by up to 30 dB).
    @Test func farEndResidueIsNotRaised() {
        let count = Int(8 * fs)
        var far = SpeechLikeSignal(seed: 31)
        let reference = far.make(count: count, sampleRate: fs, level: 0.05)
        let echo = echoPath(reference, delay: Int(0.060 * fs), sampleRate: fs, gain: 0.4)
        let room = noise(count: count, level: 0.001, seed: 32)
        let mic = zip(echo, room).map { $0 + $1 }
        let (on, off) = outputs(mic: mic, reference: reference)
        let span = Int(2 * fs)..<count
        let raised = decibels(meanSquare(on[span]) / meanSquare(off[span]))
        #expect(raised <= 1, "the AGC raised the far-end residue by \(raised) dB")
    }

    /// Room noise at −50 dBFS and nobody talking: the AGC leaves it where it is.
    @Test func noiseAloneIsNotRaised() {
        let count = Int(8 * fs)
        let mic = noise(count: count, level: 0.003_16, seed: 41)
        let (on, off) = outputs(mic: mic, reference: [Float](repeating: 0, count: count))
        let span = Int(2 * fs)..<count
        let raised = decibels(meanSquare(on[span]) / meanSquare(off[span]))
        #expect(raised <= 1, "the AGC raised the noise by \(raised) dB")
    }

    /// A −40 dBFS talker in −65 dBFS noise still reaches −26 ± 3 dBFS.
    @Test func aQuietTalkerInNoiseReachesTheTarget() {
        let count = Int(8 * fs)
        var talker = SpeechLikeSignal(seed: 51)
        let speech = talker.make(count: count, sampleRate: fs, level: 0.01)
        let room = noise(count: count, level: 0.000_56, seed: 52)
        let mic = zip(speech, room).map { $0 + $1 }
        let (on, _) = outputs(mic: mic, reference: [Float](repeating: 0, count: count))
        let f = 480
        let frames = stride(from: count - Int(2 * fs), to: count - f, by: f).map { meanSquare(on[$0..<($0 + f)]) }
        let loudest = frames.max() ?? 0
        let active = frames.filter { $0 > loudest * 0.01 }
        let level = decibels(active.reduce(0, +) / Double(max(1, active.count)))
        #expect(abs(level + 26) <= 3, "level \(level) dBFS")
    }
}

// The host's rate changes under a running engine (a JACK server back at another rate): every kernel
// designed for a rate is made again at the new one, with the values its node holds.
import AudioDSP
import AudioGraph
import DSPTestSupport
import Foundation
import Testing

@Suite struct SampleRateChangeTests {
    /// An impulse played through a delay of 0.1 s: the echo lands 0.1 s later at the rate the engine
    /// runs at, 4410 frames at 44.1 kHz (4800 if the kernel kept its 48 kHz design).
    @Test func aDelayKeepsItsTimeInSecondsAcrossARateChange() throws {
        let engine = Engine(configuration: EngineConfiguration(sampleRate: 48_000))
        try engine.attach(.delay, name: "echo", parameters: ["delayTime": .float(0.1), "feedback": .float(0)])
        try engine.connect("echo", to: "main")
        #expect(engine.setSampleRate(44_100).isEmpty)
        var impulse = [Float](repeating: 0, count: 8_000)
        impulse[0] = 1
        try engine.addBuffer(SampleBuffer(name: "click", channels: [impulse], sampleRate: 44_100))
        try engine.attach(.player, name: "p", parameters: ["buffer": .string("click"), "playing": .bool(true)])
        try engine.connect("p", to: "echo")
        let out = OfflineRenderer(engine: engine).render(frameCount: 8_000, hostBlockFrames: 256)[0]
        let peak = out.indices.max { abs(out[$0]) < abs(out[$1]) } ?? -1
        #expect(abs(peak - 4_410) <= 1, "echo at frame \(peak)")
    }

    /// A narrow parametric EQ band at 1 kHz, +12 dB: its peak stays at 1 kHz after the change (a kernel
    /// kept at 48 kHz puts it at 919 Hz and gives 1 kHz 0.6 dB).
    @Test func anEQBandKeepsItsFrequencyAcrossARateChange() throws {
        let engine = Engine(configuration: EngineConfiguration(sampleRate: 48_000))
        try engine.attach(
            .eq, name: "eq",
            parameters: [
                "bands": .int(1), "band0.filterType": .string("parametric"), "band0.frequency": .float(1_000),
                "band0.bandwidth": .float(0.05), "band0.gain": .float(12), "band0.bypass": .bool(false)
            ])
        try engine.connect("eq", to: "main")
        _ = engine.setSampleRate(44_100)
        let tone = (0..<44_100).map { Float(0.1 * sin(2 * Double.pi * 1_000 * Double($0) / 44_100)) }
        try engine.addBuffer(SampleBuffer(name: "tone", channels: [tone], sampleRate: 44_100))
        try engine.attach(.player, name: "p", parameters: ["buffer": .string("tone"), "playing": .bool(true)])
        try engine.connect("p", to: "eq")
        let out = OfflineRenderer(engine: engine).render(frameCount: 44_100, hostBlockFrames: 512)[0]
        let level = Goertzel.amplitude(Array(out[22_050..<44_100]), frequency: 1_000, sampleRate: 44_100)
        // A mono source reaches each channel of main at unity.
        let gain = Decibels.fromAmplitude(level / 0.1)
        #expect(abs(gain - 12) < 0.2, "gain at 1 kHz \(gain) dB")
    }

    /// A voice processor is made again at the new rate: its latency is one and a half 10 ms frames of it.
    /// Beyond 8–96 kHz it cannot run, is bypassed, and says so.
    @Test func aVoiceProcessorFollowsTheRateOrSaysWhyNot() throws {
        let engine = Engine(configuration: EngineConfiguration(sampleRate: 48_000))
        try engine.attach(.voiceprocessor, name: "vp", parameters: ["ports": .bool(false)])
        #expect(try engine.get("vp", "latency") == .int(720))
        #expect(engine.setSampleRate(44_100).isEmpty)
        #expect(try engine.get("vp", "latency") == .int(660))
        let problems = engine.setSampleRate(192_000)
        #expect(problems.count == 1 && problems.first?.contains("8–96 kHz") == true, "\(problems)")
        #expect(engine.setSampleRate(48_000).isEmpty)
        #expect(try engine.get("vp", "latency") == .int(720))
        // Everything replaced is released once the render thread has moved on.
        let renderer = OfflineRenderer(engine: engine)
        for _ in 0..<4 {
            _ = renderer.render(frameCount: 256, hostBlockFrames: 256)
            engine.poll()
        }
        #expect(engine.pendingReleaseCount == 0)
    }
}

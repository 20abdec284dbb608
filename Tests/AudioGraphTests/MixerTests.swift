import AudioGraph
import Foundation
import DSPTestSupport
import Testing

@Suite struct MixerTests {
    @Test func unityInputsSumExactly() throws {
        let engine = TestEngine.make()
        try engine.addBuffer(TestEngine.constant("a", value: 0.25, channels: 2))
        try engine.addBuffer(TestEngine.constant("b", value: 0.5, channels: 2))
        for (name, buffer) in [("pa", "a"), ("pb", "b")] {
            try engine.attach(.player, name: name, parameters: ["buffer": .string(buffer), "playing": .bool(true)])
            try engine.connect(name, to: "main")
        }
        let out = TestEngine.render(engine, frames: 512)
        #expect(out[0][300] == 0.75 && out[1][300] == 0.75)
    }

    @Test(arguments: [-1.0, -0.5, 0.0, 0.3, 1.0])
    func monoSourceIsPannedWithEqualPower(pan: Double) throws {
        let engine = TestEngine.make()
        try engine.addBuffer(TestEngine.constant("x", value: 0.5))
        try engine.attach(
            .player, name: "p",
            parameters: [
                "buffer": .string("x"), "playing": .bool(true), "pan": .float(pan), "volume": .float(0.8)
            ])
        try engine.connect("p", to: "main")
        let out = TestEngine.render(engine, frames: 256)
        let theta = (pan + 1) * Double.pi / 4
        #expect(abs(Double(out[0][200]) - 0.4 * cos(theta)) < 1e-6)
        #expect(abs(Double(out[1][200]) - 0.4 * sin(theta)) < 1e-6)
        let power = Double(out[0][200] * out[0][200] + out[1][200] * out[1][200])
        #expect(abs(power - 0.16) < 1e-6)
    }

    @Test func stereoSourceDownmixesToMonoMixerAsAverage() throws {
        let engine = TestEngine.make(outputs: 1)
        let buffer = SampleBuffer(
            name: "s", channels: [Array(repeating: 0.2, count: 1000), Array(repeating: 0.6, count: 1000)],
            sampleRate: TestEngine.rate)
        try engine.addBuffer(buffer)
        try engine.attach(.player, name: "p", parameters: ["buffer": .string("s"), "playing": .bool(true)])
        try engine.connect("p", to: "main")
        let out = TestEngine.render(engine, frames: 256)
        #expect(out.count == 1)
        #expect(abs(out[0][100] - 0.4) < 1e-6)
    }

    @Test func monoMixerUpmixesToStereoOutput() throws {
        let engine = TestEngine.make()
        try engine.addBuffer(TestEngine.constant("x", value: 0.3))
        try engine.attach(.mixer, name: "m", parameters: ["channels": .int(1)])
        try engine.attach(.player, name: "p", parameters: ["buffer": .string("x"), "playing": .bool(true)])
        try engine.connect("p", to: "m")
        try engine.connect("m", to: "output")
        let out = TestEngine.render(engine, frames: 128)
        #expect(abs(out[0][64] - 0.3) < 1e-7 && abs(out[1][64] - 0.3) < 1e-7)
    }

    @Test func outputVolumeAndSubmixesCompose() throws {
        let engine = TestEngine.make()
        try engine.addBuffer(TestEngine.constant("x", value: 0.5, channels: 2))
        try engine.attach(.mixer, name: "sub", parameters: ["outputVolume": .float(0.5)])
        try engine.attach(.player, name: "p", parameters: ["buffer": .string("x"), "playing": .bool(true)])
        try engine.connect("p", to: "sub")
        try engine.connect("sub", to: "main")
        try engine.set("main", "outputVolume", to: .float(0.5))
        let out = TestEngine.render(engine, frames: 48_00)
        #expect(abs(out[0][4000] - 0.125) < 1e-6)
    }

    @Test func volumeAndPanTravelWithTheSource() throws {
        let engine = TestEngine.make()
        try engine.addBuffer(TestEngine.constant("x", value: 1))
        try engine.attach(
            .player, name: "p", parameters: ["buffer": .string("x"), "loop": .bool(true), "playing": .bool(true)])
        try engine.attach(.mixer, name: "m1")
        try engine.attach(.mixer, name: "m2")
        try engine.connect("m1", to: "main")
        try engine.connect("m2", to: "main")
        // Set while unconnected: cached on the player.
        try engine.set("p", "pan", to: .float(-1))
        try engine.set("p", "volume", to: .float(0.5))
        try engine.connect("p", to: "m1")
        var out = TestEngine.render(engine, frames: 4800)
        #expect(abs(out[0][4700] - 0.5) < 1e-6 && abs(out[1][4700]) < 1e-6)
        try engine.disconnect("p", from: "m1")
        try engine.connect("p", to: "m2")
        out = TestEngine.render(engine, frames: 4800)
        #expect(abs(out[0][4700] - 0.5) < 1e-6 && abs(out[1][4700]) < 1e-6)
        #expect(try engine.get("p", "pan") == .float(-1))
    }

    @Test func volumeChangesGlideWithoutClicks() throws {
        let engine = TestEngine.make()
        let sine = TestSignal.sine(frequency: 440, sampleRate: TestEngine.rate, frames: 48_000, amplitude: 0.9)
        try engine.addBuffer(SampleBuffer(name: "s", channels: [sine], sampleRate: TestEngine.rate))
        try engine.attach(
            .player, name: "p", parameters: ["buffer": .string("s"), "loop": .bool(true), "playing": .bool(true)])
        try engine.connect("p", to: "main")
        var left: [Float] = []
        left += TestEngine.render(engine, frames: 4800)[0]
        try engine.set("p", "volume", to: .float(0))
        left += TestEngine.render(engine, frames: 4800)[0]
        try engine.set("p", "volume", to: .float(1))
        try engine.set("p", "pan", to: .float(1))
        left += TestEngine.render(engine, frames: 4800)[0]
        // A 440 Hz sine at 0.9/√2 moves at most 2π·440/48000·0.64 ≈ 0.037 per sample; a 20 ms ramp adds
        // at most 0.64/960 per sample. A hard jump would step by up to 0.64.
        let bound: Float = 0.037 + 0.64 / 960 + 1e-3
        #expect(SignalStats.maxStep(left[...]) <= bound)
        // And the changes really happened.
        #expect(SignalStats.peak(left[5800..<9600]) < 1e-6)
        #expect(SignalStats.peak(left[11_000..<14_400]) < 1e-6)
    }

    @Test func connectingAndDisconnectingWhilePlayingNeverClicks() throws {
        let engine = TestEngine.make()
        let sine = TestSignal.sine(frequency: 440, sampleRate: TestEngine.rate, frames: 48_000, amplitude: 0.9)
        try engine.addBuffer(SampleBuffer(name: "s", channels: [sine], sampleRate: TestEngine.rate))
        try engine.attach(
            .player, name: "p", parameters: ["buffer": .string("s"), "loop": .bool(true), "playing": .bool(true)])
        try engine.attach(.mixer, name: "sub")
        try engine.connect("sub", to: "main")
        try engine.connect("p", to: "sub")
        var left: [Float] = []
        left += TestEngine.render(engine, frames: 4800, block: 128)[0]
        try engine.disconnect("p", from: "sub")
        left += TestEngine.render(engine, frames: 4800, block: 128)[0]
        try engine.connect("p", to: "main")
        left += TestEngine.render(engine, frames: 4800, block: 128)[0]
        try engine.connect("sub", to: "output")  // replaces main → output
        left += TestEngine.render(engine, frames: 4800, block: 128)[0]
        try engine.connect("main", to: "output")
        left += TestEngine.render(engine, frames: 4800, block: 128)[0]
        try engine.detach("p")
        left += TestEngine.render(engine, frames: 4800, block: 128)[0]
        // Sine slope at 0.64 peak plus a 10 ms fade's slope; a hard cut would step by up to 0.64.
        let bound: Float = 2 * Float.pi * 440 / 48_000 * 0.64 + 0.64 / 480 + 1e-3
        #expect(SignalStats.maxStep(left[...]) <= bound)
        #expect(SignalStats.peak(left[5800..<9600]) == 0)  // disconnected
        #expect(SignalStats.peak(left[10_600..<14_400]) > 0.6)  // reconnected to main
        #expect(SignalStats.peak(left[15_400..<19_200]) == 0)  // output now fed by the empty submix
        #expect(SignalStats.peak(left[20_200..<24_000]) > 0.6)  // main back on the output
        #expect(SignalStats.peak(left[25_000..<28_800]) == 0)  // player detached
    }
}

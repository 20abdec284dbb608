// Secondary audio (Wwise's BGM bus): nodes marked `secondary` fade out linearly over 0.3 s while other
// audio plays, stay silent whatever their volume is set to meanwhile, and fade back in to their volume
// after; nodes not marked are untouched.
import AudioGraph
import DSPTestSupport
import Testing

@Suite struct SecondaryAudioTests {
    /// `music` (secondary, 0.5 DC, left) and `voice` (0.25 DC, right) into main.
    private func makeEngine() throws -> Engine {
        let engine = TestEngine.make()
        try engine.addBuffer(TestEngine.constant("music", value: 0.5))
        try engine.addBuffer(TestEngine.constant("voice", value: 0.25))
        try engine.attach(
            .player, name: "music",
            parameters: [
                "buffer": .string("music"), "loop": .bool(true), "playing": .bool(true), "pan": .float(-1),
                "secondary": .bool(true)
            ])
        try engine.attach(
            .player, name: "voice",
            parameters: ["buffer": .string("voice"), "loop": .bool(true), "playing": .bool(true), "pan": .float(1)])
        try engine.connect("music", to: "main")
        try engine.connect("voice", to: "main")
        return engine
    }

    @Test func secondaryNodesFadeOutAndBackWhileOthersStay() throws {
        let engine = try makeEngine()
        let renderer = OfflineRenderer(engine: engine)
        _ = renderer.render(frameCount: 480, hostBlockFrames: 256)
        #expect(try engine.silenceSecondaryAudio(true) == ["music"])
        #expect(engine.isSecondaryAudioSilenced)
        let fade = 14_400
        let out = renderer.render(frameCount: fade + 4_800, hostBlockFrames: 256)
        // A linear glide from 0.5 to 0 over 0.3 s, one step per frame.
        for i in stride(from: 0, to: fade, by: 997) {
            let expected = 0.5 * (1 - Float(i) / Float(fade))
            #expect(abs(out[0][i] - expected) < 1e-4, "frame \(i): \(out[0][i]) vs \(expected)")
        }
        // (The other player, panned right, leaks cos(π/2) × 0.25 ≈ 1.5e-17 into the left channel.)
        #expect(out[0][fade...].allSatisfy { abs($0) < 1e-9 }, "\(out[0][(fade - 3)...(fade + 3)])")
        #expect(out[1].allSatisfy { abs($0 - 0.25) < 1e-6 }, "a node not marked secondary changed")
        // A volume change while silenced keeps it silent and is what it comes back to.
        try engine.set("music", "volume", to: .float(0.5))
        #expect(renderer.render(frameCount: 4_800, hostBlockFrames: 256)[0].allSatisfy { abs($0) < 1e-9 })
        try engine.silenceSecondaryAudio(false)
        let back = renderer.render(frameCount: fade + 4_800, hostBlockFrames: 256)[0]
        #expect(abs(back[fade / 2] - 0.125) < 1e-3, "half-way back to 0.5 × 0.5: \(back[fade / 2])")
        #expect(back[fade...].allSatisfy { abs($0 - 0.25) < 1e-6 })
        // Steps of the glide's size (the last lands on the target, up to twice that): no click.
        let steps = zip(back, back.dropFirst()).map { abs($1 - $0) }
        #expect((steps.max() ?? 1) <= 2 * 0.25 / Float(fade), "at \(steps.firstIndex(of: steps.max() ?? 0) ?? -1)")
    }

    @Test func markingANodeWhileSilencedFadesItOut() throws {
        let engine = try makeEngine()
        let renderer = OfflineRenderer(engine: engine)
        try engine.silenceSecondaryAudio(true)
        try engine.set("voice", "secondary", to: .bool(true))
        let out = renderer.render(frameCount: 19_200, hostBlockFrames: 256)
        #expect(out[1][14_400...].allSatisfy { abs($0) < 1e-9 })
        #expect(out[1][7_200] > 0.1 && out[1][7_200] < 0.15, "half-way: \(out[1][7_200])")
        try engine.set("voice", "secondary", to: .bool(false))
        let back = renderer.render(frameCount: 19_200, hostBlockFrames: 256)[1]
        #expect(back[14_400...].allSatisfy { abs($0 - 0.25) < 1e-6 })
    }
}

// The audio session's gain on the output (ducking by other sessions, the silent switch): a linear glide
// to the target over the asked time, the same whatever the host period, and nothing at all at unity.
import AudioGraph
import DSPTestSupport
import Testing

@Suite struct SessionGainTests {
    /// A player of constant 0.5 panned hard left, so the left output reads the gain straight off.
    private func makeEngine() throws -> Engine {
        let engine = TestEngine.make()
        try engine.addBuffer(TestEngine.constant("dc", value: 0.5))
        try engine.attach(
            .player, name: "p",
            parameters: ["buffer": .string("dc"), "loop": .bool(true), "playing": .bool(true), "pan": .float(-1)])
        try engine.connect("p", to: "main")
        return engine
    }

    @Test func theGainGlidesLinearlyToItsTargetWhateverThePeriod() throws {
        var renders: [[Float]] = []
        for period in [64, 256, 1_000] {
            let engine = try makeEngine()
            let renderer = OfflineRenderer(engine: engine)
            let before = renderer.render(frameCount: 960, hostBlockFrames: period)[0]
            #expect(before.allSatisfy { $0 == 0.5 }, "unity changes nothing")
            // −15 dB over 10 ms (480 frames).
            let target = Float(0.177_827_94)
            try engine.setSessionGain(target, rampSeconds: 0.01)
            let after = renderer.render(frameCount: 2_400, hostBlockFrames: period)[0]
            for i in 0..<480 {
                let expected = 0.5 * (1 + (target - 1) * Float(i) / 480)
                #expect(abs(after[i] - expected) < 1e-5, "frame \(i) at period \(period): \(after[i]) vs \(expected)")
                if abs(after[i] - expected) >= 1e-5 { break }
            }
            #expect(after[480...].allSatisfy { abs($0 - 0.5 * target) < 1e-6 })
            renders.append(after)
        }
        #expect(renders[0] == renders[1] && renders[1] == renders[2], "the glide depends on the period")
    }

    @Test func mutingSilencesTheOutputAndABadGainIsRefused() throws {
        let engine = try makeEngine()
        let renderer = OfflineRenderer(engine: engine)
        try engine.setSessionGain(0, rampSeconds: 0.05)
        let out = renderer.render(frameCount: 4_800, hostBlockFrames: 256)[0]
        #expect(out[2_400...].allSatisfy { $0 == 0 })
        // The fade has no step larger than the glide's own.
        let steps = zip(out, out.dropFirst()).map { abs($1 - $0) }
        #expect(steps.max() ?? 1 <= 0.5 / 2_400 + 1e-6)
        #expect(throws: EngineError.self) { try engine.setSessionGain(-1, rampSeconds: 0) }
        #expect(throws: EngineError.self) { try engine.setSessionGain(.nan, rampSeconds: 0) }
    }
}

// An interruption pauses every playing player and audioplayer; when it ends with shouldResume, those
// with `resumeAfterInterruption` (the default) play on from where they were, sample for sample, and the
// others stay paused.
import AudioGraph
import DSPTestSupport
import Testing

@Suite struct InterruptionTests {
    /// A ramp 0, 1e-4, 2e-4, … (a position reads straight off a sample), looping.
    private static func ramp(frames: Int = 9_600) -> SampleBuffer {
        SampleBuffer(
            name: "ramp", channels: [(0..<frames).map { Float($0) * 1e-4 }], sampleRate: TestEngine.rate)
    }

    private func makeEngine(resumes: Bool) throws -> Engine {
        let engine = TestEngine.make()
        try engine.addBuffer(Self.ramp())
        try engine.attach(
            .player, name: "p",
            parameters: [
                "buffer": .string("ramp"), "loop": .bool(true), "playing": .bool(true), "pan": .float(-1),
                "resumeAfterInterruption": .bool(resumes)
            ])
        try engine.connect("p", to: "main")
        return engine
    }

    @Test func playersResumeWhereTheyWere() throws {
        let engine = try makeEngine(resumes: true)
        let reference = try makeEngine(resumes: true)
        let renderer = OfflineRenderer(engine: engine)
        let before = renderer.render(frameCount: 4_800, hostBlockFrames: 256)[0]
        #expect(engine.beginInterruption() == ["p"])
        #expect(engine.isInterrupted)
        #expect(try engine.get("p", "playing") == .bool(false))
        let during = renderer.render(frameCount: 2_400, hostBlockFrames: 256)[0]
        #expect(during.allSatisfy { $0 == 0 }, "the player sounds during the interruption")
        #expect(engine.endInterruption(shouldResume: true) == ["p"])
        #expect(!engine.isInterrupted)
        let after = renderer.render(frameCount: 4_800, hostBlockFrames: 256)[0]
        // Null test: what plays after the interruption is what an uninterrupted player plays next.
        let uninterrupted = OfflineRenderer(engine: reference).render(frameCount: 9_600, hostBlockFrames: 256)[0]
        #expect(before == Array(uninterrupted[0..<4_800]))
        let error = zip(after, uninterrupted[4_800..<9_600]).map { abs($0 - $1) }.max() ?? 1
        #expect(error == 0, "resumed playback differs from the uninterrupted one by \(error)")
    }

    @Test func aPlayerThatDoesNotResumeStaysPausedAndSoDoesEveryoneWithoutShouldResume() throws {
        let engine = try makeEngine(resumes: false)
        try engine.attach(.player, name: "idle", parameters: ["buffer": .string("ramp")])
        try engine.connect("idle", to: "main")
        _ = TestEngine.render(engine, frames: 1_024)
        #expect(engine.beginInterruption() == ["p"], "only playing players are paused")
        #expect(engine.endInterruption(shouldResume: true).isEmpty)
        #expect(try engine.get("p", "playing") == .bool(false))
        #expect(try engine.get("idle", "playing") == .bool(false))

        try engine.set("p", "resumeAfterInterruption", to: .bool(true))
        try engine.play("p")
        #expect(engine.beginInterruption() == ["p"])
        #expect(engine.endInterruption(shouldResume: false).isEmpty)
        #expect(try engine.get("p", "playing") == .bool(false))
        let output = TestEngine.render(engine, frames: 1_024)[0]
        #expect(output.allSatisfy { $0 == 0 })
    }

    /// An interruption that paused the players "a" and "p", during which "a" was freed.
    private func interruptionThatOutlivedPlayerA() throws -> Engine {
        let engine = try makeEngine(resumes: true)
        try engine.attach(.audioplayer, name: "a", parameters: ["buffer": .string("ramp"), "playing": .bool(true)])
        try engine.connect("a", to: "main")
        _ = TestEngine.render(engine, frames: 1_024)
        #expect(engine.beginInterruption() == ["a", "p"])
        try engine.detach("a")
        return engine
    }

    @Test func aPlayerPausedByHandDuringTheInterruptionIsNotResumedTwiceNorAFreedOne() throws {
        let engine = try interruptionThatOutlivedPlayerA()
        #expect(engine.endInterruption(shouldResume: true) == ["p"])
    }

    /// A paused player freed during the interruption and its name taken by a mixer (which has no
    /// `resumeAfterInterruption`): the end resumes the other players and leaves the mixer alone. It used
    /// to read the player's parameter from the mixer and stop the engine.
    @Test func aNameTakenByAnotherKindDuringTheInterruptionIsNotResumed() throws {
        let engine = try interruptionThatOutlivedPlayerA()
        try engine.attach(.mixer, name: "a")
        #expect(engine.endInterruption(shouldResume: true) == ["p"])
        // A player made anew under a paused one's name was never paused: it is not resumed either.
        #expect(engine.beginInterruption() == ["p"])
        try engine.detach("p")
        try engine.attach(.audioplayer, name: "p", parameters: ["buffer": .string("ramp")])
        #expect(engine.endInterruption(shouldResume: true).isEmpty)
        #expect(try engine.get("p", "playing") == .bool(false))
    }
}

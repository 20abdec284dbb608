import AudioGraph
import DSPTestSupport
import Synchronization
import Testing

@Suite struct PlayerTests {
    /// A player straight into the output (no mixer gains), so samples come out untouched.
    func directPlayer(_ engine: Engine, _ buffer: SampleBuffer, _ params: [String: ParameterValue]) throws {
        try engine.addBuffer(buffer)
        var p = params
        p["buffer"] = .string(buffer.name)
        try engine.attach(.player, name: "p", parameters: p)
        try engine.connect("p", to: "output")
    }

    /// A player created playing has a timeline from the frame a program first renders it, like one
    /// started with `play`: player time and engine time advance together from there.
    @Test func aPlayerCreatedPlayingHasAPlayerTime() throws {
        let engine = TestEngine.make(outputs: 1)
        try directPlayer(engine, TestEngine.constant("c", value: 0.1), ["loop": .bool(true), "playing": .bool(true)])
        #expect(try engine.playerTime("p", forSampleTime: 0) == 0, "not rendered yet: it stands at 0")
        _ = TestEngine.render(engine, frames: 4_800)
        #expect(try engine.playerTime("p", forSampleTime: 4_800) == 4_800)
        #expect(try engine.playerTime("p", forSampleTime: 9_600) == 9_600)
        try engine.attach(.player, name: "idle", parameters: ["buffer": .string("c")])
        #expect(try engine.playerTime("idle", forSampleTime: 4_800) == nil, "not playing: no player time")
    }

    @Test func oncePlaysTheRegionThenSilenceAndReportsFinished() throws {
        let engine = TestEngine.make(outputs: 1)
        let ramp = TestSignal.ramp(frames: 1000, offset: 0.01)
        try directPlayer(
            engine, SampleBuffer(name: "r", channels: [ramp], sampleRate: TestEngine.rate),
            ["start": .int(100), "frames": .int(300), "playing": .bool(true)])
        let finished = Mutex<[EngineEvent]>([])
        engine.setEventHandler { e in finished.withLock { $0.append(e) } }
        let out = TestEngine.render(engine, frames: 1000, block: 64)[0]
        #expect(Array(out[0..<300]) == Array(ramp[100..<400]))
        #expect(out[300..<1000].allSatisfy { $0 == 0 })
        #expect(finished.withLock { $0 } == [.playerFinished(node: "p", sampleTime: 300)])
        #expect(try engine.get("p", "playing") == .bool(false))
    }

    @Test(arguments: [1, 64, 100, 257])
    func loopSeamIsSampleContinuous(block: Int) throws {
        let engine = TestEngine.make(outputs: 1)
        let ramp = TestSignal.ramp(frames: 500)
        try directPlayer(
            engine, SampleBuffer(name: "r", channels: [ramp], sampleRate: TestEngine.rate),
            ["start": .int(50), "frames": .int(123), "loop": .bool(true), "playing": .bool(true)])
        let out = TestEngine.render(engine, frames: 2000, block: block)[0]
        for i in 0..<2000 {
            #expect(out[i] == ramp[50 + i % 123], "frame \(i)"); if out[i] != ramp[50 + i % 123] { break }
        }
    }

    @Test func playAtSampleTimeStartsOnThatExactFrame() throws {
        let engine = TestEngine.make(outputs: 1)
        try directPlayer(engine, TestEngine.constant("one", value: 1), [:])
        try engine.play("p", atSampleTime: 12_345)
        let out = TestEngine.render(engine, frames: 20_000, block: 1000)[0]
        #expect(SignalStats.onset(out, threshold: 0.5) == 12_345)
    }

    @Test func pauseKeepsPositionAndStopRewinds() throws {
        let engine = TestEngine.make(outputs: 1)
        let ramp = TestSignal.ramp(frames: 10_000, offset: 0.001)
        try directPlayer(
            engine, SampleBuffer(name: "r", channels: [ramp], sampleRate: TestEngine.rate), ["playing": .bool(true)])
        let a = TestEngine.render(engine, frames: 1000, block: 100)[0]
        try engine.pause("p")
        let b = TestEngine.render(engine, frames: 500, block: 100)[0]
        try engine.play("p")
        let c = TestEngine.render(engine, frames: 100, block: 100)[0]
        try engine.stop("p")
        try engine.play("p")
        let d = TestEngine.render(engine, frames: 100, block: 100)[0]
        #expect(a == Array(ramp[0..<1000]))
        #expect(b.allSatisfy { $0 == 0 })
        #expect(c == Array(ramp[1000..<1100]))
        #expect(d == Array(ramp[0..<100]))
    }

    @Test func changingToAMonoBufferReshapesTheBus() throws {
        let engine = TestEngine.make()
        try engine.addBuffer(TestEngine.constant("st", value: 0.5, channels: 2))
        try engine.addBuffer(TestEngine.constant("mono", value: 0.5, channels: 1))
        try engine.attach(
            .player, name: "p", parameters: ["buffer": .string("st"), "loop": .bool(true), "playing": .bool(true)])
        try engine.connect("p", to: "main")
        #expect(try engine.get("p", "channels") == .int(2))
        _ = TestEngine.render(engine, frames: 256)
        try engine.set("p", "buffer", to: .string("mono"))
        #expect(try engine.get("p", "channels") == .int(1))
        let out = TestEngine.render(engine, frames: 4800)
        #expect(abs(out[0][4700] - Float(0.5 / 2.0.squareRoot())) < 1e-6)
        #expect(abs(out[1][4700] - Float(0.5 / 2.0.squareRoot())) < 1e-6)
    }

    @Test func removingABufferStopsItsPlayers() throws {
        let engine = TestEngine.make()
        try engine.addBuffer(TestEngine.constant("x", value: 0.5))
        try engine.attach(
            .player, name: "p", parameters: ["buffer": .string("x"), "loop": .bool(true), "playing": .bool(true)])
        try engine.connect("p", to: "main")
        _ = TestEngine.render(engine, frames: 256)
        try engine.removeBuffer("x")
        let out = TestEngine.render(engine, frames: 256)
        #expect(out[0].allSatisfy { $0 == 0 })
        #expect(try engine.get("p", "buffer") == .string(""))
    }

    @Test func bufferAtAnotherRateIsRefused() {
        let engine = TestEngine.make()
        let b = SampleBuffer(name: "b", channels: [[0, 0]], sampleRate: 44_100)
        #expect(#expect(throws: EngineError.self) { try engine.addBuffer(b) }?.code == .bufferMismatch)
    }
}

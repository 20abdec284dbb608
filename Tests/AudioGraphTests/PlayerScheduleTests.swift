import AudioGraph
import DSPTestSupport
import Foundation
import Synchronization
import Testing

@Suite struct PlayerScheduleTests {
    /// A player wired straight to a mono output, so rendered samples equal the scheduled ones.
    func directPlayer() throws -> Engine {
        let engine = TestEngine.make(outputs: 1)
        try engine.attach(.player, name: "p")
        try engine.connect("p", to: "output")
        return engine
    }

    final class EventLog: Sendable {
        let events = Mutex<[EngineEvent]>([])
        func append(_ e: EngineEvent) { events.withLock { $0.append(e) } }
        var all: [EngineEvent] { events.withLock { $0 } }
    }

    func collectEvents(_ engine: Engine) -> EventLog {
        let log = EventLog()
        engine.setEventHandler { log.append($0) }
        return log
    }

    /// The seeds' siren: an attack, a looping sustain, and a release scheduled with interruptsAtLoop.
    /// All three are pieces of one 480 Hz sine (100-frame period), so any seam shows as a wrong sample.
    @Test(arguments: [1, 64, 100, 333])
    func sirenSeamsAreSampleContinuous(block: Int) throws {
        let engine = try directPlayer()
        let sine = TestSignal.sine(frequency: 480, sampleRate: 48_000, frames: 10_000, amplitude: 0.8)
        let attack = Array(sine[0..<1_000])
        let sustain = Array(sine[1_000..<1_100])
        let release = (0..<3_000).map { sine[$0] * Float(1 - Double($0) / 3_000) }
        for (name, samples) in [("attack", attack), ("sustain", sustain), ("release", release)] {
            try engine.addBuffer(SampleBuffer(name: name, channels: [samples], sampleRate: 48_000))
        }
        try engine.scheduleBuffer("p", buffer: "attack")
        try engine.scheduleBuffer("p", buffer: "sustain", options: .loops)
        try engine.play("p")
        let renderer = OfflineRenderer(engine: engine)
        var out = renderer.render(frameCount: 4_321, hostBlockFrames: block)[0]
        try engine.scheduleBuffer("p", buffer: "release", options: .interruptsAtLoop)
        out += renderer.render(frameCount: 6_000, hostBlockFrames: block)[0]
        #expect(Array(out[0..<1_000]) == attack)
        // The sustain loops until the loop point after the request, then the release follows at once.
        let releaseStart = 1_000 + ((4_321 - 1_000 + 99) / 100) * 100
        for i in 1_000..<releaseStart where out[i] != sustain[(i - 1_000) % 100] {
            Issue.record("sustain differs at frame \(i)")
            break
        }
        #expect(Array(out[releaseStart..<releaseStart + 3_000]) == release)
        #expect(out[(releaseStart + 3_000)...].allSatisfy { $0 == 0 })
        #expect(SignalStats.maxStep(out[...]) <= Float(2 * Double.pi * 480 / 48_000 * 0.8) + 1e-4)
    }

    @Test func interruptsReplacesAtOnceAndAppendQueues() throws {
        let engine = try directPlayer()
        try engine.addBuffer(TestEngine.constant("a", value: 0.25, frames: 1_000))
        try engine.addBuffer(TestEngine.constant("b", value: 0.5, frames: 1_000))
        try engine.addBuffer(TestEngine.constant("c", value: 0.75, frames: 500))
        try engine.scheduleBuffer("p", buffer: "a")
        try engine.scheduleBuffer("p", buffer: "b")
        try engine.play("p")
        var out = TestEngine.render(engine, frames: 1_500, block: 250)[0]
        #expect(out[999] == 0.25 && out[1_000] == 0.5)
        try engine.scheduleBuffer("p", buffer: "c", options: .interrupts)
        out = TestEngine.render(engine, frames: 1_000, block: 250)[0]
        #expect(out[0..<500].allSatisfy { $0 == 0.75 })
        #expect(out[500...].allSatisfy { $0 == 0 })
    }

    /// Changing a player's material region replaces the material only: an item scheduled with `enqueue`
    /// stays queued behind it and plays at the next `play` (the material pauses the player when it ends).
    @Test func aMaterialChangeKeepsTheEnqueuedItems() throws {
        let engine = try directPlayer()
        let events = collectEvents(engine)
        try engine.addBuffer(TestEngine.constant("a", value: 0.25, frames: 1_000))
        try engine.addBuffer(TestEngine.constant("b", value: 0.5, frames: 500))
        try engine.set("p", "buffer", to: .string("a"))
        let item = try engine.scheduleBuffer("p", buffer: "b", completion: .dataRendered)
        try engine.play("p")
        var out = TestEngine.render(engine, frames: 300, block: 100)[0]
        #expect(out.allSatisfy { $0 == 0.25 })
        try engine.set("p", "start", to: .int(200))
        out = TestEngine.render(engine, frames: 1_200, block: 100)[0]
        #expect(out[0..<800].allSatisfy { $0 == 0.25 }, "the new region (800 frames) did not play first")
        #expect(out[800...].allSatisfy { $0 == 0 }, "the material did not pause the player at its end")
        #expect(
            !events.all.contains { if case .scheduleCompleted(_, item, _, _, _) = $0 { true } else { false } },
            "the enqueued item was dropped: \(events.all)")
        try engine.play("p")
        out = TestEngine.render(engine, frames: 600, block: 100)[0]
        #expect(out[0..<500].allSatisfy { $0 == 0.5 }, "the enqueued item did not play")
        #expect(
            events.all.contains(
                .scheduleCompleted(
                    node: "p", id: item, kind: .dataRendered, sampleTime: 2_000,
                    completed: true)), "\(events.all)")
    }

    @Test func completionsReportTheirKindFrameAndWhetherTheItemPlayed() throws {
        let engine = try directPlayer()
        let events = collectEvents(engine)
        engine.setOutputLatency(frames: 512)
        try engine.addBuffer(TestEngine.constant("a", value: 0.5, frames: 1_000))
        let consumed = try engine.scheduleBuffer("p", buffer: "a", completion: .dataConsumed)
        let played = try engine.scheduleBuffer("p", buffer: "a", completion: .dataPlayedBack)
        let dropped = try engine.scheduleBuffer("p", buffer: "a", completion: .dataRendered)
        try engine.play("p", atSampleTime: 100)
        _ = TestEngine.render(engine, frames: 2_400, block: 64)
        try engine.stop("p")
        _ = TestEngine.render(engine, frames: 1_000, block: 64)
        let got = events.all
        #expect(
            got.contains(
                .scheduleCompleted(node: "p", id: consumed, kind: .dataConsumed, sampleTime: 1_100, completed: true)))
        #expect(
            got.contains(
                .scheduleCompleted(
                    node: "p", id: played, kind: .dataPlayedBack, sampleTime: 2_100 + 512, completed: true)))
        #expect(
            got.contains(
                .scheduleCompleted(node: "p", id: dropped, kind: .dataRendered, sampleTime: 2_400, completed: false)))
    }

    @Test func itemsStartOnTheirPlayerTimeAndTimesConvert() throws {
        let engine = try directPlayer()
        try engine.addBuffer(TestEngine.constant("a", value: 1, frames: 100))
        try engine.scheduleBuffer("p", buffer: "a", atPlayerTime: 5_000)
        try engine.play("p", atSampleTime: 2_000)
        let out = TestEngine.render(engine, frames: 10_000, block: 128)[0]
        #expect(SignalStats.onset(out, threshold: 0.5) == 7_000)
        #expect(try engine.playerTime("p", forSampleTime: 9_000) == 7_000)
        #expect(try engine.sampleTime("p", forPlayerTime: 5_000) == 7_000)
        try engine.pause("p")
        _ = TestEngine.render(engine, frames: 64)
        #expect(try engine.playerTime("p", forSampleTime: 9_000) == nil)
    }

    @Test func scheduleRejectsBadRegionsAndUnknownBuffers() throws {
        let engine = try directPlayer()
        try engine.addBuffer(TestEngine.constant("a", value: 1, frames: 100))
        #expect(
            #expect(throws: EngineError.self) { try engine.scheduleBuffer("p", buffer: "zz") }?.code == .unknownBuffer)
        #expect(
            #expect(throws: EngineError.self) {
                try engine.scheduleBuffer("p", buffer: "a", startFrame: 50, frameCount: 60)
            }?.code == .outOfRange)
        #expect(
            #expect(throws: EngineError.self) { try engine.scheduleBuffer("main", buffer: "a") }?.code == .notAllowed)
    }
}

import AudioGraph
import DSPTestSupport
import Foundation
import Synchronization
import Testing

@Suite struct SoundPoolTests {
    final class EventLog: Sendable {
        let events = Mutex<[EngineEvent]>([])
        var finished: [(id: Int, completed: Bool)] {
            events.withLock {
                $0.compactMap {
                    if case .soundFinished(let id, _, let done) = $0 { return (id, done) } else { return nil }
                }
            }
        }
    }

    @Test func soundsPlayOnceAndReportCompletion() throws {
        let engine = TestEngine.make()
        let log = EventLog()
        engine.setEventHandler { e in log.events.withLock { $0.append(e) } }
        try engine.addBuffer(TestEngine.constant("blip", value: 0.5, frames: 1_000))
        let id = try engine.playSound("blip")
        let out = TestEngine.render(engine, frames: 4_800)
        // Mono through the `sounds` mixer (centre pan) into main: 0.5/√2 per side, for exactly 1000 frames.
        #expect(abs(out[0][500] - Float(0.5 / 2.0.squareRoot())) < 1e-6)
        #expect(out[0][1_000...].allSatisfy { $0 == 0 })
        #expect(log.finished.count == 1 && log.finished[0].id == id && log.finished[0].completed)
        #expect(engine.nodes().map(\.name) == ["main", "output", "sounds"])
    }

    /// The first sound of a running engine starts at full level on its first frame, like later ones: a
    /// click at the sound's sample 0 is heard whole.
    @Test func theFirstSoundStartsAtFullLevelOnItsFirstFrame() throws {
        let engine = TestEngine.make(outputs: 1)
        var click = [Float](repeating: 0, count: 256)
        click[0] = 0.8
        try engine.addBuffer(SampleBuffer(name: "click", channels: [click], sampleRate: TestEngine.rate))
        _ = TestEngine.render(engine, frames: 4_800)  // running, so new connections would fade in
        for _ in 0..<2 {
            try engine.playSound("click")
            let out = TestEngine.render(engine, frames: 512)
            #expect(out[0][0] == 0.8, "the click at the sound's first frame")
            #expect(out[0][1...].allSatisfy { $0 == 0 })
        }
    }

    @Test func polyphonyIsBoundedAndTheOldestVoiceIsStolen() throws {
        let engine = TestEngine.make(outputs: 1)
        let log = EventLog()
        engine.setEventHandler { e in log.events.withLock { $0.append(e) } }
        try engine.addBuffer(TestEngine.constant("long", value: 0.01, frames: 48_000))
        var ids: [Int] = []
        for _ in 0..<(Engine.soundVoiceCount + 3) {
            ids.append(try engine.playSound("long"))
            _ = TestEngine.render(engine, frames: 64)
        }
        let out = TestEngine.render(engine, frames: 256)
        // Never more than the pool's voices at once: 16 × 0.01.
        #expect(abs(out[0][100] - Float(Engine.soundVoiceCount) * 0.01) < 1e-5)
        let stolen = log.finished.filter { !$0.completed }.map(\.id)
        #expect(stolen == Array(ids.prefix(3)))
    }

    /// A stolen sound fades out over 2 ms (96 frames at 48 kHz) instead of stopping in one sample, while
    /// the new sound starts at once at full level; the stolen one then ends with `completed: false`.
    @Test func aStolenSoundFadesOutOver2Milliseconds() throws {
        let engine = TestEngine.make(outputs: 1)
        let log = EventLog()
        engine.setEventHandler { e in log.events.withLock { $0.append(e) } }
        try engine.addBuffer(TestEngine.constant("long", value: 0.01, frames: 48_000))
        var click = [Float](repeating: 0.01, count: 48_000)
        click[0] = 0.5
        try engine.addBuffer(SampleBuffer(name: "new", channels: [click], sampleRate: TestEngine.rate))
        var ids: [Int] = []
        for _ in 0..<Engine.soundVoiceCount { ids.append(try engine.playSound("long")) }
        let before = TestEngine.render(engine, frames: 256)
        #expect(abs(before[0][255] - 0.16) < 1e-6)
        let newID = try engine.playSound("new")
        let out = TestEngine.render(engine, frames: 512)[0]
        // The new sound's first frame at full level on top of the sixteen (the stolen one just starting
        // to fall).
        #expect(out[0] > 0.65 && out[0] <= 0.66 + 1e-6)
        // Then the stolen sound's 0.01 falls in equal steps to nothing over 96 frames: no step larger
        // than one ninety-sixth of it, and 16 × 0.01 once it has gone.
        var largestStep: Float = 0
        for f in 2..<out.count { largestStep = max(largestStep, abs(out[f] - out[f - 1])) }
        #expect(largestStep <= 0.01 / 96 + 1e-6)
        #expect(abs(out[48] - 0.165) < 2e-4, "halfway through the fade")
        #expect(out[96...].allSatisfy { abs($0 - 0.16) < 1e-6 })
        _ = TestEngine.render(engine, frames: 64)
        let finished = log.finished
        #expect(finished.count == 1 && finished.first?.id == ids[0] && finished.first?.completed == false)
        #expect(!finished.contains { $0.id == newID })
    }

    @Test func unknownBuffersAndBadLevelsAreRefused() throws {
        let engine = TestEngine.make()
        #expect(#expect(throws: EngineError.self) { try engine.playSound("nope") }?.code == .unknownBuffer)
        try engine.addBuffer(TestEngine.constant("b", value: 0.1))
        #expect(#expect(throws: EngineError.self) { try engine.playSound("b", volume: 2) }?.code == .outOfRange)
    }
}

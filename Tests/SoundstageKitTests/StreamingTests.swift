import AudioFiles
import AudioGraph
import DSPTestSupport
import Foundation
import SoundstageKit
import Synchronization
import Testing

@Suite(.serialized) struct StreamingTests {
    func engine(threshold: Double = 0.5) -> Engine {
        Engine(
            configuration: EngineConfiguration(sampleRate: 48_000, outputChannelCount: 2),
            fileLoader: nil, streamOpener: PatchLoader.streamOpener(relativeTo: nil),
            streamingThresholdSeconds: threshold)
    }

    /// Renders in small paced blocks (0.1 s), as a real-time host would.
    func paced(_ engine: Engine, frames: Int) -> [[Float]] { pacedRender(engine, frames: frames, chunk: 4_800) }

    func writeFile(_ samples: [[Float]], rate: Double, in dir: URL, name: String = "long.wav") throws -> String {
        let path = dir.appendingPathComponent(name).path
        try AudioFileWriter.write(AudioData(channels: samples, sampleRate: rate), to: path)
        return path
    }

    @Test func aStreamedFilePlaysExactlyItsSamples() throws {
        let dir = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        var noise = SeededRandom(seed: 11)
        let left = (0..<200_000).map { _ in noise.nextFloat() * 0.5 }
        let right = (0..<200_000).map { _ in noise.nextFloat() * 0.5 }
        let path = try writeFile([left, right], rate: 48_000, in: dir)
        let engine = engine()
        try engine.attach(.player, name: "p")
        try engine.connect("p", to: "output")
        let log = StreamEventLog()
        engine.setEventHandler { e in log.events.withLock { $0.append(e) } }
        let id = try engine.scheduleFile("p", path: path, completion: .dataConsumed)
        #expect(engine.streamMemory.count == 1)
        try engine.play("p")
        let out = paced(engine, frames: 210_000)
        #expect(Array(out[0][0..<200_000]) == left)
        #expect(Array(out[1][0..<200_000]) == right)
        #expect(out[0][200_000...].allSatisfy { $0 == 0 })
        #expect(!log.all.contains { if case .streamUnderrun = $0 { return true } else { return false } })
        #expect(
            log.all.contains(
                .scheduleCompleted(node: "p", id: id, kind: .dataConsumed, sampleTime: 200_000, completed: true)))
        #expect(engine.streamMemory.isEmpty)
    }

    @Test func aStarvedStreamUnderrunsInsteadOfStalling() throws {
        let dir = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let sine = TestSignal.sine(frequency: 500, sampleRate: 48_000, frames: 300_000, amplitude: 0.5)
        let path = try writeFile([sine], rate: 48_000, in: dir)
        let engine = engine()
        try engine.attach(.player, name: "p")
        try engine.connect("p", to: "output")
        let log = StreamEventLog()
        engine.setEventHandler { e in log.events.withLock { $0.append(e) } }
        engine.setDiskThreadPaused(true)
        try engine.scheduleFile("p", path: path)
        try engine.play("p")
        // Only the primed ring is available: rendering past it gives silence and an underrun event.
        let out = OfflineRenderer(engine: engine).render(frameCount: 100_000, hostBlockFrames: 256)
        #expect(SignalStats.peak(out[0][0..<60_000]) > 0.4)
        #expect(SignalStats.peak(out[0][70_000..<100_000]) == 0)
        let underrun = log.all.compactMap { e -> Int? in
            if case .streamUnderrun(_, let f) = e { return f } else { return nil }
        }
        #expect(underrun.reduce(0, +) > 0)
        engine.setDiskThreadPaused(false)
        // The idle disk thread looks again within 20 ms; wait until it has refilled the ring.
        let deadline = Date().addingTimeInterval(2)
        while (engine.streamStatus.first?.bufferedFrames ?? 0) < 24_000 && Date() < deadline { usleep(1_000) }
        let resumed = paced(engine, frames: 24_000)
        #expect(SignalStats.peak(resumed[0][12_000...]) > 0.4)
    }

    @Test func aStreamIsConvertedToTheEngineRateAndCanLoop() throws {
        let dir = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        // 441 Hz at 44.1 kHz: 100 frames per cycle, 441 whole cycles.
        let sine = TestSignal.sine(frequency: 441, sampleRate: 44_100, frames: 44_100, amplitude: 0.5)
        let path = try writeFile([sine], rate: 44_100, in: dir)
        let engine = engine(threshold: 0.5)
        try engine.attach(.player, name: "p")
        try engine.connect("p", to: "output")
        try engine.scheduleFile("p", path: path, options: .loops)
        try engine.play("p")
        let out = paced(engine, frames: 144_000)
        let level = Goertzel.amplitude(Array(out[0][48_000..<96_000]), frequency: 441, sampleRate: 48_000)
        #expect(abs(Decibels.fromAmplitude(level / 0.5)) < 0.1)
        // Across the loop points (every 48000 frames) the sine continues with no click: the largest step
        // stays within 10 % of the sine's own slope (the converter restarts at the loop point, which
        // leaves a tiny edge effect; files at the engine rate loop bit-exactly).
        #expect(SignalStats.maxStep(out[0][1_000..<143_000]) < Float(2 * Double.pi * 441 / 48_000 * 0.5) * 1.1)
    }
}

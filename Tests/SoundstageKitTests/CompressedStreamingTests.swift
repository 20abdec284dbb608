import AudioFiles
import AudioGraph
import DSPTestSupport
import Foundation
import SoundstageKit
import Synchronization
import Testing

/// AAC and ALAC in M4A stream from disk through the engine like any other file: gapless, from a
/// start frame, looping without a seam, and a file cut while it streams is reported, not played as
/// garbage.
@Suite(.serialized) struct CompressedStreamingTests {
    /// The gapless requirement's asset: two seconds at 44.1 kHz, played by an engine at that rate.
    static let rate = 44_100.0
    static let frames = 88_200

    /// An engine that streams everything longer than `threshold` seconds, with one player "p" on the
    /// output and its events logged.
    func engine(threshold: Double = 0.5, log: StreamEventLog) throws -> Engine {
        let engine = Engine(
            configuration: EngineConfiguration(sampleRate: Self.rate, outputChannelCount: 2),
            fileLoader: nil, streamOpener: PatchLoader.streamOpener(relativeTo: nil),
            streamingThresholdSeconds: threshold)
        try engine.attach(.player, name: "p")
        try engine.connect("p", to: "output")
        engine.setEventHandler { e in log.events.withLock { $0.append(e) } }
        return engine
    }

    /// Renders in small paced blocks (0.1 s), as a real-time host would.
    func paced(_ engine: Engine, frames: Int) -> [[Float]] { pacedRender(engine, frames: frames, chunk: 4_410) }

    /// Two tones, or a tone and seeded noise, written as 16-bit WAV and read back (the source asset).
    func source(in dir: URL, frames: Int = frames, isNoisy: Bool = false) throws -> AudioData {
        let path = dir.appendingPathComponent("source.wav").path
        let left = TestSignal.sine(frequency: 441, sampleRate: Self.rate, frames: frames, amplitude: 0.5)
        var noise = SeededRandom(seed: 17)
        let right =
            isNoisy
            ? (0..<frames).map { _ in noise.nextFloat() * 0.7 }
            : TestSignal.sine(frequency: 882, sampleRate: Self.rate, frames: frames, amplitude: 0.5)
        try AudioFileWriter.write(AudioData(channels: [left, right], sampleRate: Self.rate), to: path, encoding: .int16)
        return try AudioFileReader.load(path: path)
    }

    func write(_ data: AudioData, _ format: AudioFileFormat, in dir: URL, name: String = "asset.m4a") throws -> String {
        let path = dir.appendingPathComponent(name).path
        try AudioFileWriter.write(data, to: path, format: format)
        return path
    }

    /// Largest absolute difference (∞ when the lengths differ).
    func maximumDifference(_ a: ArraySlice<Float>, _ b: ArraySlice<Float>) -> Float {
        guard a.count == b.count else { return .infinity }
        return zip(a, b).reduce(0) { max($0, abs($1.0 - $1.1)) }
    }

    @Test(arguments: [AudioFileFormat.aacM4A, .alacM4A])
    func aStreamedM4APlaysExactlyThePreloadedFrames(_ format: AudioFileFormat) throws {
        let dir = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let source = try source(in: dir, isNoisy: true)
        let path = try write(source, format, in: dir)
        let preloaded = try AudioFileReader.load(path: path, targetSampleRate: Self.rate)
        let log = StreamEventLog()
        let engine = try engine(log: log)
        let id = try engine.scheduleFile("p", path: path, completion: .dataConsumed)
        #expect(engine.streamMemory.count == 1)
        try engine.play("p")
        let out = paced(engine, frames: Self.frames + 4_410)
        // 88,200 frames in the WAV, 88,200 out of the stream: priming and remainder removed, the end
        // reported on the exact frame, and the same samples as the preloaded decode.
        #expect(
            log.all.contains(
                .scheduleCompleted(
                    node: "p", id: id, kind: .dataConsumed,
                    sampleTime: Int64(Self.frames), completed: true)))
        for channel in 0..<2 {
            #expect(maximumDifference(out[channel][..<Self.frames], preloaded.channels[channel][...]) == 0)
            #expect(out[channel][Self.frames...].allSatisfy { $0 == 0 })
        }
        if format == .alacM4A {
            #expect(maximumDifference(out[1][..<Self.frames], source.channels[1][...]) == 0)
        }
        #expect(log.underrunFrames == 0)
        #expect(engine.streamMemory.isEmpty)
    }

    /// A segment (start frame + frame count) longer than the threshold streams from its start frame.
    @Test(arguments: [AudioFileFormat.aacM4A, .alacM4A])
    func aStreamedSegmentMatchesThePreloadedSegment(_ format: AudioFileFormat) throws {
        let dir = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = try write(try source(in: dir), format, in: dir)
        let preloaded = try AudioFileReader.load(path: path, targetSampleRate: Self.rate)
        let log = StreamEventLog()
        let engine = try engine(log: log)
        let (start, count) = (30_001, 50_000)
        try engine.scheduleFile("p", path: path, startFrame: start, frameCount: count)
        #expect(engine.streamMemory.count == 1)
        try engine.play("p")
        let out = paced(engine, frames: count + 1_000)
        for channel in 0..<2 {
            let expected = preloaded.channels[channel][start..<(start + count)]
            // ALAC: bit-exact. AAC: decoded after a seek with 4 packets of pre-roll, equal to
            // the preloaded decode up to the last bits (this two-tone file: exactly equal).
            #expect(maximumDifference(out[channel][..<count], expected) <= (format == .alacM4A ? 0 : 1e-5))
            #expect(out[channel][count...].allSatisfy { $0 == 0 })
        }
        #expect(throws: EngineError.self) {
            try engine.scheduleFile("p", path: path, startFrame: 80_000, frameCount: 10_000)
        }
        #expect(log.underrunFrames == 0)
    }

    /// A looping streamed AAC wraps from its last valid frame to its first: each pass is the
    /// preloaded decode again, so the seam is as continuous as the tone (a 441 Hz tone at 44.1 kHz
    /// has whole cycles in 88,200 frames).
    @Test func aLoopingStreamedAACHasNoSeam() throws {
        let dir = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = try write(try source(in: dir), .aacM4A, in: dir)
        let preloaded = try AudioFileReader.load(path: path, targetSampleRate: Self.rate).channels[0]
        let log = StreamEventLog()
        let engine = try engine(log: log)
        try engine.scheduleFile("p", path: path, options: .loops)
        try engine.play("p")
        let passes = 3
        let out = paced(engine, frames: passes * Self.frames)[0]
        for pass in 0..<passes {
            let range = (pass * Self.frames)..<((pass + 1) * Self.frames)
            #expect(maximumDifference(out[range], preloaded[...]) == 0, "pass \(pass)")
        }
        let toneStep = Float(2 * Double.pi * 441 / Self.rate * 0.5)
        for seam in [Self.frames, 2 * Self.frames] {
            #expect(SignalStats.maxStep(out[(seam - 64)..<(seam + 64)]) <= 1.5 * toneStep, "seam at \(seam)")
        }
        #expect(log.underrunFrames == 0)
    }

    /// A looping segment loops over the segment only, continuing across its end.
    @Test func aLoopingStreamedSegmentRepeatsTheSegment() throws {
        let dir = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = try write(try source(in: dir), .alacM4A, in: dir)
        let preloaded = try AudioFileReader.load(path: path).channels[1]
        let log = StreamEventLog()
        let engine = try engine(log: log)
        let (start, count) = (10_000, 30_000)
        try engine.scheduleFile("p", path: path, startFrame: start, frameCount: count, options: .loops)
        try engine.play("p")
        let out = paced(engine, frames: 3 * count)[1]
        for pass in 0..<3 {
            #expect(
                maximumDifference(out[(pass * count)..<((pass + 1) * count)], preloaded[start..<(start + count)]) == 0)
        }
    }

    /// An M4A cut after it was opened: the disk thread's decoder reaches the missing packets, the
    /// engine reports the failure once, and the player plays silence instead of crashing.
    @Test func anM4ACutWhileStreamingIsReportedNotPlayed() throws {
        let dir = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = try write(try source(in: dir, frames: 441_000), .aacM4A, in: dir)
        let log = StreamEventLog()
        let engine = try engine(log: log)
        try engine.scheduleFile("p", path: path)
        // FFmpeg writes the index last; cutting the file at 40 % drops the packets after ~4 s.
        let size = try #require(try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int)
        #expect(truncate(path, off_t(size * 2 / 5)) == 0)
        try engine.play("p")
        let out = paced(engine, frames: 300_000)
        let failures = log.all.compactMap { e -> String? in if case .streamFailed(_, let m) = e { m } else { nil } }
        #expect(failures.count == 1)
        #expect(failures.first?.contains("asset.m4a") == true)
        #expect(SignalStats.peak(out[0][..<44_100]) > 0.4)
        #expect(SignalStats.peak(out[0][280_000...]) == 0)
    }
}

// A file segment counts the file's own frames (AVAudioPlayerNode.scheduleSegment), whatever the engine
// rate: one second into a 44.1 kHz file is frame 44,100, and 4,410 of its frames play for 100 ms.
import AudioFiles
import AudioGraph
import DSPTestSupport
import Foundation
import SoundstageKit
import Testing

@Suite struct FileSegmentFramesTests {
    /// A 44.1 kHz file: silence for one second, then a 1 kHz sine starting at phase 0 on frame 44,100.
    static func writeFile(seconds: Double, in dir: URL) throws -> String {
        let rate = 44_100.0
        let frames = Int(seconds * rate)
        let samples = (0..<frames).map { f -> Float in
            f < 44_100 ? 0 : Float(0.5 * sin(2 * Double.pi * 1_000 * Double(f - 44_100) / rate))
        }
        let path = dir.appendingPathComponent("segment.wav").path
        try AudioFileWriter.write(AudioData(channels: [samples], sampleRate: rate), to: path, encoding: .float32)
        return path
    }

    /// How closely `out[range]` follows a 1 kHz sine of amplitude 0.5 at phase 0 on frame 0 (48 kHz):
    /// the normalised correlation, 1 for a perfect match.
    static func sineMatch(_ out: [Float], _ range: Range<Int>) -> Double {
        var dot = 0.0, a = 0.0, b = 0.0
        for f in range {
            let expected = 0.5 * sin(2 * Double.pi * 1_000 * Double(f) / 48_000)
            dot += Double(out[f]) * expected
            a += Double(out[f]) * Double(out[f])
            b += expected * expected
        }
        return a > 0 ? dot / (a * b).squareRoot() : 0
    }

    /// A mono 48 kHz engine whose player `p` feeds the output; files longer than `threshold` seconds stream.
    func engine(threshold: Double) throws -> Engine {
        let engine = Engine(
            configuration: EngineConfiguration(sampleRate: 48_000, outputChannelCount: 1),
            fileLoader: { path, rate in try SampleBuffer.decoding(name: "file", path: path, rate: rate) },
            streamOpener: PatchLoader.streamOpener(relativeTo: nil), streamingThresholdSeconds: threshold)
        try engine.attach(.player, name: "p")
        try engine.connect("p", to: "output")
        return engine
    }

    /// Preloaded: the segment starts on the file's frame 44,100 and lasts 4,410 file frames = 4,800
    /// engine frames.
    @Test func aPreloadedSegmentCountsTheFilesFrames() throws {
        let dir = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = try Self.writeFile(seconds: 2, in: dir)
        let engine = try engine(threshold: 20)
        try engine.scheduleFile("p", path: path, startFrame: 44_100, frameCount: 4_410)
        try engine.play("p")
        let out = OfflineRenderer(engine: engine).render(frameCount: 9_600, hostBlockFrames: 256)[0]
        #expect(Self.sineMatch(out, 64..<4_736) > 0.999, "the segment starts on the sine's first frame")
        #expect(out[4_810...].allSatisfy { abs($0) < 1e-3 }, "4,410 file frames play 4,800 engine frames")
        #expect(out[4_700..<4_790].contains { abs($0) > 0.3 }, "still playing just before 4,800")
    }

    /// Streamed (a segment longer than the threshold): the same start.
    @Test func aStreamedSegmentCountsTheFilesFrames() throws {
        let dir = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = try Self.writeFile(seconds: 3, in: dir)
        let engine = try engine(threshold: 0.5)
        try engine.scheduleFile("p", path: path, startFrame: 44_100, frameCount: 44_100)
        #expect(!engine.streamStatus.isEmpty, "streamed")
        try engine.play("p")
        waitForStreams(engine, frames: 9_600)
        let out = OfflineRenderer(engine: engine).render(frameCount: 9_600, hostBlockFrames: 256)[0]
        #expect(Self.sineMatch(out, 64..<9_536) > 0.999, "the streamed segment starts on the sine's first frame")
    }

    /// `/node/<name>/schedule/file`'s path (EngineFiles): file frames in, the player's region in engine
    /// frames, the reply counting what plays at the engine rate.
    @Test func scheduleFileOverOSCCountsTheFilesFrames() throws {
        let dir = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = try Self.writeFile(seconds: 2, in: dir)
        let engine = try engine(threshold: 20)
        let files = EngineFiles(engine: engine, policy: FileAccessPolicy(roots: [dir.path]))
        let (frames, channels) = try files.scheduleFile(on: "p", path: path, startFrame: 44_100, frameCount: 4_410)
        #expect(frames == 4_800 && channels == 1)
        #expect(try engine.get("p", "start") == .int(48_000))
        #expect(try engine.get("p", "frames") == .int(4_800))
        try engine.play("p")
        let out = OfflineRenderer(engine: engine).render(frameCount: 9_600, hostBlockFrames: 256)[0]
        #expect(Self.sineMatch(out, 64..<4_736) > 0.999)
        #expect(out[4_810...].allSatisfy { abs($0) < 1e-3 })
    }
}

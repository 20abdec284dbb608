import AudioFiles
import AudioGraph
import Foundation
@testable import SoundstageKit
import Synchronization
import Testing

/// `render` writes the patch's recorders too, and an offline recorder waits for its disk thread
/// instead of dropping what the render produces faster than real time.
@Suite struct OfflineRecordingTests {
    /// A saw pad and a blip into a submix `sub`, into `main`; recorders on `sub` (CAF), `main` (WAV),
    /// `music` (FLAC, half a second) and one that only prepares.
    private static let patch = """
        version: 1
        engine: { sampleRate: 48000, outputs: 2 }
        buffers:
          - name: pad
            generate: { waveform: saw, frequency: 110, duration: 2.0, amplitude: 0.2, channels: 2 }
          - name: blip
            generate: { waveform: square, frequency: 880, duration: 0.15, amplitude: 0.15 }
        nodes:
          - { name: music, kind: player, params: { buffer: pad, loop: true, playing: true, volume: 0.6 } }
          - { name: ui, kind: player, params: { buffer: blip, playing: true, pan: 0.5 } }
          - { name: sub, kind: mixer, params: { outputVolume: 0.8 } }
        connections:
          - { from: music, to: sub }
          - { from: ui, to: sub }
          - { from: sub, to: main }
        recorders:
          - { name: bus, node: sub, path: sub.caf }
          - { name: mix, node: main, path: mix.wav }
          - { name: take, node: music, path: take.flac, duration: 0.5 }
          - { name: later, node: main, path: later.wav, record: false }
        """

    /// 20 s and 5 frames: not a whole number of tap blocks (256) or poll intervals (1024).
    private static let frames = 960_005

    @Test func renderWritesEveryRecorderWithEveryFrameItRendered() throws {
        let dir = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let patch = try Fixtures.write(Self.patch, to: "rec.yaml", in: dir)
        let out = dir.appendingPathComponent("out.wav").path
        let r = try Fixtures.run(Fixtures.executable, ["render", patch, "--out", out, "--duration", "20.0001"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(
            r.stdout.contains(
                "recorder bus: wrote \(dir.appendingPathComponent("sub.caf").path): \(Self.frames) frames"),
            "\(r.stdout)")

        let rendered = try AudioFileReader.load(path: out)
        #expect(rendered.frameCount == Self.frames)
        // `main` is the file written to --out.
        let mix = try AudioFileReader.load(path: dir.appendingPathComponent("mix.wav").path)
        #expect(mix.channels == rendered.channels)
        // `sub`, compared with a tap on it during an in-process render of the same patch.
        let sub = try AudioFileReader.load(path: dir.appendingPathComponent("sub.caf").path)
        let expected = try Self.tapped(node: "sub", patch: patch, frames: Self.frames)
        #expect(sub.frameCount == Self.frames)
        #expect(sub.channels == expected)
        // A recorder's duration still cuts its take; one with `record: false` writes nothing.
        #expect(try AudioFileReader.info(path: dir.appendingPathComponent("take.flac").path).frameCount == 24_000)
        #expect(!FileManager.default.fileExists(atPath: dir.appendingPathComponent("later.wav").path))
    }

    @Test func aRecorderThatCannotStartFailsTheRenderButNotTheOthers() throws {
        let dir = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let patch = try Fixtures.write(
            """
            version: 1
            buffers:
              - { name: tone, generate: { waveform: sine, frequency: 440, duration: 1.0 } }
            nodes:
              - { name: p, kind: player, params: { buffer: tone, playing: true } }
            connections:
              - { from: p, to: main }
            recorders:
              - { name: lost, node: p, path: missing/take.wav }
              - { name: kept, node: p, path: kept.wav }
            """, to: "bad-recorder.yaml", in: dir)
        let out = dir.appendingPathComponent("out.wav").path
        let r = try Fixtures.run(Fixtures.executable, ["render", patch, "--out", out, "--duration", "0.5", "--quiet"])
        #expect(r.status == 1)
        #expect(r.stderr.contains("recorder 'lost'") && r.stderr.contains("missing"), "\(r.stderr)")
        #expect(try AudioFileReader.info(path: out).frameCount == 24_000)
        #expect(try AudioFileReader.info(path: dir.appendingPathComponent("kept.wav").path).frameCount == 24_000)
    }

    @Test func anOfflineRecorderWaitsForAWriterThatFallsBehind() throws {
        let dir = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let engine = try RecorderFixture.engine(playing: RecorderFixture.noise(frames: 30_000))
        let path = dir.appendingPathComponent("behind.wav").path
        // A backlog of 0.1 s, and a disk thread held for 0.3 s while 2 s are rendered.
        let recorder = try Recorder(
            engine: engine, node: "main", path: path,
            settings: RecorderSettings(maximumBacklog: 0.1, waitsForWriter: true))
        let log = RecorderEventLog(recorder)
        try recorder.prepareToRecord()
        recorder.holdWriterForTesting(true)
        try recorder.record()
        let writer = try #require(recorder.writerForTesting)
        let release = Thread {
            Thread.sleep(forTimeInterval: 0.3)
            writer.setHeld(false)
        }
        let start = Date()
        release.start()
        let rendered = RecorderFixture.render(engine, frames: 96_001)
        engine.flushTaps()
        let elapsed = Date().timeIntervalSince(start)
        recorder.stop()

        #expect(elapsed >= 0.25, "the render went on while the writer was held (\(elapsed) s)")
        #expect(log.lostFrames(.writerBehind) == 0)
        #expect(recorder.recordedFrameCount == 96_001)
        #expect(try AudioFileReader.load(path: path).channels == rendered)
        #expect(log.finishes == [true])
    }

    /// The frames `node` produced during an offline render of `patch`, from a tap.
    private static func tapped(node: String, patch: String, frames: Int) throws -> [[Float]] {
        let loaded = try PatchLoader.load(path: patch)
        let collected = Mutex<[[Float]]>([[], []])
        try loaded.engine.installTap(on: node, frameCount: 4096) { block in
            collected.withLock { channels in
                for c in channels.indices { channels[c] += block.channels[c] }
            }
        }
        OfflineRenderer(engine: loaded.engine).render(frameCount: frames, hostBlockFrames: 256) { _ in }
        loaded.engine.flushTaps()
        return collected.withLock { $0 }
    }
}

// A session folder (NSM's per-client path): the running state saved with copies of the files it reads,
// and reloaded to the same sound, sample for sample, offline.
import AudioFiles
import AudioGraph
import Foundation
import Patches
@testable import SoundstageKit
import Testing

@Suite struct SessionFolderTests {
    /// A noise file outside the session, played looping by `a`; a generated tone on `b`.
    private static let template = """
        version: 1
        engine: { sampleRate: 48000, outputs: 2 }
        buffers:
          - { name: noise, file: noise.wav }
          - name: tone
            generate: { waveform: sine, frequency: 330, duration: 0.5, amplitude: 0.3 }
        nodes:
          - { name: a, kind: player, params: { buffer: noise, loop: true, playing: true } }
          - { name: b, kind: player, params: { buffer: tone, loop: true, playing: true } }
          - { name: bus, kind: mixer }
        connections:
          - { from: a, to: bus }
          - { from: bus, to: main }
          - { from: b, to: main }
        recorders:
          - { name: take, node: main, path: take.wav, record: false }

        """

    private func folder(_ label: String) throws -> String {
        let path = NSTemporaryDirectory() + "session-\(label)-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    /// Writes the template and its noise file into `outside`.
    private func writeTemplate(in outside: String) throws -> String {
        var generator = SystemRandomNumberGenerator()
        let noise = (0..<2).map { _ in (0..<24_000).map { _ in Float.random(in: -0.5...0.5, using: &generator) } }
        try AudioFileWriter.write(AudioData(channels: noise, sampleRate: 48_000), to: outside + "/noise.wav")
        let path = outside + "/template.yaml"
        try Self.template.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    @Test func savedStateReloadsToTheSameSoundWithOutsideFilesCopiedIn() throws {
        let outside = try folder("outside")
        let sessionPath = try folder("nsm") + "/Soundstage.nTEST"
        defer {
            try? FileManager.default.removeItem(atPath: outside)
            try? FileManager.default.removeItem(
                atPath: URL(fileURLWithPath: sessionPath).deletingLastPathComponent().path)
        }
        let loaded = try PatchLoader.load(path: try writeTemplate(in: outside))
        // Edits made while running: parameters, a connection moved, a node added.
        let engine = loaded.engine
        try engine.set("a", "volume", to: .float(0.4))
        try engine.set("b", "pan", to: .float(-0.7))
        try engine.set("bus", "volume", to: .float(0.8))
        try engine.disconnect("b", from: "main")
        try engine.connect("b", to: "bus")
        try engine.attach(
            .player, name: "c", parameters: ["buffer": .string("tone"), "volume": .float(0.6), "playing": .bool(true)])
        try engine.connect("c", to: "main")

        let session = SessionFolder(path: sessionPath)
        let document = SessionFolder.document(
            of: engine,
            jackConnections: [("Soundstage.nTEST:out_1", "system:playback_1"), ("system:capture_1", "other:in")],
            clientName: "Soundstage.nTEST", carrying: loaded.document)
        let report = try session.save(document)
        #expect(report.copied == ["noise.wav"] && report.missing.isEmpty)
        #expect(FileManager.default.contentsEqual(atPath: outside + "/noise.wav", andPath: sessionPath + "/noise.wav"))

        let saved = try PatchParser.parse(contentsOf: session.patchPath, names: .engine)
        #expect(saved.buffer(named: "noise")?.source == .file(path: "noise.wav"))
        #expect(
            saved.jack.connections.map { "\($0.from)>\($0.to)" } == [
                "out_1>system:playback_1", "system:capture_1>other:in"
            ])
        #expect(saved.recorders.map(\.name) == ["take"], "the patch's recorders are carried over")

        let reloaded = try PatchLoader.load(path: session.patchPath)
        let frames = 48_000
        let before = OfflineRenderer(engine: engine).render(frameCount: frames, hostBlockFrames: 256)
        let after = OfflineRenderer(engine: reloaded.engine).render(frameCount: frames, hostBlockFrames: 256)
        #expect(before.map { $0.map(\.magnitude).max() ?? 0 }.allSatisfy { $0 > 0.05 }, "the render is not silent")
        // A null test: the reload sounds exactly like the running graph it was saved from, once the
        // running graph's parameter changes have finished their glide (the engine's 20 ms ramp; a reload
        // starts at the values).
        let settled = Int(engine.configuration.rampDuration * 48_000) + 64
        var largest: Float = 0
        for c in before.indices {
            for i in settled..<frames { largest = max(largest, abs(before[c][i] - after[c][i])) }
        }
        #expect(largest == 0, "largest difference \(largest)")

        // Saving again copies nothing new: the file is now inside the session.
        #expect(
            try session.save(
                SessionFolder.document(of: reloaded.engine, jackConnections: [], clientName: nil, carrying: saved)
            ).copied == [])
    }

    @Test func aNameClashGetsANumberedCopyAndTheSameFileIsReused() throws {
        let session = SessionFolder(path: try folder("clash"))
        let other = try folder("other")
        defer {
            try? FileManager.default.removeItem(atPath: session.path)
            try? FileManager.default.removeItem(atPath: other)
        }
        try AudioFileWriter.write(
            AudioData(channels: [[0.1, 0.2, 0.3]], sampleRate: 48_000), to: session.path + "/noise.wav")
        try AudioFileWriter.write(AudioData(channels: [[0.5, 0.5, 0.5]], sampleRate: 48_000), to: other + "/noise.wav")
        let document = PatchDocument(buffers: [
            PatchBuffer(name: "inside", source: .file(path: session.path + "/noise.wav")),
            PatchBuffer(name: "outside", source: .file(path: other + "/noise.wav")),
            PatchBuffer(name: "again", source: .file(path: other + "/noise.wav")),
            PatchBuffer(name: "gone", source: .file(path: other + "/gone.wav"))
        ])
        let report = try session.save(document)
        #expect(report.copied == ["noise-2.wav"])
        #expect(report.missing == [other + "/gone.wav"], "a missing file is reported, and the save happens")
        let saved = try PatchParser.parse(contentsOf: session.patchPath, names: .engine)
        #expect(
            saved.buffers.map(\.source) == [
                .file(path: "noise.wav"), .file(path: "noise-2.wav"), .file(path: "noise-2.wav"),
                .file(path: other + "/gone.wav")
            ])
    }

    @Test func filesNamedByParametersAreCopiedInToo() throws {
        let session = SessionFolder(path: try folder("params"))
        let other = try folder("song")
        defer {
            try? FileManager.default.removeItem(atPath: session.path)
            try? FileManager.default.removeItem(atPath: other)
        }
        try AudioFileWriter.write(AudioData(channels: [[0.1, -0.1, 0.2]], sampleRate: 48_000), to: other + "/song.wav")
        try "version: 1\nnodes:\n  - { name: deck, kind: audioplayer, params: { file: song.wav } }\n".write(
            toFile: other + "/deck.yaml", atomically: true, encoding: .utf8)
        let engine = try PatchLoader.load(path: other + "/deck.yaml").engine
        let document = SessionFolder.document(of: engine, jackConnections: [], clientName: nil, carrying: nil)
        #expect(try session.save(document, base: other).copied == ["song.wav"])
        let saved = try PatchParser.parse(contentsOf: session.patchPath, names: .engine)
        #expect(saved.node(named: "deck")?.params.first { $0.key == "file" }?.value == .string("song.wav"))
        // The reload finds it in the folder (a missing file would fail the load).
        let reloaded = try PatchLoader.load(path: session.patchPath)
        #expect(try reloaded.engine.get("deck", "file") == .string("song.wav"))
    }

    /// A file of the session deleted since it was copied in is named like any missing file, and a
    /// recorder that writes into a subfolder of the session finds that folder made.
    @Test func aFileGoneFromTheFolderIsReportedAndRecordingFoldersAreMade() throws {
        let session = SessionFolder(path: try folder("gone"))
        defer { try? FileManager.default.removeItem(atPath: session.path) }
        var document = PatchDocument(buffers: [
            PatchBuffer(name: "gone", source: .file(path: session.path + "/tone44.wav"))
        ])
        document.recorders = [
            PatchRecorder(name: "take", node: "main", path: "takes/take1.wav", record: false),
            PatchRecorder(name: "outside", node: "main", path: "../elsewhere/take.wav", record: false)
        ]
        let report = try session.save(document)
        #expect(report.missing == [session.path + "/tone44.wav"])
        var isFolder: ObjCBool = false
        #expect(
            FileManager.default.fileExists(atPath: session.path + "/takes", isDirectory: &isFolder)
                && isFolder.boolValue)
        // Nothing is made outside the session.
        let outside = URL(fileURLWithPath: session.path).deletingLastPathComponent().path + "/elsewhere"
        #expect(!FileManager.default.fileExists(atPath: outside))
        let saved = try PatchParser.parse(contentsOf: session.patchPath, names: .engine)
        #expect(saved.buffers.map(\.source) == [.file(path: "tone44.wav")])
    }

    @Test func aFolderThatCannotBeMadeIsAClearError() throws {
        let session = SessionFolder(path: "/proc/soundstage-cannot-exist/Soundstage.nX")
        #expect(throws: SessionFolderError.self) { try session.save(PatchDocument()) }
    }
}

import AudioFiles
import AudioGraph
import Foundation
import SoundstageKit
import Testing

/// Every format the recorder offers, after a clean stop and after SIGKILL, read back by Soundstage
/// (`info` and the reader), sox and ffmpeg.
@Suite struct RecorderFormatTests {
    /// File name and format of each take (ALAC is never chosen from an extension).
    static let takes: [(name: String, format: AudioFileFormat)] = [
        ("take.aiff", .aiff), ("take.ogg", .oggVorbis), ("take.opus", .opus), ("take.mp3", .mp3),
        ("take.m4a", .aacM4A), ("take-alac.m4a", .alacM4A), ("take.aac", .aacADTS)
    ]

    @Test func anOggRecordingStoppedCleanlyIsOneValidStream() throws {
        let dir = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("clean.ogg").path
        let engine = try RecorderFixture.engine(playing: RecorderFixture.noise(frames: 48_000))
        // Short header intervals: the recorder asks for many header updates during the take.
        let recorder = try Recorder(
            engine: engine, node: "p", path: path, settings: RecorderSettings(headerUpdateInterval: 0.01))
        try recorder.record(forDuration: 1.5)
        let renderer = OfflineRenderer(engine: engine, pollInterval: 480)
        for _ in 0..<200 {
            renderer.render(frameCount: 480, hostBlockFrames: 480) { _ in }
            usleep(5_000)
        }
        recorder.stop()
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        // One identification header: "\u{1}vorbis" appears once.
        let identification = Data([1] + Array("vorbis".utf8))
        var count = 0
        var searchRange = bytes.startIndex..<bytes.endIndex
        while let found = bytes.range(of: identification, in: searchRange) {
            count += 1
            searchRange = found.upperBound..<bytes.endIndex
        }
        #expect(count == 1, "identification header written \(count) times")
        let readBack = ReadBack(path: path, directory: dir)
        for (reader, frames) in readBack.frameCounts() {
            #expect(frames == 72_000, "\(reader): \(frames.map(String.init) ?? "unreadable") frames")
        }
    }

    @Test func everyRecorderFormatStoppedCleanlyReadsBackWithItsExactLength() throws {
        let dir = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let engine = try RecorderFixture.engine(playing: RecorderFixture.noise(frames: 48_000))
        let recorders = try Self.takes.map {
            try Recorder(
                engine: engine, node: "p", path: dir.appendingPathComponent($0.name).path,
                settings: RecorderSettings(format: $0.format, headerUpdateInterval: 0.05))
        }
        for recorder in recorders { try recorder.record(forDuration: 1.5) }
        let renderer = OfflineRenderer(engine: engine, pollInterval: 480)
        for _ in 0..<200 {
            renderer.render(frameCount: 480, hostBlockFrames: 480) { _ in }
            usleep(2_000)
        }
        for recorder in recorders { recorder.stop() }
        for take in Self.takes {
            let readBack = ReadBack(path: dir.appendingPathComponent(take.name).path, directory: dir)
            for (reader, frames) in readBack.frameCounts() {
                // ADTS has no place for the priming and padding (up to two packets); an M4A recording
                // records them in an iTunSMPB tag, which Soundstage applies and ffmpeg 5.1 does not.
                let keepsPadding = take.format == .aacADTS || (take.format == .aacM4A && reader == "ffmpeg")
                let expected = keepsPadding ? 72_000...(72_000 + 2_048) : 72_000...72_000
                #expect(
                    frames.map { expected.contains($0) } == true,
                    "\(take.name) by \(reader): \(frames.map(String.init) ?? "unreadable") frames")
            }
        }
    }

    @Test func everyRecorderFormatKilledWithSIGKILLReadsBackToWithinOneSecond() throws {
        let dir = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let elapsed = try RecorderChild.killWithSIGKILL(mode: "kill-every-format", directory: dir, afterSeconds: 4)
        // Lossy decoders that do not know the encoder's delay may add up to ~0.05 s at the start.
        let range = (elapsed - 1) * RecorderFixture.rate...(elapsed + 0.15) * RecorderFixture.rate
        for take in Self.takes {
            let readBack = ReadBack(path: dir.appendingPathComponent(take.name).path, directory: dir)
            for (reader, frames) in readBack.frameCounts() {
                #expect(
                    frames.map { range.contains(Double($0)) } == true,
                    "\(take.name) by \(reader): \(frames.map(String.init) ?? "unreadable") frames, killed after \(elapsed) s"
                )
            }
        }
    }
}

extension RecorderChild {
    /// Records the looping signal in every format of `RecorderFormatTests.takes` at once, in real
    /// time, until the parent kills the process (or 60 s pass).
    static func recordEveryFormatUntilKilled(in directory: URL) throws {
        let engine = try RecorderFixture.engine(playing: material())
        let recorders = try RecorderFormatTests.takes.map {
            try Recorder(
                engine: engine, node: "p", path: directory.appendingPathComponent($0.name).path,
                settings: RecorderSettings(format: $0.format))
        }
        try recordInRealTime(engine, recorders, markingStartIn: directory)
    }
}

/// The frames three independent readers get from one file.
struct ReadBack {
    let path: String
    let directory: URL

    /// Soundstage `info`, Soundstage's reader, sox and ffmpeg; nil where the reader failed (non-zero
    /// exit or an error). Debian's sox has no MP3, Opus, MP4 or ADTS reader (its libsndfile handler
    /// refuses Opus and cannot seek in MP3 input), so sox reads the other formats only.
    func frameCounts() -> [(String, Int?)] {
        var counts: [(String, Int?)] = [
            ("soundstage info", infoFrames()), ("AudioFileReader", try? AudioFileReader.load(path: path).frameCount)
        ]
        let soxReads = [".wav", ".aiff", ".caf", ".flac", ".ogg"].contains { path.hasSuffix($0) }
        if soxReads {
            counts.append(("sox", decoded(by: "/usr/bin/sox", ["-V1", path, "-t", "wav", "-e", "floating-point"])))
        }
        counts.append(
            ("ffmpeg", decoded(by: "/usr/bin/ffmpeg", ["-v", "error", "-y", "-i", path, "-c:a", "pcm_f32le"])))
        return counts
    }

    /// The frames `info` reports. A take cut off by a kill may lack its last page or its end-of-stream
    /// mark: `info` then says so ("truncated", exit 1) and still counts the frames that decode, which is
    /// what a user gets back; any other failure counts as unreadable.
    private func infoFrames() -> Int? {
        guard let result = try? Fixtures.run(Fixtures.executable, ["info", path]) else { return nil }
        let lines = result.stdout.split(separator: "\n")
        guard let status = lines.first(where: { $0.hasPrefix("Status:") }) else { return nil }
        let ok = result.status == 0 && status.hasSuffix(" ok")
        let cutShort = result.status == 1 && status.contains("truncated")
        guard ok || cutShort else { return nil }
        let line = lines.first { $0.hasPrefix("Valid frames:") }
        return line.flatMap { Int($0.split(separator: " ").last ?? "") }
    }

    /// Runs the converter with a WAV output appended, then counts that WAV's frames.
    private func decoded(by tool: String, _ arguments: [String]) -> Int? {
        let output = directory.appendingPathComponent("decoded-\(UUID().uuidString).wav").path
        defer { unlink(output) }
        guard let result = try? Fixtures.run(tool, arguments + [output]), result.status == 0 else { return nil }
        return try? AudioFileReader.info(path: output).frameCount
    }
}

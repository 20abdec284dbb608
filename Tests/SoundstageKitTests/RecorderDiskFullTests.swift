import AudioFiles
import AudioGraph
import DSPTestSupport
import Foundation
import SoundstageKit
import Testing

/// A disk that fills during a take, on a real 256 KB tmpfs: the file keeps what reached the disk (and
/// reads back with exactly the count the recorder reports), an empty take leaves no file, an old take
/// stays, and the message says the disk is full.
@Suite(.enabled(if: SmallDisk.isAvailable, Comment(rawValue: SmallDisk.unavailableReason)))
struct RecorderDiskFullTests {
    static let formats: [AudioFileFormat] = [
        .wav, .aiff, .caf, .flac, .oggVorbis, .opus, .mp3, .aacM4A, .alacM4A, .aacADTS
    ]

    static func name(_ format: AudioFileFormat) -> String {
        format == .alacM4A ? "take-alac.m4a" : "take.\(format.fileExtension)"
    }

    /// Records `main` (looping noise) until the take ends by itself or `seconds` are rendered; returns
    /// what was rendered.
    static func recordUntilTheTakeEnds(
        _ recorder: Recorder, _ engine: Engine, _ log: RecorderEventLog, seconds: Int = 60
    ) throws -> [[Float]] {
        try recorder.record()
        var parts: [[[Float]]] = []
        for _ in 0..<seconds where log.finishes.isEmpty {
            parts.append(RecorderFixture.render(engine, frames: 48_000))
            usleep(2_000)
        }
        recorder.stop()
        return RecorderFixture.concatenate(parts)
    }

    @Test(arguments: formats)
    func aTakeCutByAFullDiskKeepsWhatReachedItAndCountsExactlyThat(format: AudioFileFormat) throws {
        let disk = try SmallDisk(bytes: 256 * 1024)
        defer { disk.unmount() }
        let path = disk.path + "/" + Self.name(format)
        let engine = try RecorderFixture.engine(playing: RecorderFixture.noise(frames: 48_000))
        let recorder = try Recorder(
            engine: engine, node: "main", path: path, settings: RecorderSettings(format: format, waitsForWriter: true))
        let log = RecorderEventLog(recorder)
        let rendered = try Self.recordUntilTheTakeEnds(recorder, engine, log)
        #expect(log.finishes == [false], "the take ends unsuccessfully: \(log.all)")
        let message = log.errors.map(\.description).joined(separator: "\n")
        #expect(message.contains("Cannot write '\(path)': the disk is full (no space left on device)."), "\(message)")
        // The file reads back (Soundstage's own reader refuses a cut frame), and holds what was reported.
        let file = try AudioFileReader.load(path: path)
        #expect(file.frameCount > 0)
        #expect(file.frameCount == recorder.recordedFrameCount, "reported \(recorder.recordedFrameCount)")
        #expect(message.contains("The file keeps the take's first \(file.frameCount) frames"), "\(message)")
        if format.isLossless {
            // Exactly the take's beginning (24-bit FLAC and ALAC: to their quantization step).
            let tolerance: Float = format == .flac || format == .alacM4A ? 1.5 / 8_388_608 : 0
            for channel in 0..<2 {
                let expected = rendered[channel][0..<file.frameCount]
                let worst = zip(file.channels[channel], expected).map { abs($0 - $1) }.max() ?? 0
                #expect(worst <= tolerance, "channel \(channel) differs by \(worst)")
            }
        }
        let hidden = try FileManager.default.contentsOfDirectory(atPath: disk.path).filter { $0.hasPrefix(".") }
        #expect(hidden.isEmpty, "\(hidden)")
    }

    @Test(arguments: formats)
    func aTakeOnADiskAlreadyFullLeavesNoFile(format: AudioFileFormat) throws {
        let disk = try SmallDisk(bytes: 256 * 1024)
        defer { disk.unmount() }
        disk.fill()
        let path = disk.path + "/" + Self.name(format)
        let engine = try RecorderFixture.engine(playing: RecorderFixture.noise(frames: 48_000))
        let recorder = try Recorder(
            engine: engine, node: "main", path: path, settings: RecorderSettings(format: format, waitsForWriter: true))
        let log = RecorderEventLog(recorder)
        var message: String
        do {
            _ = try Self.recordUntilTheTakeEnds(recorder, engine, log, seconds: 10)
            message = log.errors.map(\.description).joined(separator: "\n")
            #expect(log.finishes == [false], "\(log.all)")
            #expect(message.contains("Nothing of the take reached the disk, so the file was removed."), "\(message)")
        } catch {
            // Refused when the take opened (the header did not fit).
            message = "\(error)"
        }
        #expect(message.contains("Cannot write '\(path)': the disk is full (no space left on device)."), "\(message)")
        #expect(!FileManager.default.fileExists(atPath: path), "an empty or broken file was left")
        #expect(recorder.recordedFrameCount == 0)
    }

    /// A take replacing yesterday's is written beside it: cut by a full disk, it is dropped and
    /// yesterday's take stays as it was.
    @Test func aTakeCutByAFullDiskLeavesTheOldTakeAsItWas() throws {
        let disk = try SmallDisk(bytes: 256 * 1024)
        defer { disk.unmount() }
        let path = disk.path + "/take.wav"
        try AudioFileWriter.write(
            AudioData(channels: RecorderFixture.noise(frames: 4_800, seed: 3), sampleRate: RecorderFixture.rate),
            to: path)
        let old = try Data(contentsOf: URL(fileURLWithPath: path))
        let engine = try RecorderFixture.engine(playing: RecorderFixture.noise(frames: 48_000))
        let recorder = try Recorder(
            engine: engine, node: "main", path: path, settings: RecorderSettings(waitsForWriter: true))
        let log = RecorderEventLog(recorder)
        _ = try Self.recordUntilTheTakeEnds(recorder, engine, log, seconds: 10)
        let message = log.errors.map(\.description).joined(separator: "\n")
        #expect(message.contains("Cannot write '\(path)': the disk is full (no space left on device)."), "\(message)")
        #expect(message.contains("The take was discarded; '\(path)' is as it was before."), "\(message)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == old, "the old take was replaced")
        #expect(recorder.recordedFrameCount == 0)
        let hidden = try FileManager.default.contentsOfDirectory(atPath: disk.path).filter { $0.hasPrefix(".") }
        #expect(hidden.isEmpty, "\(hidden)")
    }
}

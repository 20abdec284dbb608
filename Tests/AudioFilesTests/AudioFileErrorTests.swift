// Tests (control side). Broken, missing and hostile inputs end in a typed error whose message names
// the file; nothing traps.

import AudioFiles
import Foundation
import Testing

@Suite("Reader errors")
struct AudioFileErrorTests {
    /// A valid 1 s, 48 kHz stereo file of a 1 kHz tone, in the format `path`'s extension names.
    static func writeTone(to path: String, encoding: AudioSampleEncoding = .int16) throws {
        let tone = SignalProbe.sine(frequency: 1_000, amplitude: 0.5, sampleRate: 48_000, frameCount: 48_000)
        try AudioFileWriter.write(AudioData(channels: [tone, tone], sampleRate: 48_000), to: path, encoding: encoding)
    }

    /// Checks that `body` throws an `AudioFileError` whose description names `path`'s file, and
    /// returns it.
    static func expectError(naming path: String, _ body: () throws -> Void) -> AudioFileError? {
        let error = #expect(throws: AudioFileError.self) { try body() }
        let name = URL(fileURLWithPath: path).lastPathComponent
        #expect(error?.description.contains(name) == true, "“\(error?.description ?? "")” does not name \(name)")
        #expect(error?.path == path)
        return error
    }

    @Test func missingFileIsReportedAsNotFound() throws {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("absent.wav").path
            let loadError = Self.expectError(naming: path) { _ = try AudioFileReader.load(path: path) }
            #expect(loadError == .fileNotFound(path: path))
            let infoError = Self.expectError(naming: path) { _ = try AudioFileReader.info(path: path) }
            #expect(infoError == .fileNotFound(path: path))
        }
    }

    @Test func directoryIsReportedAsNotARegularFile() throws {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("folder.wav").path
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
            let error = Self.expectError(naming: path) { _ = try AudioFileReader.load(path: path) }
            #expect(error == .notARegularFile(path: path, kind: "a directory"))
        }
    }

    @Test(.enabled(if: geteuid() != 0, "root bypasses file permissions, so the case cannot be produced"))
    func unreadableFileIsReportedAsPermissionDenied() throws {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("locked.wav").path
            try Self.writeTone(to: path)
            chmod(path, 0)
            let error = Self.expectError(naming: path) { _ = try AudioFileReader.load(path: path) }
            #expect(error == .permissionDenied(path: path))
        }
    }

    @Test func emptyFileIsReportedAsEmpty() throws {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("empty.wav").path
            try Data().write(to: URL(fileURLWithPath: path))
            let error = Self.expectError(naming: path) { _ = try AudioFileReader.load(path: path) }
            #expect(error == .emptyFile(path: path))
        }
    }

    @Test func randomBytesAreReportedAsUnsupportedFormat() throws {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("noise.wav").path
            try Data(seededBytes(count: 5_000, seed: 7)).write(to: URL(fileURLWithPath: path))
            let error = Self.expectError(naming: path) { _ = try AudioFileReader.load(path: path) }
            guard case .unsupportedFormat(_, let reason) = error else {
                Issue.record("expected unsupportedFormat, got \(String(describing: error))")
                return
            }
            // libsndfile's own sf_strerror text is part of the message.
            #expect(reason.contains("Format not recognised"))
        }
    }

    @Test func riffHeaderOverGarbageIsRejected() throws {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("fake.wav").path
            var bytes = Array("RIFF".utf8) + [0x24, 0x10, 0, 0] + Array("WAVE".utf8)
            bytes += seededBytes(count: 4_096, seed: 11)
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            let error = Self.expectError(naming: path) { _ = try AudioFileReader.load(path: path) }
            switch error {
            case .unsupportedFormat, .corruptData, .truncated: break
            default: Issue.record("expected a format error, got \(String(describing: error))")
            }
        }
    }

    @Test func wavCutInsideItsDataChunkIsReportedAsTruncated() throws {
        try withTemporaryDirectory { directory in
            let full = directory.appendingPathComponent("full.wav").path
            let cut = directory.appendingPathComponent("cut.wav").path
            try Self.writeTone(to: full)
            let bytes = try Data(contentsOf: URL(fileURLWithPath: full))
            try bytes.prefix(bytes.count / 2).write(to: URL(fileURLWithPath: cut))

            let loadError = Self.expectError(naming: cut) { _ = try AudioFileReader.load(path: cut) }
            guard case .truncated(_, let expected, let available) = loadError else {
                Issue.record("expected truncated, got \(String(describing: loadError))")
                return
            }
            #expect(expected == 48_000)
            #expect(available > 23_000 && available < 24_000)
            // info() applies the same policy, so a player never schedules a half file.
            let infoError = Self.expectError(naming: cut) { _ = try AudioFileReader.info(path: cut) }
            #expect(infoError == loadError)
        }
    }

    @Test(arguments: ["wav", "aiff", "caf"])
    func headerWithoutAudioIsReportedAsTruncated(_ fileExtension: String) throws {
        try withTemporaryDirectory { directory in
            let full = directory.appendingPathComponent("full.\(fileExtension)").path
            let cut = directory.appendingPathComponent("headeronly.\(fileExtension)").path
            try Self.writeTone(to: full)
            let bytes = try Data(contentsOf: URL(fileURLWithPath: full))
            // Keep the header and the first 1000 bytes of samples (250 frames of 16-bit stereo).
            let audioBytes = 48_000 * 4
            try bytes.prefix(bytes.count - audioBytes + 1_000).write(to: URL(fileURLWithPath: cut))
            let error = Self.expectError(naming: cut) { _ = try AudioFileReader.load(path: cut) }
            switch error {
            case .truncated(_, let expected, let available):
                #expect(expected == 48_000)
                #expect(available == 250)
            case .corruptData:
                // libsndfile itself refuses some cut CAF headers as malformed; also acceptable.
                #expect(fileExtension == "caf")
            default:
                Issue.record("expected truncated, got \(String(describing: error))")
            }
        }
    }

    @Test func flacWithCorruptedMiddleIsReportedAsCorrupt() throws {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("damaged.flac").path
            let noise = seededBytes(count: 48_000, seed: 3).map { Float(Int($0) - 128) / 256 }
            try AudioFileWriter.write(AudioData(channels: [noise], sampleRate: 48_000), to: path, encoding: .int16)
            var bytes = try Data(contentsOf: URL(fileURLWithPath: path))
            let middle = bytes.count / 2
            bytes.replaceSubrange(middle..<middle + 256, with: seededBytes(count: 256, seed: 5))
            try bytes.write(to: URL(fileURLWithPath: path))

            // The header is intact, so info() still works.
            #expect(try AudioFileReader.info(path: path).frameCount == 48_000)
            let error = Self.expectError(naming: path) { _ = try AudioFileReader.load(path: path) }
            switch error {
            case .corruptData(_, let reason):
                #expect(reason.contains("frame"))
            case .truncated:
                break
            default:
                Issue.record("expected corruptData, got \(String(describing: error))")
            }
        }
    }

    @Test func mp3CutInHalfIsReportedAsTruncated() throws {
        // The writer's MP3s carry a LAME/Xing tag that states the length, so a cut is detectable.
        try withTemporaryDirectory { directory in
            let full = directory.appendingPathComponent("full.mp3").path
            let cut = directory.appendingPathComponent("cut.mp3").path
            try Self.writeTone(to: full)
            let bytes = try Data(contentsOf: URL(fileURLWithPath: full))
            try bytes.prefix(bytes.count / 2).write(to: URL(fileURLWithPath: cut))
            let error = Self.expectError(naming: cut) { _ = try AudioFileReader.load(path: cut) }
            guard case .truncated(_, let expected, let available) = error else {
                Issue.record("expected truncated, got \(String(describing: error))")
                return
            }
            #expect(expected == 48_000)
            #expect(available < 40_000)
        }
    }

    @Test func oggVorbisCutInsideItsHeadersIsReportedAsCorrupt() throws {
        try withTemporaryDirectory { directory in
            let full = directory.appendingPathComponent("full.ogg").path
            let cut = directory.appendingPathComponent("cut.ogg").path
            try Self.writeTone(to: full)
            let bytes = try Data(contentsOf: URL(fileURLWithPath: full))
            // The identification, comment and setup headers (codebooks) fill the first kilobytes.
            try bytes.prefix(2_000).write(to: URL(fileURLWithPath: cut))
            let error = Self.expectError(naming: cut) { _ = try AudioFileReader.load(path: cut) }
            guard case .corruptData = error else {
                Issue.record("expected corruptData, got \(String(describing: error))")
                return
            }
        }
    }

    @Test func opusCutBetweenPagesLoadsAsAShorterFile() throws {
        // Documented limitation: Ogg declares no total length in its header, so a file cut after
        // complete pages is indistinguishable from a shorter recording. What it returns is clean.
        try withTemporaryDirectory { directory in
            let full = directory.appendingPathComponent("full.opus").path
            let cut = directory.appendingPathComponent("cut.opus").path
            // 3 s: libsndfile closes a page every second of audio.
            let tone = SignalProbe.sine(frequency: 1_000, amplitude: 0.5, sampleRate: 48_000, frameCount: 144_000)
            try AudioFileWriter.write(AudioData(channels: [tone, tone], sampleRate: 48_000), to: full)
            let bytes = try Data(contentsOf: URL(fileURLWithPath: full))
            // Cut at the page boundary nearest the middle: the file ends after a whole page.
            let pages = (0..<(bytes.count - 4)).filter { bytes[$0..<$0 + 4].elementsEqual("OggS".utf8) }
            let boundary = try #require(pages.min { abs($0 - bytes.count / 2) < abs($1 - bytes.count / 2) })
            try bytes.prefix(boundary).write(to: URL(fileURLWithPath: cut))
            let read = try AudioFileReader.load(path: cut)
            #expect(read.frameCount > 24_000 && read.frameCount < 120_000, "\(read.frameCount) frames")
            let range = 4_800..<(read.frameCount - 4_800)
            let level = SignalProbe.amplitude(of: read.channels[0], at: 1_000, sampleRate: 48_000, range: range)
            #expect(abs(SignalProbe.decibels(level, relativeTo: 0.5)) <= 1)
        }
    }

    @Test func regionOutsideTheFileIsRejected() throws {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("second.wav").path
            try Self.writeTone(to: path)
            let regions: [(Int, Int?)] = [(48_001, nil), (47_000, 1_001), (-1, nil), (0, -5), (10, Int.max)]
            for (start, count) in regions {
                let error = Self.expectError(naming: path) {
                    _ = try AudioFileReader.load(path: path, startFrame: start, frameCount: count)
                }
                #expect(
                    error == .regionOutOfRange(path: path, startFrame: start, frameCount: count, fileFrameCount: 48_000)
                )
            }
        }
    }
}

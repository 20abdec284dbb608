// Tests (control side). A corpus of bad M4A files: truncated, random bytes, empty, and headers
// that claim gigantic lengths. Each gives an AudioFileError that names the file; none crashes or
// allocates what the header claims.

import AudioFiles
import DSPTestSupport
import Foundation
import Testing

@Suite("Bad M4A files")
struct CompressedBadFileTests {
    /// A good 1-second stereo AAC M4A, as bytes.
    static func goodFile(in directory: URL, format: AudioFileFormat = .aacM4A) throws -> [UInt8] {
        let path = directory.appendingPathComponent("good.m4a").path
        let tone = SignalProbe.sine(frequency: 1_000, amplitude: 0.5, sampleRate: 48_000, frameCount: 48_000)
        try AudioFileWriter.write(AudioData(channels: [tone, tone], sampleRate: 48_000), to: path, format: format)
        return [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
    }

    /// Writes `bytes` to `name`, then checks that both `info` and `load` throw an error naming it.
    @discardableResult
    static func expectBoth(_ bytes: [UInt8], named name: String, in directory: URL) throws -> [AudioFileError] {
        let path = directory.appendingPathComponent(name).path
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        var errors: [AudioFileError] = []
        for operation in ["info", "load"] {
            do throws(AudioFileError) {
                if operation == "info" {
                    _ = try AudioFileReader.info(path: path)
                } else {
                    _ = try AudioFileReader.load(path: path)
                }
                Issue.record("\(operation) accepted \(name)")
            } catch {
                #expect(error.path == path)
                #expect(error.description.contains(name), "\(error.description)")
                errors.append(error)
            }
        }
        return errors
    }

    @Test func m4aCutInHalfNamesTheFileAndTheMissingIndex() throws {
        try withTemporaryDirectory { directory in
            let bytes = try Self.goodFile(in: directory)
            // FFmpeg writes the index (moov) last: a cut file has none.
            let errors = try Self.expectBoth(Array(bytes.prefix(bytes.count / 2)), named: "cut.m4a", in: directory)
            for error in errors {
                guard case .corruptData(_, let reason) = error else {
                    Issue.record("expected corruptData, got \(error)")
                    continue
                }
                #expect(reason.contains("moov atom not found") && reason.contains("truncated"))
            }
        }
    }

    @Test(.requiresTool("ffmpeg", FFmpegTool.isAvailable, "the ffmpeg command is not installed; skipping"))
    func faststartM4ACutInItsAudioIsTruncated() throws {
        try withTemporaryDirectory { directory in
            let wav = directory.appendingPathComponent("in.wav").path
            let tone = SignalProbe.sine(frequency: 1_000, amplitude: 0.5, sampleRate: 48_000, frameCount: 96_000)
            try AudioFileWriter.write(AudioData(channels: [tone], sampleRate: 48_000), to: wav)
            let full = directory.appendingPathComponent("full.m4a").path
            try FFmpegTool.run(["-i", wav, "-c:a", "aac", "-movflags", "+faststart", full])
            let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: full)))
            // Index first, so the cut loses audio packets the index still lists.
            let cut = Array(bytes.prefix(bytes.count * 2 / 3))
            for error in try Self.expectBoth(cut, named: "cut.m4a", in: directory) {
                guard case .truncated(_, let expected, let available) = error else {
                    Issue.record("expected truncated, got \(error)")
                    continue
                }
                #expect(expected == 96_000)
                #expect(available > 30_000 && available < 96_000)
            }
        }
    }

    @Test func randomBytesNamedM4AAreUnsupported() throws {
        try withTemporaryDirectory { directory in
            for seed in 1...5 {
                let name = "noise\(seed).m4a"
                let noise = seededBytes(count: 8_192, seed: UInt64(seed))
                for error in try Self.expectBoth(noise, named: name, in: directory) {
                    guard case .unsupportedFormat(_, let reason) = error else {
                        Issue.record("expected unsupportedFormat, got \(error)")
                        continue
                    }
                    // Both libraries were asked.
                    #expect(reason.contains("libsndfile") && reason.contains("FFmpeg"), "\(reason)")
                }
            }
        }
    }

    @Test func emptyM4AIsEmpty() throws {
        try withTemporaryDirectory { directory in
            let errors = try Self.expectBoth([], named: "empty.m4a", in: directory)
            #expect(errors.allSatisfy { $0 == .emptyFile(path: $0.path) })
        }
    }

    @Test func ftypAloneIsCorrupt() throws {
        try withTemporaryDirectory { directory in
            let bytes = try Self.goodFile(in: directory)
            let ftyp = try #require(MP4Boxes.find(["ftyp"], in: bytes))
            try Self.expectBoth(Array(bytes.prefix(ftyp.size + 16)), named: "header-only.m4a", in: directory)
        }
    }

    /// Headers that claim gigantic lengths. An edit list of 2^31 − 1 frames and a sample-size
    /// table of 2^28 packets are refused with an error naming the file; a sample-time entry of
    /// 2^31 − 1 packets and a media duration of 2^32 − 1 frames are not believed (FFmpeg checks
    /// them against the sample-size table), so the file loads with its real 48,000 frames.
    /// Nothing near the claimed sizes is ever allocated.
    @Test(arguments: ["elst", "stsz", "stts", "mdhd"])
    func giganticHeaderClaimsAreRefusedOrIgnored(_ field: String) throws {
        try withTemporaryDirectory { directory in
            var bytes = try Self.goodFile(in: directory)
            let stbl = ["moov", "trak", "mdia", "minf", "stbl"]
            switch field {
            case "elst":
                // Version 0: flags, entry count, then segment duration (movie timescale), media time.
                let box = try #require(MP4Boxes.find(["moov", "trak", "edts", "elst"], in: bytes))
                MP4Boxes.writeUInt32(0x7FFF_FFFF, into: &bytes, at: box.payload + 8)
            case "stsz":
                // Flags, sample size 0 (a table follows), then the sample count.
                let box = try #require(MP4Boxes.find(stbl + ["stsz"], in: bytes))
                MP4Boxes.writeUInt32(1 << 28, into: &bytes, at: box.payload + 8)
            case "stts":
                // Flags, entry count, then the first entry's sample count.
                let box = try #require(MP4Boxes.find(stbl + ["stts"], in: bytes))
                MP4Boxes.writeUInt32(0x7FFF_FFFF, into: &bytes, at: box.payload + 8)
            default:
                // Version 0: flags, creation, modification, timescale, duration.
                let box = try #require(MP4Boxes.find(["moov", "trak", "mdia", "mdhd"], in: bytes))
                MP4Boxes.writeUInt32(0xFFFF_FFFF, into: &bytes, at: box.payload + 16)
            }
            let before = Self.residentBytes()
            let name = "huge-\(field).m4a"
            if field == "elst" || field == "stsz" {
                try Self.expectBoth(bytes, named: name, in: directory)
            } else {
                let path = directory.appendingPathComponent(name).path
                try Data(bytes).write(to: URL(fileURLWithPath: path))
                #expect(try AudioFileReader.info(path: path).frameCount == 48_000)
                #expect(try AudioFileReader.load(path: path).frameCount == 48_000)
            }
            #expect(Self.residentBytes() - before < 256 << 20)
        }
    }

    /// A (sparse) 9 GiB float CAF: loading it would need more than `maximumSampleCount` samples,
    /// so `load` refuses before allocating, and `info` still describes it.
    @Test func loadRefusesMoreThanTheSampleLimitBeforeAllocating() throws {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("huge.caf").path
            try AudioFileWriter.write(AudioData(channels: [[0], [0]], sampleRate: 48_000), to: path)
            var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
            // CAF: 8-byte file header, then chunks of type (4), size (8, big-endian), payload.
            var offset = 8
            var dataOffset: Int?
            while offset + 12 <= bytes.count {
                let type = String(decoding: bytes[offset..<(offset + 4)], as: UTF8.self)
                let size = Int(MP4Boxes.readUInt64(bytes, at: offset + 4))
                if type == "data" {
                    dataOffset = offset
                    break
                }
                offset += 12 + size
            }
            let data = try #require(dataOffset)
            let sampleBytes = 9 << 30
            let size = UInt64(4 + sampleBytes)  // edit count + samples
            MP4Boxes.writeUInt32(UInt32(size >> 32), into: &bytes, at: data + 4)
            MP4Boxes.writeUInt32(UInt32(size & 0xFFFF_FFFF), into: &bytes, at: data + 8)
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            // Extend without writing: a sparse file on ext4, tmpfs, xfs, btrfs.
            try #require(truncate(path, off_t(data + 12 + 4 + sampleBytes)) == 0)
            var status = stat()
            try #require(stat(path, &status) == 0)
            try #require(Int(status.st_blocks) * 512 < 1 << 30, "the file system does not support sparse files")

            let info = try AudioFileReader.info(path: path)
            #expect(info.frameCount == sampleBytes / 8)
            let before = Self.residentBytes()
            do throws(AudioFileError) {
                _ = try AudioFileReader.load(path: path)
                Issue.record("a 9 GiB file was loaded")
            } catch {
                #expect(error == .tooLarge(path: path, frameCount: sampleBytes / 8, channelCount: 2))
                #expect(error.description.contains("huge.caf"))
            }
            #expect(Self.residentBytes() - before < 64 << 20)
        }
    }

    /// Resident set size of this process, in bytes (Linux `/proc/self/statm`).
    static func residentBytes() -> Int {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
        let fields = text.split(separator: " ")
        return fields.count > 1 ? (Int(fields[1]) ?? 0) * Int(sysconf(Int32(_SC_PAGESIZE))) : 0
    }
}

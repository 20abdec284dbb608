// Tests (control side). `soundstage info` on real files written by Soundstage's own writer, then
// cut with truncate(2), damaged in the middle, or given an RF64 header that claims 2^31 frames: the
// real binary must say "truncated" or "damaged" and exit 1, and never raise a false alarm on an
// intact file of any format.

import AudioFiles
import Foundation
import Testing

@Suite struct InfoCommandTests {
    static let sampleRate = 48_000.0

    /// Two seconds of a stereo tone at 48 kHz (or of digital silence), written as `name` (the
    /// format from its extension).
    static func write(_ name: String, in dir: URL, frames: Int = 96_000, isSilent: Bool = false) throws -> String {
        let path = dir.appendingPathComponent(name).path
        let gain = isSilent ? 0.0 : 1.0
        let left = (0..<frames).map { Float(gain * 0.5 * sin(2 * Double.pi * 440 * Double($0) / sampleRate)) }
        let right = (0..<frames).map { Float(gain * 0.25 * sin(2 * Double.pi * 660 * Double($0) / sampleRate)) }
        try AudioFileWriter.write(AudioData(channels: [left, right], sampleRate: sampleRate), to: path)
        return path
    }

    /// Cuts the file at `path` to `fraction` of its size with truncate(2); returns the new size.
    @discardableResult
    static func cut(_ path: String, to fraction: Double) throws -> Int {
        let size = try #require(try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int)
        let kept = Int(Double(size) * fraction)
        #expect(truncate(path, off_t(kept)) == 0)
        return kept
    }

    /// Flips the bits of 400 bytes in the middle of the file at `path` (XOR 0x5A).
    static func damageTheMiddle(of path: String) throws {
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        let middle = bytes.count / 2
        for index in middle..<(middle + 400) { bytes[index] ^= 0x5A }
        try Data(bytes).write(to: URL(fileURLWithPath: path))
    }

    /// Runs `soundstage info ARGS`.
    static func info(_ arguments: [String]) throws -> Fixtures.Result {
        try Fixtures.run(Fixtures.executable, ["info"] + arguments, timeout: 120)
    }

    /// Runs `soundstage info --json ARGS` and parses its array.
    static func json(_ arguments: [String]) throws -> (status: Int32, objects: [[String: Any]]) {
        let result = try info(["--json"] + arguments)
        let parsed = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8))
        return (result.status, try #require(parsed as? [[String: Any]], "\(result.stdout)"))
    }

    /// A 16-bit stereo RF64 file of `frames` frames whose `ds64` chunk declares `declaredFrames`
    /// (data size and sample count alike), built byte by byte (EBU Tech 3306).
    static func rf64(frames: Int, declaredFrames: Int, at path: String) throws {
        var bytes: [UInt8] = []
        func ascii(_ text: String) { bytes += Array(text.utf8) }
        func le(_ value: UInt64, _ count: Int) { bytes += (0..<count).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) } }
        let dataBytes = UInt64(frames * 4)
        ascii("RF64"); le(0xFFFF_FFFF, 4); ascii("WAVE")
        ascii("ds64"); le(28, 4)
        le(UInt64(4 + 36 + 8 + 16 + 8) + dataBytes, 8); le(UInt64(declaredFrames * 4), 8); le(UInt64(declaredFrames), 8)
        le(0, 4)
        ascii("fmt "); le(16, 4); le(1, 2); le(2, 2); le(48_000, 4); le(48_000 * 4, 4); le(4, 2); le(16, 2)
        ascii("data"); le(0xFFFF_FFFF, 4)
        for frame in 0..<frames {
            let sample = UInt64(UInt16(bitPattern: Int16(8_000 * sin(Double(frame) * 0.05))))
            le(sample, 2); le(sample, 2)
        }
        try Data(bytes).write(to: URL(fileURLWithPath: path))
    }

    @Test func intactFilesOfEveryFormatPassInfoAndVerifyWithExactFrameCounts() throws {
        let dir = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let names = ["t.wav", "t.aiff", "t.caf", "t.flac", "t.ogg", "t.opus", "t.mp3", "t.m4a", "alac.m4a"]
        var paths: [String] = []
        for name in names {
            if name == "alac.m4a" {
                let path = dir.appendingPathComponent(name).path
                let audio = try AudioFileReader.load(path: paths[0])
                try AudioFileWriter.write(audio, to: path, format: .alacM4A)
                paths.append(path)
            } else {
                paths.append(try Self.write(name, in: dir))
            }
        }
        let rf64 = dir.appendingPathComponent("t-rf64.wav").path
        try Self.rf64(frames: 96_000, declaredFrames: 96_000, at: rf64)
        paths.append(rf64)

        let (status, objects) = try Self.json(["--verify"] + paths)
        #expect(status == 0)
        #expect(objects.map { $0["path"] as? String } == paths)
        let formats = ["WAV", "AIFF", "CAF", "FLAC", "Ogg Vorbis", "Opus", "MP3", "AAC (M4A)", "ALAC (M4A)", "RF64 (RIFF 64)"]
        for (object, format) in zip(objects, formats) {
            #expect(object["format"] as? String == format)
            #expect(object["damaged"] as? Bool == false, "\(object)")
            #expect(object["reason"] == nil)
            #expect(object["frames"] as? Int == 96_000, "\(format)")
            #expect(object["verifiedFrames"] as? Int == 96_000, "\(format)")
            #expect(object["sampleRate"] as? Double == 48_000)
            #expect(object["channels"] as? Int == 2)
            #expect(object["duration"] as? Double == 2.0)
        }
        // The AAC file's gapless layout: FFmpeg's 1,024 priming frames, the last packet's padding.
        #expect(objects[7]["priming"] as? Int == 1_024)
        let remainder = try #require(objects[7]["remainder"] as? Int)
        #expect((1_024 + 96_000 + remainder) % 1_024 == 0 && remainder < 1_024)

        let text = try Self.info(["--verify"] + paths)
        #expect(text.status == 0, "\(text.stderr)")
        #expect(text.stderr.isEmpty, "\(text.stderr)")
        #expect(text.stdout.components(separatedBy: "Status:           ok\n").count == paths.count + 1)
        #expect(text.stdout.components(separatedBy: "Decoded frames:   96000\n").count == paths.count + 1)
    }

    /// Silence compresses to frames of a few bytes, the last one shorter than a frame header's
    /// longest form: no false alarm either.
    @Test func silentCompressedFilesAreIntact() throws {
        let dir = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let paths = try ["z.flac", "z.ogg", "z.opus", "z.mp3", "z.m4a"].map {
            try Self.write($0, in: dir, frames: 72_000, isSilent: true)
        }
        let (status, objects) = try Self.json(["--verify"] + paths)
        #expect(status == 0)
        #expect(objects.map { $0["damaged"] as? Bool } == Array(repeating: false, count: paths.count))
        #expect(objects.map { $0["frames"] as? Int } == Array(repeating: 72_000, count: paths.count))
        #expect(objects.map { $0["verifiedFrames"] as? Int } == Array(repeating: 72_000, count: paths.count))
    }

    @Test func flacMP3AndOpusCutInHalfAreTruncated() throws {
        let dir = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let flac = try Self.write("cut.flac", in: dir)
        let mp3 = try Self.write("cut.mp3", in: dir)
        let opus = try Self.write("cut.opus", in: dir)
        for path in [flac, mp3, opus] { try Self.cut(path, to: 0.5) }

        let expectations = [
            (flac, "'\(flac)' is truncated: STREAMINFO declares 96000 frames but the last FLAC frame, from frame "),
            (mp3, "'\(mp3)' is truncated: the MP3 length tag declares "),
            (opus, "'\(opus)' is truncated: the last Ogg page (at byte "),
        ]
        for (path, message) in expectations {
            let result = try Self.info([path])
            #expect(result.status == 1, "\(path)")
            #expect(result.stderr.contains(message), "\(result.stderr)")
            #expect(result.stdout.contains("Status:           truncated: "), "\(result.stdout)")
        }

        let (status, objects) = try Self.json([flac, mp3])
        #expect(status == 1)
        #expect(objects.map { $0["damaged"] as? Bool } == [true, true])
        #expect(objects.map { $0["expectedFrames"] as? Int } == [96_000, 96_000])
        let flacAvailable = try #require(objects[0]["availableFrames"] as? Int)
        #expect(flacAvailable > 40_000 && flacAvailable < 56_000)
        let mp3Available = try #require(objects[1]["availableFrames"] as? Int)
        #expect(mp3Available > 40_000 && mp3Available < 56_000)
    }

    @Test func anRF64WhoseHeaderClaimsTwoToThe31FramesIsTruncated() throws {
        let dir = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("huge.wav").path
        try Self.rf64(frames: 48_000, declaredFrames: 1 << 31, at: path)

        let result = try Self.info([path])
        #expect(result.status == 1)
        #expect(result.stderr == "'\(path)' is truncated: the header declares 2147483648 frames but only 48000 are present.\n")
        let (_, objects) = try Self.json([path])
        #expect(objects[0]["damaged"] as? Bool == true)
        #expect(objects[0]["expectedFrames"] as? Int == 1 << 31)
        #expect(objects[0]["availableFrames"] as? Int == 48_000)
        #expect(objects[0]["reason"] as? String == "truncated: the header declares 2147483648 frames but only 48000 are present")
    }

    @Test func verifyCountsTheFramesOfACutWAVExactly() throws {
        let dir = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let wav = try Self.write("cut.wav", in: dir)
        // 32-bit float stereo: 8 bytes a frame, the data chunk last.
        let size = try #require(try FileManager.default.attributesOfItem(atPath: wav)[.size] as? Int)
        let headerBytes = size - 96_000 * 8
        let kept = try Self.cut(wav, to: 0.25)
        let present = (kept - headerBytes) / 8

        let result = try Self.info(["--verify", wav])
        #expect(result.status == 1)
        #expect(result.stdout.contains("Decoded frames:   \(present)\n"), "\(result.stdout)")
        #expect(result.stderr == "'\(wav)' is truncated: the header declares 96000 frames but only \(present) are present.\n")
        let (_, objects) = try Self.json(["--verify", wav])
        #expect(objects[0]["verifiedFrames"] as? Int == present)
        #expect(objects[0]["frames"] as? Int == present)
        #expect(objects[0]["expectedFrames"] as? Int == 96_000)
    }

    @Test func verifyFindsADecodeErrorInTheMiddleThatTheHeaderChecksCannotSee() throws {
        let dir = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let flac = try Self.write("hit.flac", in: dir)
        try Self.damageTheMiddle(of: flac)

        let quick = try Self.info([flac])
        #expect(quick.status == 0, "\(quick.stderr)")
        let result = try Self.info(["--verify", flac])
        #expect(result.status == 1)
        let (_, objects) = try Self.json(["--verify", flac])
        let decoded = try #require(objects[0]["verifiedFrames"] as? Int)
        #expect(decoded > 0 && decoded < 96_000)
        #expect(objects[0]["verifyErrorFrame"] as? Int == decoded)
        #expect(objects[0]["damaged"] as? Bool == true)
        #expect(result.stdout.contains("Decoded frames:   \(decoded)\n"))
        #expect(result.stdout.contains("Decode error:     at frame \(decoded): "), "\(result.stdout)")
        #expect(result.stderr.contains("'\(flac)' is damaged: decoding fails at frame \(decoded) of 96000: "))
    }

    @Test func jsonHasOneObjectPerFileEvenWhenOneIsMissing() throws {
        let dir = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let good = try Self.write("good.wav", in: dir, frames: 4_800)
        let missing = dir.appendingPathComponent("missing.wav").path
        let (status, objects) = try Self.json([good, missing])
        #expect(status == 1)
        #expect(objects.count == 2)
        #expect(Set(objects[0].keys) == [
            "path", "format", "codec", "sampleRate", "channels", "frames", "duration", "priming", "remainder",
            "bitDepth", "damaged",
        ])
        #expect(objects[0]["codec"] as? String == "32 bit float")
        #expect(objects[0]["bitDepth"] as? Int == 32)
        #expect(objects[0]["duration"] as? Double == 0.1)
        #expect(objects[1]["damaged"] as? Bool == false)
        #expect(objects[1]["error"] as? String == "Cannot open '\(missing)': no such file.")
    }

    @Test func oggWithALostPageOrWithoutItsLastPagesIsDamagedOrTruncated() throws {
        let dir = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        // Bytes flipped in the middle: libsndfile decodes up to the damage, the last page's
        // granule position still declares the whole length.
        let hit = try Self.write("hit.ogg", in: dir)
        try Self.damageTheMiddle(of: hit)
        let hitResult = try Self.info([hit])
        #expect(hitResult.status == 1)
        #expect(
            hitResult.stderr.contains(
                "'\(hit)' is damaged: the last Ogg page's granule position declares 96000 frames but only "),
            "\(hitResult.stderr)")

        // Cut exactly at a page boundary: every page is whole, but the stream never ends.
        let cut = try Self.write("cut.ogg", in: dir)
        let whole = [UInt8](try Data(contentsOf: URL(fileURLWithPath: cut)))
        let boundary = try #require(
            (whole.count / 2..<whole.count - 4).first { Array(whole[$0..<$0 + 4]) == Array("OggS".utf8) })
        #expect(truncate(cut, off_t(boundary)) == 0)
        let (status, objects) = try Self.json(["--verify", cut])
        #expect(status == 1)
        let verified = try #require(objects[0]["verifiedFrames"] as? Int)
        #expect(verified > 0 && verified < 96_000)
        #expect(objects[0]["frames"] as? Int == verified)
        #expect(objects[0]["availableFrames"] as? Int == verified)
        #expect(
            objects[0]["reason"] as? String
                == "truncated: the stream has no end-of-stream page, so the file was cut or never finished; "
                + "\(verified) frames can be decoded")
    }

    @Test func m4aFilesCutInHalfAreDamaged() throws {
        let dir = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let aac = try Self.write("cut.m4a", in: dir)
        try Self.cut(aac, to: 0.5)
        let result = try Self.info([aac])
        #expect(result.status == 1)
        #expect(result.stderr.hasPrefix("'\(aac)' is damaged: FFmpeg (mov,mp4,m4a,3gp,3g2,mj2): moov atom not found"))
        #expect(result.stdout.isEmpty)
        let (_, objects) = try Self.json([aac])
        #expect(objects[0]["damaged"] as? Bool == true)
        #expect(objects[0]["format"] == nil)
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/sox"), "sox is not installed"))
    func aWave64CutInHalfIsTruncated() throws {
        let dir = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let wav = try Self.write("in.wav", in: dir)
        let w64 = dir.appendingPathComponent("cut.w64").path
        let sox = try Fixtures.run("/usr/bin/sox", [wav, "-b", "16", "-e", "signed-integer", w64])
        #expect(sox.status == 0, "\(sox.stderr)")
        let whole = try #require(try FileManager.default.attributesOfItem(atPath: w64)[.size] as? Int)
        let kept = try Self.cut(w64, to: 0.5)
        // 16-bit stereo: 4 bytes a frame, the data chunk last.
        let present = (kept - (whole - 96_000 * 4)) / 4
        let result = try Self.info(["--verify", w64])
        #expect(result.status == 1)
        #expect(result.stderr == "'\(w64)' is truncated: the header declares 96000 frames but only \(present) are present.\n")
        #expect(result.stdout.contains("Decoded frames:   \(present)\n"))
    }
}

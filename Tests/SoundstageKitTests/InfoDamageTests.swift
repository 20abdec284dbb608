// Tests (control side). `soundstage info` on damaged files: cut with truncate(2), damaged in the
// middle, or an RF64 header claiming 2^31 frames. The real binary must say "truncated" or "damaged",
// with what the header declares and what is there, and exit 1.

import AudioFiles
import DSPTestSupport
import Foundation
import Testing

@Suite struct InfoDamageTests {
    @Test func flacMP3AndOpusCutInHalfAreTruncated() throws {
        let dir = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let flac = try InfoFiles.write("cut.flac", in: dir)
        let mp3 = try InfoFiles.write("cut.mp3", in: dir)
        let opus = try InfoFiles.write("cut.opus", in: dir)
        for path in [flac, mp3, opus] { try InfoFiles.cut(path, to: 0.5) }

        let expectations = [
            (flac, "'\(flac)' is truncated: STREAMINFO declares 96000 frames but the last FLAC frame, from frame "),
            (mp3, "'\(mp3)' is truncated: the MP3 length tag declares "),
            (opus, "'\(opus)' is truncated: the last Ogg page (at byte ")
        ]
        for (path, message) in expectations {
            let result = try InfoFiles.info([path])
            #expect(result.status == 1, "\(path)")
            #expect(result.stderr.contains(message), "\(result.stderr)")
            #expect(result.stdout.contains("Status:           truncated: "), "\(result.stdout)")
        }

        let (status, objects) = try InfoFiles.json([flac, mp3])
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
        try InfoFiles.rf64(frames: 48_000, declaredFrames: 1 << 31, at: path)

        let result = try InfoFiles.info([path])
        #expect(result.status == 1)
        #expect(
            result.stderr
                == "'\(path)' is truncated: the header declares 2147483648 frames but only 48000 are present.\n")
        let (_, objects) = try InfoFiles.json([path])
        #expect(objects[0]["damaged"] as? Bool == true)
        #expect(objects[0]["expectedFrames"] as? Int == 1 << 31)
        #expect(objects[0]["availableFrames"] as? Int == 48_000)
        #expect(
            objects[0]["reason"] as? String
                == "truncated: the header declares 2147483648 frames but only 48000 are present")
    }

    @Test func oggWithALostPageOrWithoutItsLastPagesIsDamagedOrTruncated() throws {
        let dir = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        // Bytes flipped in the middle: libsndfile decodes up to the damage, the last page's
        // granule position still declares the whole length.
        let hit = try InfoFiles.write("hit.ogg", in: dir)
        try InfoFiles.damageTheMiddle(of: hit)
        let hitResult = try InfoFiles.info([hit])
        #expect(hitResult.status == 1)
        #expect(
            hitResult.stderr.contains(
                "'\(hit)' is damaged: the last Ogg page's granule position declares 96000 frames but only "),
            "\(hitResult.stderr)")

        // Cut exactly at a page boundary: every page is whole, but the stream never ends.
        let cut = try InfoFiles.write("cut.ogg", in: dir)
        let whole = [UInt8](try Data(contentsOf: URL(fileURLWithPath: cut)))
        let boundary = try #require(
            (whole.count / 2..<whole.count - 4).first { Array(whole[$0..<$0 + 4]) == Array("OggS".utf8) })
        #expect(truncate(cut, off_t(boundary)) == 0)
        let (status, objects) = try InfoFiles.json(["--verify", cut])
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

    @Test func aiffAndCAFCutShortAreTruncatedOrDamaged() throws {
        let dir = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let aiff = try InfoFiles.write("cut.aiff", in: dir)
        let caf = try InfoFiles.write("cut.caf", in: dir)
        // 32-bit float stereo, the sound data last.
        let aiffSize = try #require(try FileManager.default.attributesOfItem(atPath: aiff)[.size] as? Int)
        let aiffKept = try InfoFiles.cut(aiff, to: 0.5)
        try InfoFiles.cut(caf, to: 0.5)
        let present = (aiffKept - (aiffSize - 96_000 * 8)) / 8
        let (status, objects) = try InfoFiles.json([aiff, caf])
        #expect(status == 1)
        #expect(
            objects[0]["reason"] as? String
                == "truncated: the header declares 96000 frames but only \(present) are present")
        #expect(objects[0]["format"] as? String == "AIFF")
        // libsndfile refuses a CAF whose data chunk runs past the end of the file.
        #expect(objects[1]["reason"] as? String == "damaged: libsndfile: Supported file format but file is malformed")
        #expect(objects[1]["damaged"] as? Bool == true)
    }

    @Test(
        .requiresTool(
            "ffmpeg", FileManager.default.isExecutableFile(atPath: "/usr/bin/ffmpeg"),
            "ffmpeg is not installed"))
    func aFaststartM4ACutInItsAudioIsTruncated() throws {
        let dir = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let wav = try InfoFiles.write("in.wav", in: dir)
        let m4a = dir.appendingPathComponent("fast.m4a").path
        let ffmpeg = try Fixtures.run(
            "/usr/bin/ffmpeg",
            ["-nostdin", "-loglevel", "error", "-i", wav, "-c:a", "aac", "-movflags", "faststart", m4a])
        #expect(ffmpeg.status == 0, "\(ffmpeg.stderr)")
        try InfoFiles.cut(m4a, to: 0.5)
        let result = try InfoFiles.info([m4a])
        #expect(result.status == 1)
        #expect(
            result.stderr.hasPrefix("'\(m4a)' is truncated: the header declares 96000 frames but only "),
            "\(result.stderr)")
        #expect(result.stdout.contains("Format:           AAC (M4A)\n"), "\(result.stdout)")
        let (_, objects) = try InfoFiles.json(["--verify", m4a])
        #expect(objects[0]["expectedFrames"] as? Int == 96_000)
        #expect(objects[0]["format"] as? String == "AAC (M4A)")
        #expect(objects[0]["frames"] as? Int == 96_000)
        let available = try #require(objects[0]["availableFrames"] as? Int)
        #expect(available > 30_000 && available < 60_000)
        // The decode stops at or before the first packet the table places past the end of the file.
        let verified = try #require(objects[0]["verifiedFrames"] as? Int)
        #expect(verified > 0 && verified <= available, "\(objects[0])")
    }

    @Test func m4aFilesCutInHalfAreDamaged() throws {
        let dir = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let aac = try InfoFiles.write("cut.m4a", in: dir)
        try InfoFiles.cut(aac, to: 0.5)
        let result = try InfoFiles.info([aac])
        #expect(result.status == 1)
        #expect(result.stderr.hasPrefix("'\(aac)' is damaged: FFmpeg (mov,mp4,m4a,3gp,3g2,mj2): moov atom not found"))
        #expect(result.stdout.isEmpty)
        let (_, objects) = try InfoFiles.json([aac])
        #expect(objects[0]["damaged"] as? Bool == true)
        #expect(objects[0]["format"] == nil)
    }

    @Test(.requiresTool("sox", FileManager.default.isExecutableFile(atPath: "/usr/bin/sox"), "sox is not installed"))
    func aWave64CutInHalfIsTruncated() throws {
        let dir = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let wav = try InfoFiles.write("in.wav", in: dir)
        let w64 = dir.appendingPathComponent("cut.w64").path
        let sox = try Fixtures.run("/usr/bin/sox", [wav, "-b", "16", "-e", "signed-integer", w64])
        #expect(sox.status == 0, "\(sox.stderr)")
        let whole = try #require(try FileManager.default.attributesOfItem(atPath: w64)[.size] as? Int)
        let kept = try InfoFiles.cut(w64, to: 0.5)
        // 16-bit stereo: 4 bytes a frame, the data chunk last.
        let present = (kept - (whole - 96_000 * 4)) / 4
        let result = try InfoFiles.info(["--verify", w64])
        #expect(result.status == 1)
        #expect(
            result.stderr
                == "'\(w64)' is truncated: the header declares 96000 frames but only \(present) are present.\n")
        #expect(result.stdout.contains("Decoded frames:   \(present)\n"))
    }
}

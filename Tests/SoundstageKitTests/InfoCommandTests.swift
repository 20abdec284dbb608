// Tests (control side). `soundstage info`, `--verify` and `--json` on intact files of every format
// (no false alarms, exact frame counts) and the frame counts and first error of a full decode.

import AudioFiles
import Foundation
import Testing

@Suite struct InfoCommandTests {
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
                paths.append(try InfoFiles.write(name, in: dir))
            }
        }
        let rf64 = dir.appendingPathComponent("t-rf64.wav").path
        try InfoFiles.rf64(frames: 96_000, declaredFrames: 96_000, at: rf64)
        paths.append(rf64)

        let (status, objects) = try InfoFiles.json(["--verify"] + paths)
        #expect(status == 0)
        #expect(objects.map { $0["path"] as? String } == paths)
        let formats = [
            "WAV", "AIFF", "CAF", "FLAC", "Ogg Vorbis", "Opus", "MP3", "AAC (M4A)", "ALAC (M4A)", "RF64 (RIFF 64)"
        ]
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

        let text = try InfoFiles.info(["--verify"] + paths)
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
            try InfoFiles.write($0, in: dir, frames: 72_000, isSilent: true)
        }
        let (status, objects) = try InfoFiles.json(["--verify"] + paths)
        #expect(status == 0)
        #expect(objects.map { $0["damaged"] as? Bool } == Array(repeating: false, count: paths.count))
        #expect(objects.map { $0["frames"] as? Int } == Array(repeating: 72_000, count: paths.count))
        #expect(objects.map { $0["verifiedFrames"] as? Int } == Array(repeating: 72_000, count: paths.count))
    }

    @Test func verifyCountsTheFramesOfACutWAVExactly() throws {
        let dir = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let wav = try InfoFiles.write("cut.wav", in: dir)
        // 32-bit float stereo: 8 bytes a frame, the data chunk last.
        let size = try #require(try FileManager.default.attributesOfItem(atPath: wav)[.size] as? Int)
        let headerBytes = size - 96_000 * 8
        let kept = try InfoFiles.cut(wav, to: 0.25)
        let present = (kept - headerBytes) / 8

        let result = try InfoFiles.info(["--verify", wav])
        #expect(result.status == 1)
        #expect(result.stdout.contains("Decoded frames:   \(present)\n"), "\(result.stdout)")
        #expect(
            result.stderr
                == "'\(wav)' is truncated: the header declares 96000 frames but only \(present) are present.\n")
        let (_, objects) = try InfoFiles.json(["--verify", wav])
        #expect(objects[0]["verifiedFrames"] as? Int == present)
        #expect(objects[0]["frames"] as? Int == present)
        #expect(objects[0]["expectedFrames"] as? Int == 96_000)
    }

    @Test func verifyFindsADecodeErrorInTheMiddleThatTheHeaderChecksCannotSee() throws {
        let dir = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let flac = try InfoFiles.write("hit.flac", in: dir)
        try InfoFiles.damageTheMiddle(of: flac)

        let quick = try InfoFiles.info([flac])
        #expect(quick.status == 0, "\(quick.stderr)")
        let result = try InfoFiles.info(["--verify", flac])
        #expect(result.status == 1)
        let (_, objects) = try InfoFiles.json(["--verify", flac])
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
        let good = try InfoFiles.write("good.wav", in: dir, frames: 4_800)
        let missing = dir.appendingPathComponent("missing.wav").path
        let (status, objects) = try InfoFiles.json([good, missing])
        #expect(status == 1)
        #expect(objects.count == 2)
        #expect(
            Set(objects[0].keys) == [
                "path", "format", "codec", "sampleRate", "channels", "frames", "duration", "priming", "remainder",
                "bitDepth", "damaged"
            ])
        #expect(objects[0]["codec"] as? String == "32 bit float")
        #expect(objects[0]["bitDepth"] as? Int == 32)
        #expect(objects[0]["duration"] as? Double == 0.1)
        #expect(objects[1]["damaged"] as? Bool == false)
        #expect(objects[1]["error"] as? String == "Cannot open '\(missing)': no such file.")
    }
}

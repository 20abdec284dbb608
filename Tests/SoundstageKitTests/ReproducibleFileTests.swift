import AudioFiles
import Foundation
import Testing

/// The same render or conversion gives the same bytes, and float WAVs read without a warning.
@Suite struct ReproducibleFileTests {
    private static let submix = Fixtures.patches.appendingPathComponent("submix.yaml").path

    /// Every format the writer produces (ALAC is M4A as AAC is).
    private static let extensions = ["wav", "aiff", "caf", "flac", "ogg", "opus", "mp3", "m4a", "aac"]

    @Test func twoRendersOfAPatchAreTheSameBytes() throws {
        let dir = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        try Self.expectSameBytesTwice(in: dir) { out in
            ["render", Self.submix, "--out", out, "--duration", "1.5"]
        }
    }

    @Test func twoConversionsOfAFileAreTheSameBytes() throws {
        let dir = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let input = dir.appendingPathComponent("in.wav").path
        try AudioFileWriter.write(
            AudioData(channels: RecorderFixture.noise(frames: 48_000), sampleRate: 48_000), to: input, encoding: .int16)
        try Self.expectSameBytesTwice(in: dir) { out in
            let isPCM = [".wav", ".aiff", ".caf"].contains { out.hasSuffix($0) }
            return ["convert", input, out] + (isPCM ? ["--bits", "32f"] : [])
        }
    }

    /// Runs the command `arguments(out)` gives for each extension, twice, in different seconds (a
    /// timestamp has whole seconds), and expects the two files of each extension to be equal.
    private static func expectSameBytesTwice(in dir: URL, _ arguments: (String) -> [String]) throws {
        for run in 1...2 {
            if run == 2 { Thread.sleep(forTimeInterval: 1.1) }
            for ext in extensions {
                let r = try Fixtures.run(
                    Fixtures.executable, arguments(dir.appendingPathComponent("\(run).\(ext)").path))
                #expect(r.status == 0, "\(r.stderr)")
            }
        }
        for ext in extensions {
            let first = try Data(contentsOf: dir.appendingPathComponent("1.\(ext)"))
            let second = try Data(contentsOf: dir.appendingPathComponent("2.\(ext)"))
            #expect(first == second, "\(ext): two runs differ")
        }
    }

    @Test func floatWAVsReadWithoutAWarning() throws {
        let dir = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let rendered = dir.appendingPathComponent("render.wav").path
        let converted = dir.appendingPathComponent("convert.wav").path
        let recorded = dir.appendingPathComponent("recorder.wav").path
        let patch = try Fixtures.write(
            (try String(contentsOfFile: Self.submix, encoding: .utf8))
                + "recorders:\n  - { name: r, node: main, path: recorder.wav }\n",
            to: "rec.yaml", in: dir)
        #expect(
            try Fixtures.run(Fixtures.executable, ["render", patch, "--out", rendered, "--duration", "1.5"]).status == 0
        )
        #expect(try Fixtures.run(Fixtures.executable, ["convert", rendered, converted, "--channels", "1"]).status == 0)
        for path in [rendered, converted, recorded] {
            let info = try AudioFileReader.info(path: path)
            #expect(info.frameCount == 72_000 && info.bitDepth == 32, "\(path)")
            // The fmt chunk of a float WAV has cbSize: 18 bytes.
            let header = try Data(contentsOf: URL(fileURLWithPath: path)).prefix(24)
            #expect(Array(header[16..<22]) == [18, 0, 0, 0, 3, 0], "\(path): \(Array(header))")
            let sox = try Fixtures.run("/usr/bin/sox", [path, "-n", "stat"])
            #expect(sox.status == 0 && !sox.stderr.contains("WARN"), "\(path): \(sox.stderr)")
            let samples = sox.stderr.split(separator: "\n").first { $0.hasPrefix("Samples read:") }
            #expect(samples?.split(separator: " ").last == "\(72_000 * info.channelCount)", "\(sox.stderr)")
            let soxInfo = try Fixtures.run("/usr/bin/sox", ["--i", path])
            #expect(soxInfo.status == 0 && soxInfo.stderr.isEmpty, "\(path): \(soxInfo.stderr)")
            let ffprobe = try Fixtures.run("/usr/bin/ffprobe", ["-v", "warning", path])
            #expect(ffprobe.status == 0 && ffprobe.stderr.isEmpty, "\(path): \(ffprobe.stderr)")
        }
    }
}

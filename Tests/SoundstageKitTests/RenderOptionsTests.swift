import AudioFiles
import Foundation
import Testing

/// `render` takes `convert`'s output options and writes every format `convert` writes; its messages
/// suggest only options it has.
@Suite struct RenderOptionsTests {
    private static let hello = Fixtures.patches.appendingPathComponent("hello.yaml").path

    private static func render(_ out: String, _ options: [String] = [], duration: String = "0.5") throws
        -> Fixtures.Result
    {
        try Fixtures.run(Fixtures.executable, ["render", hello, "--out", out, "--duration", duration] + options)
    }

    @Test func renderWritesEveryFormatConvertWrites() throws {
        let dir = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        // File names without an extension take the format from --format alone.
        let cases: [(String, String, String)] = [
            ("wav", "out-wav", "WAV"), ("aiff", "out-aiff", "AIFF"), ("caf", "out-caf", "CAF"),
            ("flac", "out-flac", "FLAC"), ("ogg", "out-ogg", "Ogg Vorbis"), ("opus", "out-opus", "Opus"),
            ("mp3", "out-mp3", "MP3"), ("aac", "out-aac", "AAC (M4A)"), ("alac", "out-alac", "ALAC (M4A)"),
            ("alac", "out.m4a", "ALAC (M4A)"), ("aac", "out.aac", "AAC (ADTS)")
        ]
        for (format, name, formatName) in cases {
            let out = dir.appendingPathComponent(name).path
            let r = try Self.render(out, ["--format", format])
            #expect(r.status == 0, "\(format): \(r.stderr)")
            let info = try AudioFileReader.info(path: out)
            #expect(info.formatName == formatName, "\(name): \(info.formatName)")
            // ADTS has no place for the encoder delay: 1024 frames more, and the last frame filled up.
            #expect(info.frameCount == (formatName == "AAC (ADTS)" ? 25_600 : 24_000), "\(name)")
        }
    }

    @Test func bitsAndChannelsShapeTheRenderedFile() throws {
        let dir = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let stereo = dir.appendingPathComponent("stereo.wav").path
        let mono = dir.appendingPathComponent("mono.wav").path
        let short = dir.appendingPathComponent("short.flac").path
        #expect(try Self.render(stereo).status == 0)
        let r = try Self.render(mono, ["--channels", "1"])
        #expect(r.status == 0 && r.stdout.contains("24000 frames, 1 channel, 48000 Hz"), "\(r.stdout) \(r.stderr)")
        #expect(try Self.render(short, ["--bits", "16"]).status == 0)

        let both = try AudioFileReader.load(path: stereo)
        let one = try AudioFileReader.load(path: mono)
        #expect(one.channelCount == 1 && one.frameCount == 24_000)
        // N → 1 is the average of the channels, as in `convert`.
        let average = (0..<both.frameCount).map { 0 + both.channels[0][$0] * 0.5 + both.channels[1][$0] * 0.5 }
        #expect(one.channels[0] == average)
        let flac = try AudioFileReader.info(path: short)
        #expect(flac.bitDepth == 16 && flac.channelCount == 2)
    }

    @Test func renderHelpListsEveryFormat() throws {
        let r = try Fixtures.run(Fixtures.executable, ["render", "--help"])
        #expect(r.status == 0)
        let help = r.stdout.replacingOccurrences(of: "\n", with: " ")
        for name in ["wav", "aiff", "caf", "flac", "ogg", "opus", "mp3", "aac", "alac", ".m4a", ".aif"] {
            #expect(help.contains(name), "\(name) missing from: \(r.stdout)")
        }
        for option in ["--format", "--bits", "--channels", "--bitrate", "--quality", "--quiet"] {
            #expect(help.contains(option), "\(option)")
        }
    }

    @Test func renderRefusalsSuggestOnlyOptionsRenderHas() throws {
        let dir = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let help = try Fixtures.run(Fixtures.executable, ["render", "--help"]).stdout
        let path = { (name: String) in dir.appendingPathComponent(name).path }
        let cases: [([String], String, String)] = [
            (["--rate", "44100"], path("x.opus"), "add --rate 48000"),
            ([], path("x.xyz"), "give --format"),
            (["--format", "flac"], path("x.wav"), "name the file .flac or drop --format"),
            (["--bits", "32f"], path("x.flac"), "use 16 or 24"),
            (["--bits", "16"], path("x.mp3"), "use --quality"),
            (["--bits", "16"], path("x.m4a"), "use --bitrate"),
            (["--channels", "3"], path("x.wav"), "no rule for mixing 2 channels into 3"),
            (["--channels", "4"], path("x.mp3"), "at most 2; add --channels"),
            (["--format", "wma"], path("x.wav"), "--format must be one of"),
            // An option given where it changes nothing is refused, not ignored.
            (["--bitrate", "128"], path("x.wav"), "--bitrate applies only to AAC"),
            (["--bitrate", "128"], path("x.ogg"), "use --quality"),
            (["--bitrate", "100", "--format", "alac"], path("x.m4a"), "no bit rate to set"),
            (["--quality", "0.5"], path("x.wav"), "--bits sets its precision"),
            (["--quality", "0.3"], path("x.flac"), "which is lossless"),
            (["--quality", "0.3", "--bitrate", "96"], path("x.m4a"), "give one of them")
        ]
        for (options, out, needle) in cases {
            let r = try Self.render(out, options, duration: "0.1")
            #expect(r.status != 0, "\(options)")
            #expect(r.stderr.contains(needle), "\(options): \(r.stderr)")
            let suggested = r.stderr.matches(of: /--[a-z]+/).map { String($0.output) }
            for option in suggested { #expect(help.contains(option), "'\(option)' in: \(r.stderr)") }
            #expect(!FileManager.default.fileExists(atPath: out), "\(options)")
        }
    }
}

// Tests (control side). The asset tools as a user runs them: `soundstage info` and `soundstage
// convert`, through the executable built beside the test bundle (exit codes, output, files).

import AudioFiles
import DSPTestSupport
import Foundation
import Testing

@Suite(
    "soundstage info and convert",
    .requiresTool("the soundstage executable", SoundstageTool.isAvailable, "build the soundstage product first"))
struct AssetToolTests {
    /// An 88,200-frame 16-bit stereo WAV of two tones at 44.1 kHz.
    static func sourceWAV(in directory: URL, seconds: Double = 2) throws -> String {
        let path = directory.appendingPathComponent("source.wav").path
        let frames = Int(44_100 * seconds)
        try AudioFileWriter.write(
            AudioData(
                channels: [
                    SignalProbe.sine(frequency: 1_000, amplitude: 0.5, sampleRate: 44_100, frameCount: frames),
                    SignalProbe.sine(frequency: 1_500, amplitude: 0.25, sampleRate: 44_100, frameCount: frames)
                ],
                sampleRate: 44_100),
            to: path, encoding: .int16)
        return path
    }

    /// Files in `directory` other than `expected`: leftovers such as partial outputs.
    static func strayFiles(in directory: URL, expected: Set<String>) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { !expected.contains($0) }
    }

    @Test func infoPrintsOneBlockPerFileAndFailsForTheBadOnes() throws {
        try withTemporaryDirectory { directory in
            let wav = try Self.sourceWAV(in: directory)
            let m4a = directory.appendingPathComponent("tones.m4a").path
            try AudioFileWriter.write(try AudioFileReader.load(path: wav), to: m4a)
            let noise = directory.appendingPathComponent("noise.m4a").path
            try Data(seededBytes(count: 4_000, seed: 5)).write(to: URL(fileURLWithPath: noise))
            let missing = directory.appendingPathComponent("missing.wav").path

            let result = try SoundstageTool.run(["info", m4a, missing, wav, noise])
            #expect(result.status == 1)
            let blocks = result.stdout.components(separatedBy: "\n\n")
            #expect(blocks.count == 2)
            let aac = blocks[0]
            for line in [
                "File:             \(m4a)", "Format:           AAC (M4A)", "Codec:            AAC LC",
                "Sample rate:      44100 Hz", "Channels:         2", "Valid frames:     88200",
                "Priming frames:   1024", "Remainder frames: 888", "Total frames:     90112",
                "Duration:         2.000000 s"
            ] {
                #expect(aac.contains(line), "missing '\(line)' in\n\(aac)")
            }
            #expect(aac.contains("Bit rate:") && !aac.contains("Bit depth:"))
            #expect(blocks[1].contains("Format:           WAV") && blocks[1].contains("Bit depth:        16 bits"))
            let errors = result.stderr.split(separator: "\n")
            #expect(errors.count == 2)
            #expect(errors.contains { $0.contains("missing.wav") && $0.contains("no such file") })
            #expect(errors.contains { $0.contains("noise.m4a") && $0.contains("unsupported") })

            #expect(try SoundstageTool.run(["info", m4a, wav]).status == 0)
        }
    }

    /// One conversion and what its output must be.
    struct Conversion: Sendable, CustomTestStringConvertible {
        var output: String
        var arguments: [String]
        var format: AudioFileFormat
        var sampleRate: Double
        var channelCount: Int
        var frameCount: Int
        var bitDepth: Int?

        var testDescription: String { ([output] + arguments).joined(separator: " ") }
    }

    static let conversions: [Conversion] = [
        .init(
            output: "aac.m4a", arguments: [], format: .aacM4A, sampleRate: 44_100, channelCount: 2, frameCount: 88_200),
        .init(
            output: "alac.m4a", arguments: ["--format", "alac"], format: .alacM4A, sampleRate: 44_100, channelCount: 2,
            frameCount: 88_200, bitDepth: 16),
        .init(
            output: "mono48k.wav", arguments: ["--rate", "48000", "--channels", "1", "--bits", "24"], format: .wav,
            sampleRate: 48_000, channelCount: 1, frameCount: 96_000, bitDepth: 24),
        .init(
            output: "x.flac", arguments: ["--channels", "2"], format: .flac, sampleRate: 44_100, channelCount: 2,
            frameCount: 88_200, bitDepth: 16),
        .init(
            output: "x.opus", arguments: ["--rate", "48000"], format: .opus, sampleRate: 48_000, channelCount: 2,
            frameCount: 96_000),
        .init(
            output: "x.caf", arguments: ["--bits", "32f", "--format", "caf"], format: .caf, sampleRate: 44_100,
            channelCount: 2, frameCount: 88_200, bitDepth: 32),
        .init(
            output: "lo.aac", arguments: ["--bitrate", "96", "--channels", "1"], format: .aacADTS, sampleRate: 44_100,
            channelCount: 1, frameCount: 90_112)
    ]

    @Test(arguments: conversions)
    func convertWritesTheRequestedFormat(_ conversion: Conversion) throws {
        try withTemporaryDirectory { directory in
            let wav = try Self.sourceWAV(in: directory)
            let output = directory.appendingPathComponent(conversion.output).path
            let result = try SoundstageTool.run(["convert", wav, output] + conversion.arguments)
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stdout.hasPrefix("wrote \(output): \(conversion.format.displayName)"))
            // stderr is a pipe here, not a terminal: no progress bar, no control characters.
            #expect(result.stderr.isEmpty, "\(result.stderr)")

            let info = try AudioFileReader.info(path: output)
            #expect(info.format == conversion.format)
            #expect(info.sampleRate == conversion.sampleRate)
            #expect(info.channelCount == conversion.channelCount)
            #expect(info.frameCount == conversion.frameCount)
            if let bits = conversion.bitDepth { #expect(info.bitDepth == bits) }
            let audio = try AudioFileReader.load(path: output)
            // Mono is the average of 1 kHz at 0.5 and 1.5 kHz at 0.25: 1 kHz at 0.25.
            let expected = conversion.channelCount == 1 ? 0.25 : 0.5
            let level = SignalProbe.amplitude(
                of: audio.channels[0], at: 1_000, sampleRate: conversion.sampleRate,
                range: 4_000..<(conversion.frameCount - 4_000))
            #expect(abs(SignalProbe.decibels(level, relativeTo: expected)) <= 1, "level \(level)")
            #expect(try Self.strayFiles(in: directory, expected: ["source.wav", conversion.output]).isEmpty)
        }
    }

    @Test func alacConversionOf16BitWAVIsBitExactAndConvertsBack() throws {
        try withTemporaryDirectory { directory in
            let wav = try Self.sourceWAV(in: directory)
            let alac = directory.appendingPathComponent("lossless.m4a").path
            let back = directory.appendingPathComponent("back.wav").path
            #expect(try SoundstageTool.run(["convert", wav, alac, "--format", "alac"]).status == 0)
            #expect(try SoundstageTool.run(["convert", alac, back]).status == 0)
            #expect(try AudioFileReader.load(path: back) == AudioFileReader.load(path: wav))
            #expect(try AudioFileReader.info(path: back).bitDepth == 16)
        }
    }

    @Test func convertRejectsBadInputAndArgumentsWithoutWritingAnything() throws {
        try withTemporaryDirectory { directory in
            let wav = try Self.sourceWAV(in: directory)
            let noise = directory.appendingPathComponent("noise.m4a").path
            try Data(seededBytes(count: 4_000, seed: 8)).write(to: URL(fileURLWithPath: noise))
            let existing = directory.appendingPathComponent("existing.wav").path
            try Data("keep me".utf8).write(to: URL(fileURLWithPath: existing))
            func out(_ name: String) -> String { directory.appendingPathComponent(name).path }
            let cases: [([String], String)] = [
                (["convert", out("missing.wav"), out("a.wav")], "missing.wav"),
                (["convert", noise, existing], "noise.m4a"),
                (["convert", wav, out("a.wav"), "--format", "xyz"], "--format"),
                (["convert", wav, out("a.flac"), "--bits", "32f"], "32f"),
                (["convert", wav, out("a.wav"), "--bits", "12"], "--bits"),
                (["convert", wav, out("a.m4a"), "--bits", "16"], "--bitrate"),
                (["convert", wav, out("a.wav"), "--rate", "-5"], "--rate"),
                (["convert", wav, out("a.wav"), "--channels", "6"], "1 → N"),
                (["convert", wav, out("a.opus")], "--rate 48000"),
                (["convert", wav, out("a.wav"), "--format", "flac"], ".flac"),
                (["convert", wav, out("a.unknown")], "extension"),
                (["convert", wav, out("no/such/dir/a.wav")], "a.wav"),
                (["convert", wav, out("b.mp3"), "--channels", "3"], "MP3")
            ]
            for (arguments, needle) in cases {
                let result = try SoundstageTool.run(arguments)
                #expect(result.status != 0, "\(arguments)")
                #expect((result.stderr + result.stdout).contains(needle), "\(arguments): \(result.stderr)")
            }
            #expect(try String(contentsOfFile: existing, encoding: .utf8) == "keep me")
            #expect(try Self.strayFiles(in: directory, expected: ["source.wav", "noise.m4a", "existing.wav"]).isEmpty)
        }
    }

    /// On a terminal (a pseudo-terminal from util-linux `script`) the bar is drawn on stderr and
    /// cleared before the final line.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/script"), "util-linux script missing"))
    func progressBarIsDrawnOnATerminal() throws {
        try withTemporaryDirectory { directory in
            let wav = try Self.sourceWAV(in: directory)
            let output = directory.appendingPathComponent("tty.m4a").path
            let command = "\(SoundstageTool.executable.path) convert \(wav) \(output)"
            let result = try runProcess(URL(fileURLWithPath: "/usr/bin/script"), ["-qec", command, "/dev/null"])
            #expect(result.status == 0, "\(result.stdout)")
            #expect(result.stdout.contains("\r[") && result.stdout.contains("100% encoding"))
            #expect(result.stdout.contains("\u{1B}[Kwrote \(output)"))
        }
    }

    /// SIGTERM in the middle of encoding removes the partial output.
    @Test func interruptedConversionLeavesNoPartialFile() throws {
        try withTemporaryDirectory { directory in
            let wav = try Self.sourceWAV(in: directory, seconds: 120)
            let output = directory.appendingPathComponent("long.m4a").path
            let process = Process()
            process.executableURL = SoundstageTool.executable
            process.arguments = ["convert", wav, output]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            // Wait until the temporary output exists, then interrupt.
            let deadline = Date().addingTimeInterval(20)
            var sawPartial = false
            while process.isRunning, Date() < deadline, !sawPartial {
                let files = try Self.strayFiles(in: directory, expected: ["source.wav"])
                sawPartial = files.contains { $0.contains("partial") }
                if !sawPartial { usleep(2_000) }
            }
            process.terminate()
            process.waitUntilExit()
            try #require(sawPartial, "the conversion finished before it could be interrupted")
            #expect(process.terminationStatus != 0)
            #expect(try Self.strayFiles(in: directory, expected: ["source.wav"]).isEmpty)
        }
    }
}

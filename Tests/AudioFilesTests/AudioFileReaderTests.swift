// Tests (control side). Regions, headers and interoperability: what the reader returns matches the
// file, whoever wrote it.

import AudioFiles
import DSPTestSupport
import Foundation
import Testing

@Suite("Reader")
struct AudioFileReaderTests {
    @Test func regionEqualsTheSameSliceOfTheWholeFile() throws {
        let ramp = (0..<10_000).map { Float($0) / 10_000 }
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("ramp.wav").path
            try AudioFileWriter.write(AudioData(channels: [ramp, ramp.map { -$0 }], sampleRate: 48_000), to: path)
            let region = try AudioFileReader.load(path: path, startFrame: 1_234, frameCount: 5_000)
            #expect(region.channels[0] == Array(ramp[1_234..<6_234]))
            #expect(region.channels[1] == ramp[1_234..<6_234].map { -$0 })
            let tail = try AudioFileReader.load(path: path, startFrame: 9_000)
            #expect(tail.channels[0] == Array(ramp[9_000...]))
            let empty = try AudioFileReader.load(path: path, startFrame: 10_000)
            #expect(empty.frameCount == 0 && empty.channelCount == 2)
        }
    }

    @Test func regionOfCompressedFileStartsAtTheRequestedFrame() throws {
        // FLAC decodes exactly; a seek must land on the same sample as a full decode.
        let tone = SignalProbe.sine(frequency: 440, amplitude: 0.5, sampleRate: 48_000, frameCount: 48_000)
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("tone.flac").path
            try AudioFileWriter.write(AudioData(channels: [tone], sampleRate: 48_000), to: path)
            let whole = try AudioFileReader.load(path: path)
            let region = try AudioFileReader.load(path: path, startFrame: 30_000, frameCount: 100)
            #expect(region.channels[0] == Array(whole.channels[0][30_000..<30_100]))
        }
    }

    @Test func infoDescribesTheFileWithoutDecodingIt() throws {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("info.flac").path
            let silence = [Float](repeating: 0, count: 22_050)
            try AudioFileWriter.write(AudioData(channels: [silence, silence, silence], sampleRate: 44_100), to: path)
            let info = try AudioFileReader.info(path: path)
            #expect(info.formatName == "FLAC")
            #expect(info.format == .flac)
            #expect(info.codecName == "Signed 24 bit PCM")
            #expect(info.sampleRate == 44_100)
            #expect(info.channelCount == 3)
            #expect(info.frameCount == 22_050)
            #expect(info.duration == 0.5)
            #expect(info.bitDepth == 24)
        }
    }

    @Test func integerSamplesAreScaledIntoMinusOneToOne() throws {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("extremes.wav").path
            // Out-of-range values are clipped by the writer, not wrapped into the opposite sign.
            try AudioFileWriter.write(
                AudioData(channels: [[-1.5, -1, 0, 0.5, 1, 1.5]], sampleRate: 8_000), to: path, encoding: .int16)
            let read = try AudioFileReader.load(path: path).channels[0]
            #expect(read[0] == -1 && read[1] == -1)
            #expect(read[2] == 0)
            #expect(abs(read[3] - 0.5) <= 1.0 / 32_768)
            #expect(read[4] > 0.999 && read[4] < 1)
            #expect(read[5] > 0.999 && read[5] < 1)
        }
    }
}

/// The external `sox` command, when installed.
enum SoxTool {
    static let executable: URL? = {
        let paths = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":")
        return paths.map { URL(fileURLWithPath: String($0)).appendingPathComponent("sox") }
            .first { FileManager.default.isExecutableFile(atPath: $0.path) }
    }()

    static var isAvailable: Bool { executable != nil }

    /// Runs sox with `arguments` and waits for it.
    static func run(_ arguments: [String]) throws {
        let url: URL = try #require(executable)
        let process = Process()
        process.executableURL = url
        process.arguments = arguments
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "sox \(arguments.joined(separator: " ")) failed")
    }
}

@Suite("Files written by sox")
struct SoxInteropTests {
    @Test(
        .requiresTool(
            "sox", SoxTool.isAvailable,
            "the sox command is not installed; skipping the interoperability check"))
    func soxSineReadsBackWithRateLengthAndPitch() throws {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("sox440.wav").path
            try SoxTool.run([
                "-n", "-r", "44100", "-c", "1", "-b", "16", path, "synth", "0.5", "sine", "440", "vol", "0.5"
            ])
            let info = try AudioFileReader.info(path: path)
            #expect(info.formatName == "WAV")
            #expect(info.bitDepth == 16)
            let read = try AudioFileReader.load(path: path)
            #expect(read.sampleRate == 44_100)
            #expect(read.channelCount == 1)
            #expect(read.frameCount == 22_050)
            let range = 2_205..<19_845
            let level = SignalProbe.amplitude(of: read.channels[0], at: 440, sampleRate: 44_100, range: range)
            #expect(abs(SignalProbe.decibels(level, relativeTo: 0.5)) <= 0.1)
            #expect(
                SignalProbe.energyFraction(of: read.channels[0], at: 440, sampleRate: 44_100, range: range) >= 0.9999)
        }
    }

    @Test(
        .requiresTool(
            "sox", SoxTool.isAvailable,
            "the sox command is not installed; skipping the interoperability check"))
    func soxStereoFLACReadsBackWithEachChannelsPitch() throws {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("sox-stereo.flac").path
            try SoxTool.run([
                "-n", "-r", "48000", "-c", "2", "-b", "24", path, "synth", "0.25", "sine", "1000", "sine", "3000",
                "vol", "0.5"
            ])
            let read = try AudioFileReader.load(path: path)
            #expect(read.sampleRate == 48_000)
            #expect(read.frameCount == 12_000)
            for (channel, frequency) in [(0, 1_000.0), (1, 3_000.0)] {
                let fraction = SignalProbe.energyFraction(
                    of: read.channels[channel], at: frequency, sampleRate: 48_000, range: 1_200..<10_800)
                #expect(fraction >= 0.9999, "channel \(channel) is not a \(frequency) Hz tone")
            }
        }
    }
}

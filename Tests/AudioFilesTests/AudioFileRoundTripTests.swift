// Tests (control side). Every writable format survives a write → read round trip the way a
// listener would judge it: lossless formats return the samples (to within one quantization step),
// lossy formats return the same tones at the same level and length.

import AudioFiles
import Foundation
import Testing

/// A format/encoding pair to round-trip.
struct RoundTripCase: Sendable, CustomTestStringConvertible {
    var format: AudioFileFormat
    var encoding: AudioSampleEncoding?

    var fileExtension: String { format.fileExtension }

    var testDescription: String { "\(format.displayName) \(encoding?.rawValue ?? "")" }
}

@Suite("Audio file round trips")
struct AudioFileRoundTripTests {
    static let sampleRate = 48_000.0
    static let frameCount = 24_000  // 0.5 s
    static let amplitude = 0.5
    static let leftFrequency = 1_000.0
    static let rightFrequency = 1_500.0

    /// Frame-count allowance for lossy codecs, beyond the exact count written. libsndfile 1.2.0
    /// trims encoder delay and padding itself: Vorbis and Opus through the Ogg granule position and
    /// Opus pre-skip, MP3 through LAME's gapless (Xing/LAME) header, so all three come back exact
    /// today. The MP3 allowance of one MPEG-1 Layer III frame (1152 frames) covers decoders that
    /// fall back to whole frames when the gapless header is ignored.
    static func frameAllowance(_ format: AudioFileFormat) -> Int {
        format == .mp3 ? 1152 : 0
    }

    static let stereoTones = AudioData(
        channels: [
            SignalProbe.sine(
                frequency: leftFrequency, amplitude: amplitude, sampleRate: sampleRate, frameCount: frameCount),
            SignalProbe.sine(
                frequency: rightFrequency, amplitude: amplitude, sampleRate: sampleRate, frameCount: frameCount)
        ],
        sampleRate: sampleRate)

    static let exactCases: [RoundTripCase] = [
        .init(format: .wav, encoding: .float32),
        .init(format: .aiff, encoding: .float32),
        .init(format: .caf, encoding: .float32)
    ]

    static let quantizedCases: [RoundTripCase] = [
        .init(format: .wav, encoding: .int16), .init(format: .wav, encoding: .int24),
        .init(format: .aiff, encoding: .int16), .init(format: .aiff, encoding: .int24),
        .init(format: .caf, encoding: .int16), .init(format: .caf, encoding: .int24),
        .init(format: .flac, encoding: .int16), .init(format: .flac, encoding: .int24)
    ]

    static let lossyCases: [RoundTripCase] = [
        .init(format: .oggVorbis), .init(format: .opus), .init(format: .mp3)
    ]

    @Test(arguments: exactCases)
    func floatEncodingReturnsIdenticalSamples(_ testCase: RoundTripCase) throws {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("tones.\(testCase.fileExtension)").path
            try AudioFileWriter.write(Self.stereoTones, to: path, encoding: testCase.encoding)

            let read = try AudioFileReader.load(path: path)
            #expect(read == Self.stereoTones)

            let info = try AudioFileReader.info(path: path)
            #expect(info.format == testCase.format)
            #expect(info.formatName == testCase.format.displayName)
            #expect(info.bitDepth == 32)
            #expect(info.codecName == "32 bit float")
        }
    }

    @Test(arguments: quantizedCases)
    func integerEncodingStaysWithinOneQuantizationStep(_ testCase: RoundTripCase) throws {
        let encoding = try #require(testCase.encoding)
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("tones.\(testCase.fileExtension)").path
            try AudioFileWriter.write(Self.stereoTones, to: path, encoding: encoding)

            let read = try AudioFileReader.load(path: path)
            #expect(read.sampleRate == Self.sampleRate)
            #expect(read.channelCount == 2)
            #expect(read.frameCount == Self.frameCount)
            let step = 1 / Double(1 << (encoding.bitDepth - 1))
            for channel in 0..<2 {
                let worst =
                    zip(read.channels[channel], Self.stereoTones.channels[channel])
                    .map { abs(Double($0) - Double($1)) }.max() ?? .infinity
                #expect(worst <= step, "channel \(channel): worst error \(worst) > \(step)")
            }

            let info = try AudioFileReader.info(path: path)
            #expect(info.format == testCase.format)
            #expect(info.bitDepth == encoding.bitDepth)
            #expect(info.frameCount == Self.frameCount)
            #expect(info.channelCount == 2)
        }
    }

    @Test(arguments: lossyCases)
    func lossyCodecKeepsEachChannelsToneAndLevel(_ testCase: RoundTripCase) throws {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("tones.\(testCase.fileExtension)").path
            try AudioFileWriter.write(Self.stereoTones, to: path)

            let read = try AudioFileReader.load(path: path)
            #expect(read.sampleRate == Self.sampleRate)
            #expect(read.channelCount == 2)
            #expect(abs(read.frameCount - Self.frameCount) <= Self.frameAllowance(testCase.format))

            // Measure away from the edges, where codecs fade in and the last block is padded.
            let range = 4_800..<min(read.frameCount, Self.frameCount) - 4_800
            let tones = [(0, Self.leftFrequency, Self.rightFrequency), (1, Self.rightFrequency, Self.leftFrequency)]
            for (channel, own, other) in tones {
                let samples = read.channels[channel]
                let level = SignalProbe.amplitude(of: samples, at: own, sampleRate: Self.sampleRate, range: range)
                let levelError = SignalProbe.decibels(level, relativeTo: Self.amplitude)
                #expect(abs(levelError) <= 1, "channel \(channel) level off by \(levelError) dB")
                let dominance = SignalProbe.energyFraction(
                    of: samples, at: own, sampleRate: Self.sampleRate, range: range)
                #expect(dominance >= 0.999, "channel \(channel): \(own) Hz holds only \(dominance) of the energy")
                let leak = SignalProbe.amplitude(of: samples, at: other, sampleRate: Self.sampleRate, range: range)
                #expect(
                    SignalProbe.decibels(leak, relativeTo: level) < -40,
                    "channel \(channel): \(other) Hz from the other channel leaks in")
            }

            let info = try AudioFileReader.info(path: path)
            #expect(info.format == testCase.format)
            #expect(info.formatName == testCase.format.displayName)
            #expect(info.bitDepth == nil)
            #expect(info.sampleRate == Self.sampleRate)
        }
    }

    @Test func opusReportsTheRateItWasEncodedAt() throws {
        // Opus always codes at 48 kHz; libsndfile 1.2.0 records the input rate in the OpusHead and
        // decodes back to it when it is one of Opus's rates.
        let tone = AudioData(
            channels: [SignalProbe.sine(frequency: 1_000, amplitude: 0.5, sampleRate: 24_000, frameCount: 12_000)],
            sampleRate: 24_000)
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("tone.opus").path
            try AudioFileWriter.write(tone, to: path)
            let read = try AudioFileReader.load(path: path)
            #expect(read.sampleRate == 24_000)
            #expect(read.frameCount == 12_000)
            let level = SignalProbe.amplitude(of: read.channels[0], at: 1_000, sampleRate: 24_000, range: 2_400..<9_600)
            #expect(abs(SignalProbe.decibels(level, relativeTo: 0.5)) <= 1)
        }
    }

    /// Opus keeps its last milliseconds whatever the length: a multiple of 20 ms (a whole second) left
    /// libsndfile a short last packet that libopus starves, and the end read back as a fade (the last
    /// 100 frames of a 0.5 sine peaked at 0.008). Lengths around each edge of that range, at 48 and
    /// 16 kHz; every one reads back at its length with its tail within the codec's error.
    @Test(arguments: [
        (48_000, 48_000), (48_000, 47_999), (48_000, 48_100), (48_000, 48_168), (48_000, 48_169),
        (48_000, 48_648), (48_000, 48_649), (48_000, 48_959), (48_000, 46_080), (16_000, 16_000), (16_000, 16_056),
        (16_000, 16_300)
    ])
    func opusKeepsTheLastMillisecondsOfAnyLength(_ rate: Int, _ frames: Int) throws {
        let rateValue = Double(rate)
        let tone = AudioData(
            channels: [
                SignalProbe.sine(frequency: 440, amplitude: 0.5, sampleRate: rateValue, frameCount: frames),
                SignalProbe.sine(frequency: 660, amplitude: 0.5, sampleRate: rateValue, frameCount: frames)
            ],
            sampleRate: rateValue)
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("tail.opus").path
            try AudioFileWriter.write(tone, to: path)
            let read = try AudioFileReader.load(path: path)
            #expect(read.frameCount == frames)
            guard read.frameCount == frames else { return }
            for channel in 0..<2 {
                let tail = (frames - rate / 160)..<frames
                let error = tail.map { abs(read.channels[channel][$0] - tone.channels[channel][$0]) }.max() ?? 1
                let peak = tail.suffix(rate / 480).map { abs(read.channels[channel][$0]) }.max() ?? 0
                #expect(error < 0.1, "\(rate) Hz, \(frames) frames, channel \(channel): tail error \(error)")
                #expect(peak > 0.4, "\(rate) Hz, \(frames) frames, channel \(channel): last 2 ms peak \(peak)")
            }
        }
    }

    /// No audio: WAV, integer AIFF, CAF and Ogg Vorbis hold an empty file; FLAC, MP3, Opus, AAC, ALAC and
    /// float AIFF, whose encoders gave no file, a broken one, one without an audio stream or (AIFC) one
    /// read back with 6 frames, are refused with nothing left behind.
    @Test func aFileWithoutAudioIsWrittenOnlyWhereTheFormatHoldsOne() throws {
        try withTemporaryDirectory { directory in
            let empty = AudioData(channels: [[]], sampleRate: 48_000)
            for name in ["e.wav", "e.aiff", "e.caf", "e.ogg"] {
                let path = directory.appendingPathComponent(name).path
                try AudioFileWriter.write(empty, to: path, encoding: name == "e.aiff" ? .int16 : nil)
                let frames = try AudioFileReader.info(path: path).frameCount
                #expect(frames == 0, "\(name): \(frames) frames")
            }
            for name in ["e.flac", "e.mp3", "e.opus", "e.m4a", "e.aac", "f.aiff"] {
                let path = directory.appendingPathComponent(name).path
                let error = #expect(throws: AudioFileError.self, "\(name)") {
                    try AudioFileWriter.write(empty, to: path)
                }
                #expect(error?.description.contains("cannot hold a file without audio") == true, "\(name)")
                #expect(!FileManager.default.fileExists(atPath: path), "\(name)")
            }
        }
    }

    @Test func monoMP3KeepsItsToneAt44100Hz() throws {
        let tone = AudioData(
            channels: [SignalProbe.sine(frequency: 1_000, amplitude: 0.5, sampleRate: 44_100, frameCount: 22_050)],
            sampleRate: 44_100)
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("tone.mp3").path
            try AudioFileWriter.write(tone, to: path)
            let read = try AudioFileReader.load(path: path)
            #expect(read.sampleRate == 44_100)
            #expect(read.channelCount == 1)
            #expect(abs(read.frameCount - 22_050) <= 1152)
            let range = 4_410..<17_640
            let level = SignalProbe.amplitude(of: read.channels[0], at: 1_000, sampleRate: 44_100, range: range)
            #expect(abs(SignalProbe.decibels(level, relativeTo: 0.5)) <= 1)
            #expect(
                SignalProbe.energyFraction(of: read.channels[0], at: 1_000, sampleRate: 44_100, range: range) >= 0.99)
        }
    }
}

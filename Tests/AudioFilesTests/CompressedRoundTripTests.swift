// Tests (control side). AAC and ALAC in M4A (FFmpeg) survive a write → read round trip gaplessly:
// exactly the frames written come back, AAC keeps a tone's pitch and level, ALAC keeps every bit,
// and a looped AAC has no seam beyond the codec's own error.

import AudioFiles
import Foundation
import Testing

@Suite("AAC and ALAC round trips")
struct CompressedRoundTripTests {
    static let sampleRate = 44_100.0
    /// Two seconds at 44.1 kHz: the length the gapless requirement names.
    static let frameCount = 88_200
    static let amplitude = 0.5
    /// AAC level tolerance, in dB, for a steady tone.
    static let aacLevelToleranceDecibels = 1.0
    /// FFmpeg's `aac` encoder delay, which its M4A edit list records.
    static let ffmpegAACPriming = 1024

    /// A 16-bit stereo WAV of two tones (1 kHz left, 1.5 kHz right), read back: the "source asset".
    static func sourceAsset(in directory: URL, frames: Int = frameCount, rate: Double = sampleRate) throws
        -> AudioData
    {
        let path = directory.appendingPathComponent("source.wav").path
        let tones = AudioData(
            channels: [
                SignalProbe.sine(frequency: 1_000, amplitude: amplitude, sampleRate: rate, frameCount: frames),
                SignalProbe.sine(frequency: 1_500, amplitude: amplitude, sampleRate: rate, frameCount: frames)
            ],
            sampleRate: rate)
        try AudioFileWriter.write(tones, to: path, encoding: .int16)
        return try AudioFileReader.load(path: path)
    }

    @Test func aacOf88200FrameWAVDecodesTo88200FramesWithPitchAndLevel() throws {
        try withTemporaryDirectory { directory in
            let source = try Self.sourceAsset(in: directory)
            let path = directory.appendingPathComponent("tones.m4a").path
            try AudioFileWriter.write(source, to: path)

            let info = try AudioFileReader.info(path: path)
            #expect(info.format == .aacM4A)
            #expect(info.frameCount == Self.frameCount)
            #expect(info.primingFrameCount == Self.ffmpegAACPriming)
            // 1024 + 88,200 + 888 = 88 packets of 1024 frames.
            #expect(info.totalFrameCount % 1024 == 0)
            #expect(info.remainderFrameCount == 888)

            let read = try AudioFileReader.load(path: path)
            #expect(read.frameCount == Self.frameCount)
            #expect(read.channelCount == 2 && read.sampleRate == Self.sampleRate)
            let range = 4_410..<83_790
            for (channel, frequency) in [(0, 1_000.0), (1, 1_500.0)] {
                let level = SignalProbe.amplitude(
                    of: read.channels[channel], at: frequency, sampleRate: Self.sampleRate, range: range)
                #expect(abs(SignalProbe.decibels(level, relativeTo: Self.amplitude)) <= Self.aacLevelToleranceDecibels)
                let fraction = SignalProbe.energyFraction(
                    of: read.channels[channel], at: frequency, sampleRate: Self.sampleRate, range: range)
                #expect(fraction >= 0.99, "channel \(channel) is not a \(frequency) Hz tone")
            }
        }
    }

    /// Lengths that are not whole AAC packets or milliseconds still come back exactly.
    @Test(arguments: [1, 1_000, 1_023, 1_024, 1_025, 48_001, 100_003])
    func aacLengthIsExactForAnyFrameCount(_ frames: Int) throws {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("odd.m4a").path
            let tone = SignalProbe.sine(frequency: 440, amplitude: 0.5, sampleRate: 48_000, frameCount: frames)
            try AudioFileWriter.write(AudioData(channels: [tone], sampleRate: 48_000), to: path)
            #expect(try AudioFileReader.info(path: path).frameCount == frames)
            #expect(try AudioFileReader.load(path: path).frameCount == frames)
        }
    }

    @Test(arguments: [AudioSampleEncoding.int16, .int24])
    func alacIsBitExact(_ encoding: AudioSampleEncoding) throws {
        try withTemporaryDirectory { directory in
            let wavPath = directory.appendingPathComponent("source.wav").path
            let noise = seededBytes(count: Self.frameCount, seed: 3).map { Float(Int($0) - 128) / 160 }
            let tone = SignalProbe.sine(
                frequency: 1_000, amplitude: 0.9, sampleRate: Self.sampleRate, frameCount: Self.frameCount)
            try AudioFileWriter.write(
                AudioData(channels: [tone, noise], sampleRate: Self.sampleRate), to: wavPath, encoding: encoding)
            let source = try AudioFileReader.load(path: wavPath)

            let path = directory.appendingPathComponent("lossless.m4a").path
            try AudioFileWriter.write(source, to: path, format: .alacM4A, encoding: encoding)
            let info = try AudioFileReader.info(path: path)
            #expect(info.format == .alacM4A)
            #expect(info.bitDepth == encoding.bitDepth)
            #expect(info.primingFrameCount == 0 && info.remainderFrameCount == 0)
            let read = try AudioFileReader.load(path: path)
            #expect(read == source)
        }
    }

    /// Each channel keeps its own tone, up to 7.1. The fourth channel of 5.1 and 7.1 is LFE, which
    /// AAC keeps only at low frequencies, so it carries 80 Hz.
    @Test(arguments: [AudioFileFormat.aacM4A, .alacM4A], 1...8)
    func channelOrderSurvives(_ format: AudioFileFormat, _ channelCount: Int) throws {
        let frequencies = (0..<channelCount).map { $0 == 3 ? 80.0 : 500.0 + 375.0 * Double($0) }
        let channels = frequencies.map {
            SignalProbe.sine(frequency: $0, amplitude: 0.5, sampleRate: 48_000, frameCount: 24_000)
        }
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("channels.m4a").path
            try AudioFileWriter.write(AudioData(channels: channels, sampleRate: 48_000), to: path, format: format)
            let read = try AudioFileReader.load(path: path)
            try #require(read.channelCount == channelCount)
            for (index, frequency) in frequencies.enumerated() {
                let fraction = SignalProbe.energyFraction(
                    of: read.channels[index], at: frequency, sampleRate: 48_000, range: 2_400..<21_600)
                #expect(fraction >= 0.95, "channel \(index) of \(channelCount) lost its \(frequency) Hz tone")
            }
        }
    }

    @Test func alacRefusesFloatSamples() throws {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("float.m4a").path
            #expect(throws: AudioFileError.self) {
                try AudioFileWriter(
                    path: path, format: .alacM4A, sampleRate: 48_000, channelCount: 1, encoding: .float32)
            }
            #expect(!FileManager.default.fileExists(atPath: path))
        }
    }

    /// A whole number of cycles, decoded and concatenated with itself, continues the tone across
    /// the seam: the error there stays at the level of the codec's error inside the file. A
    /// priming or remainder off by even one frame shifts the phase (error ≈ 0.02 rms here).
    @Test func loopedAACHasNoSeamBeyondTheCodecsOwnError() throws {
        let frequency = 441.0  // 100 frames per cycle at 44.1 kHz: 882 whole cycles
        let frames = Self.frameCount
        let tone = SignalProbe.sine(
            frequency: frequency, amplitude: Self.amplitude, sampleRate: Self.sampleRate, frameCount: frames)
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("loop.m4a").path
            try AudioFileWriter.write(AudioData(channels: [tone], sampleRate: Self.sampleRate), to: path)
            let decoded = try AudioFileReader.load(path: path).channels[0]
            try #require(decoded.count == frames)

            let looped = decoded + decoded
            let ideal = SignalProbe.sine(
                frequency: frequency, amplitude: Self.amplitude, sampleRate: Self.sampleRate, frameCount: 2 * frames)
            let error = zip(looped, ideal).map { $0 - $1 }
            let window = 256
            let seam = SignalProbe.rms(of: error, range: (frames - window)..<(frames + window))
            let firstMiddle = SignalProbe.rms(of: error, range: (frames / 2 - window)..<(frames / 2 + window))
            let secondMiddle = SignalProbe.rms(
                of: error, range: (frames + frames / 2 - window)..<(frames + frames / 2 + window))
            // Both copies are in phase with the ideal tone, and the seam is no worse than the
            // codec's error in the middle of the file (measured: seam ≈ 3.5 × middle ≈ 7e-4,
            // FFmpeg 5.1 at 128 kbit/s mono).
            #expect(secondMiddle <= 2 * firstMiddle + 1e-5)
            #expect(seam <= 10 * firstMiddle, "seam error \(seam) vs \(firstMiddle) inside the file")
            #expect(seam <= 0.005)
            // No click: the step across the seam is a step of the tone, not a jump.
            let maximumToneStep = 2 * Double.pi * frequency / Self.sampleRate * Self.amplitude
            #expect(Double(abs(looped[frames] - looped[frames - 1])) <= 1.5 * maximumToneStep)
        }
    }

    @Test func regionOfAACEqualsTheSameSliceOfTheWholeDecode() throws {
        try withTemporaryDirectory { directory in
            let source = try Self.sourceAsset(in: directory, frames: 30_000)
            let path = directory.appendingPathComponent("region.m4a").path
            try AudioFileWriter.write(source, to: path)
            let whole = try AudioFileReader.load(path: path)
            let region = try AudioFileReader.load(path: path, startFrame: 12_345, frameCount: 5_000)
            #expect(region.channels[0] == Array(whole.channels[0][12_345..<17_345]))
            #expect(region.channels[1] == Array(whole.channels[1][12_345..<17_345]))
            let tail = try AudioFileReader.load(path: path, startFrame: 29_000)
            #expect(tail.frameCount == 1_000)
            #expect(throws: AudioFileError.self) {
                try AudioFileReader.load(path: path, startFrame: 29_000, frameCount: 1_001)
            }
        }
    }

    @Test func aacLoadsAtTheEngineRate() throws {
        try withTemporaryDirectory { directory in
            let source = try Self.sourceAsset(in: directory)
            let path = directory.appendingPathComponent("rate.m4a").path
            try AudioFileWriter.write(source, to: path)
            let read = try AudioFileReader.load(path: path, targetSampleRate: 48_000)
            #expect(read.sampleRate == 48_000)
            #expect(read.frameCount == 96_000)
            let level = SignalProbe.amplitude(
                of: read.channels[0], at: 1_000, sampleRate: 48_000, range: 4_800..<91_200)
            #expect(abs(SignalProbe.decibels(level, relativeTo: Self.amplitude)) <= Self.aacLevelToleranceDecibels)
        }
    }

    @Test func adtsAACIsWrittenAndReadWithoutGaplessTrimming() throws {
        try withTemporaryDirectory { directory in
            let source = try Self.sourceAsset(in: directory, frames: 10_000)
            let path = directory.appendingPathComponent("raw.aac").path
            try AudioFileWriter.write(source, to: path)
            let info = try AudioFileReader.info(path: path)
            #expect(info.format == .aacADTS)
            #expect(info.formatName == "AAC (ADTS)")
            // ADTS cannot say where the audio starts and ends: whole packets come back
            // (1024 priming + 10,000 + 240 padding = 11 packets).
            #expect(info.frameCount == 11 * 1024)
            #expect(try AudioFileReader.load(path: path).frameCount == 11 * 1024)
        }
    }

    @Test func aacBitRateFollowsTheRequest() throws {
        try withTemporaryDirectory { directory in
            let noise = seededBytes(count: 96_000, seed: 9).map { Float(Int($0) - 128) / 256 }
            var rates: [Int] = []
            for kilobits in [64, 192] {
                let path = directory.appendingPathComponent("noise\(kilobits).m4a").path
                try AudioFileWriter.write(
                    AudioData(channels: [noise], sampleRate: 48_000), to: path, bitRate: kilobits * 1000)
                rates.append(try #require(try AudioFileReader.info(path: path).bitRate))
            }
            // Noise needs every bit it is given: each file lands near its target.
            #expect(abs(Double(rates[0]) / 64_000 - 1) < 0.2, "\(rates)")
            #expect(abs(Double(rates[1]) / 192_000 - 1) < 0.2, "\(rates)")
        }
    }
}

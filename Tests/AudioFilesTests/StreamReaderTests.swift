// Tests (control side). AudioFileStreamReader, the disk thread's decoder, delivers exactly what
// AudioFileReader.load does for every format: whole files, regions from a start frame, passes after
// a rewind (loops), and the same frames at the engine rate.

import AudioFiles
import DSPTestSupport
import Foundation
import Testing

@Suite("Streaming reader")
struct StreamReaderTests {
    static let sampleRate = 44_100.0
    /// Two seconds at 44.1 kHz: the gapless requirement's length.
    static let frameCount = 88_200
    /// Chunk size for reads: odd, so reads end inside AAC packets (1,024 frames) and ALAC packets.
    static let chunkFrames = 777

    /// Reads `frames` frames (nil: to the end) from the reader's current position, deinterleaved.
    static func drain(_ reader: AudioFileStreamReader, frames: Int? = nil) throws -> [[Float]] {
        var channels = [[Float]](repeating: [], count: reader.channelCount)
        var buffer = [Float](repeating: 0, count: chunkFrames * reader.channelCount)
        var left = frames ?? Int.max
        while left > 0 {
            let got = try buffer.withUnsafeMutableBufferPointer {
                try reader.read(into: $0.baseAddress!, frames: min(chunkFrames, left))
            }
            if got == 0 { break }
            for frame in 0..<got {
                for channel in channels.indices {
                    channels[channel].append(buffer[frame * reader.channelCount + channel])
                }
            }
            left -= got
        }
        return channels
    }

    /// A stereo 16-bit source asset: a 1 kHz tone on the left and, on the right, seeded noise
    /// (`isNoisy`) or a 1.5 kHz tone. AAC tests that seek use the tones: an encoder codes quiet noise
    /// as noise (perceptual noise substitution), which a decoder regenerates from a random generator
    /// whose state depends on where decoding started.
    static func source(in directory: URL, frames: Int = frameCount, isNoisy: Bool = true) throws -> AudioData {
        let path = directory.appendingPathComponent("source.wav").path
        let tone = SignalProbe.sine(frequency: 1_000, amplitude: 0.5, sampleRate: sampleRate, frameCount: frames)
        let right =
            isNoisy
            ? seededBytes(count: frames, seed: 5).map { Float(Int($0) - 128) / 400 }
            : SignalProbe.sine(frequency: 1_500, amplitude: 0.5, sampleRate: sampleRate, frameCount: frames)
        try AudioFileWriter.write(
            AudioData(channels: [tone, right], sampleRate: sampleRate), to: path, encoding: .int16)
        return try AudioFileReader.load(path: path)
    }

    /// The residual's level relative to the reference, in dB (−∞ when they are identical).
    static func residualDecibels(_ a: [Float], _ reference: ArraySlice<Float>) -> Double {
        guard a.count == reference.count else { return .infinity }
        let residual = zip(a, reference).reduce(0.0) { $0 + Double($1.0 - $1.1) * Double($1.0 - $1.1) }
        let signal = reference.reduce(0.0) { $0 + Double($1) * Double($1) }
        return 10 * log10(residual / max(signal, 1e-30))
    }

    /// True when both hold the same channels, sample for sample (a failure prints no arrays).
    static func same(_ a: [[Float]], _ b: [[Float]]) -> Bool { a == b }

    /// Largest absolute difference between two equally long signals (∞ when the lengths differ).
    static func maximumDifference(_ a: [Float], _ b: ArraySlice<Float>) -> Float {
        guard a.count == b.count else { return .infinity }
        return zip(a, b).reduce(0) { max($0, abs($1.0 - $1.1)) }
    }

    @Test(arguments: [AudioFileFormat.aacM4A, .alacM4A, .flac, .wav])
    func wholeStreamEqualsThePreloadedDecode(_ format: AudioFileFormat) throws {
        try withTemporaryDirectory { directory in
            let source = try Self.source(in: directory)
            let path = directory.appendingPathComponent("asset.\(format.fileExtension)").path
            try AudioFileWriter.write(source, to: path, format: format)
            let preloaded = try AudioFileReader.load(path: path)
            let reader = try AudioFileStreamReader(path: path)
            #expect(reader.frameCount == Self.frameCount)
            let streamed = try Self.drain(reader)
            // Gapless: 88,200 frames in, 88,200 out (the AAC's priming and remainder removed), and the
            // same samples as the preloaded decode (a null test with zero residual).
            #expect(streamed[0].count == Self.frameCount)
            #expect(Self.same(streamed, preloaded.channels))
            if format != .aacM4A { #expect(Self.same(streamed, source.channels)) }
        }
    }

    @Test(arguments: [AudioSampleEncoding.int16, .int24])
    func streamedALACIsBitIdenticalToItsSource(_ encoding: AudioSampleEncoding) throws {
        try withTemporaryDirectory { directory in
            let wav = directory.appendingPathComponent("noise.wav").path
            let noise = seededBytes(count: 2 * Self.frameCount, seed: 9).map { Float(Int($0) - 128) / 130 }
            let data = AudioData(
                channels: [Array(noise[..<Self.frameCount]), Array(noise[Self.frameCount...])], sampleRate: 48_000)
            try AudioFileWriter.write(data, to: wav, encoding: encoding)
            let source = try AudioFileReader.load(path: wav)
            let path = directory.appendingPathComponent("lossless.m4a").path
            try AudioFileWriter.write(source, to: path, format: .alacM4A, encoding: encoding)
            #expect(Self.same(try Self.drain(AudioFileStreamReader(path: path)), source.channels))
        }
    }

    /// A region deep inside the file: the stream seeks and matches the preloaded slice bit for bit.
    @Test(arguments: [AudioFileFormat.alacM4A, .flac, .wav])
    func regionFromAStartFrameEqualsThePreloadedSlice(_ format: AudioFileFormat) throws {
        try withTemporaryDirectory { directory in
            let source = try Self.source(in: directory)
            let path = directory.appendingPathComponent("asset.\(format.fileExtension)").path
            try AudioFileWriter.write(source, to: path, format: format)
            let preloaded = try AudioFileReader.load(path: path)
            let reader = try AudioFileStreamReader(path: path)
            for (start, count) in [(54_321, 20_000), (100, 1_000), (0, 5_000), (87_000, 1_200)] {
                try reader.selectRegion(startFrame: start, frameCount: count)
                let streamed = try Self.drain(reader)
                for channel in 0..<2 {
                    let slice = preloaded.channels[channel][start..<(start + count)]
                    #expect(Self.maximumDifference(streamed[channel], slice) == 0, "\(format) region \(start)+\(count)")
                }
            }
            #expect(throws: AudioFileError.self) { try reader.selectRegion(startFrame: 88_000, frameCount: 201) }
        }
    }

    /// An AAC region seeks to 4 packets before its start and decodes them as pre-roll: the frames
    /// from the start frame on null against the preloaded slice (from the first packet: exactly).
    @Test func aacRegionFromAStartFrameNullsAgainstThePreloadedSlice() throws {
        try withTemporaryDirectory { directory in
            let source = try Self.source(in: directory, isNoisy: false)
            let path = directory.appendingPathComponent("tones.m4a").path
            try AudioFileWriter.write(source, to: path)
            let preloaded = try AudioFileReader.load(path: path)
            let reader = try AudioFileStreamReader(path: path)
            for (start, count) in [(54_321, 20_000), (5_000, 3_000), (87_000, 1_200), (100, 1_000)] {
                try reader.selectRegion(startFrame: start, frameCount: count)
                let streamed = try Self.drain(reader)
                for channel in 0..<2 {
                    let slice = preloaded.channels[channel][start..<(start + count)]
                    #expect(Self.residualDecibels(streamed[channel], slice) < -90, "region \(start)+\(count)")
                    if start < 4_096 { #expect(Self.maximumDifference(streamed[channel], slice) == 0) }
                }
            }
        }
    }

    /// libsndfile's lossy formats: a region, streamed or loaded, is the slice of the whole decode.
    /// (libsndfile lands on the right frame but decodes the first frames after an MP3 or Vorbis seek
    /// without the decoder's history; the readers seek early and decode a pre-roll.)
    @Test(arguments: [AudioFileFormat.oggVorbis, .opus, .mp3])
    func lossyRegionsFromAStartFrameEqualTheSliceOfTheWholeDecode(_ format: AudioFileFormat) throws {
        try withTemporaryDirectory { directory in
            let tones = [1_000.0, 1_500.0].map {
                SignalProbe.sine(frequency: $0, amplitude: 0.5, sampleRate: 48_000, frameCount: 96_000)
            }
            let path = directory.appendingPathComponent("lossy.\(format.fileExtension)").path
            try AudioFileWriter.write(AudioData(channels: tones, sampleRate: 48_000), to: path, format: format)
            let whole = try AudioFileReader.load(path: path)
            let reader = try AudioFileStreamReader(path: path)
            #expect(Self.same(try Self.drain(reader), whole.channels))
            for start in [30_001, 60_000] {
                let slice = whole.channels[0][start..<(start + 20_000)]
                try reader.selectRegion(startFrame: start, frameCount: 20_000)
                #expect(Self.residualDecibels(try Self.drain(reader)[0], slice) < -120, "streamed from \(start)")
                let loaded = try AudioFileReader.load(path: path, startFrame: start, frameCount: 20_000)
                #expect(Self.residualDecibels(loaded.channels[0], slice) < -120, "loaded from \(start)")
            }
        }
    }

    /// A rewind (what a loop does at the end of each pass) delivers the same frames again: pass two
    /// starts on frame 0 with no gap and no overlap at the seam.
    @Test(arguments: [AudioFileFormat.aacM4A, .alacM4A, .aacADTS])
    func aRewoundStreamRepeatsExactly(_ format: AudioFileFormat) throws {
        try withTemporaryDirectory { directory in
            let source = try Self.source(in: directory, frames: 20_000, isNoisy: false)
            let path = directory.appendingPathComponent("loop.\(format.fileExtension)").path
            try AudioFileWriter.write(source, to: path, format: format)
            let preloaded = try AudioFileReader.load(path: path)
            let reader = try AudioFileStreamReader(path: path)
            let first = try Self.drain(reader)
            try reader.rewind()
            let second = try Self.drain(reader)
            #expect(Self.same(first, preloaded.channels))
            #expect(Self.same(second, first))
            // A region loops over the region only.
            try reader.selectRegion(startFrame: 5_000, frameCount: 3_000)
            _ = try Self.drain(reader)
            try reader.rewind()
            #expect(Self.residualDecibels(try Self.drain(reader)[0], preloaded.channels[0][5_000..<8_000]) < -90)
        }
    }

    /// Streams at the engine rate are converted like preloaded files: same length, and the same
    /// samples to within the converters' rounding (one-shot vs streaming soxr), regions included.
    @Test(arguments: [AudioFileFormat.aacM4A, .flac])
    func conversionToTheEngineRateMatchesThePreloadedConversion(_ format: AudioFileFormat) throws {
        try withTemporaryDirectory { directory in
            let source = try Self.source(in: directory)
            let path = directory.appendingPathComponent("asset.\(format.fileExtension)").path
            try AudioFileWriter.write(source, to: path, format: format)
            let preloaded = try AudioFileReader.load(path: path, targetSampleRate: 48_000)
            let reader = try AudioFileStreamReader(path: path, targetSampleRate: 48_000)
            #expect(reader.frameCount == 96_000)
            let streamed = try Self.drain(reader)
            #expect(streamed[0].count == 96_000)
            #expect(Self.maximumDifference(streamed[0], preloaded.channels[0][...]) < 1e-5)
            try reader.selectRegion(startFrame: 50_001, frameCount: 10_000)
            let region = try Self.drain(reader)
            #expect(Self.maximumDifference(region[1], preloaded.channels[1][50_001..<60_001]) < 1e-5)
        }
    }

    static let ffmpegMissing = "the ffmpeg command is not installed (Debian package ffmpeg); skipping"

    /// Files from the ffmpeg command (edit list in a 1 kHz timescale; iTunSMPB as QuickTime metadata,
    /// which the reader applies itself) stream to their exact length and seek exactly.
    @Test(.requiresTool("ffmpeg", FFmpegTool.isAvailable, Comment(rawValue: ffmpegMissing)))
    func filesFromTheFFmpegCommandStreamGaplessly() throws {
        let frames = 100_003
        try withTemporaryDirectory { directory in
            let wav = directory.appendingPathComponent("in.wav").path
            let tone = SignalProbe.sine(frequency: 750, amplitude: 0.5, sampleRate: Self.sampleRate, frameCount: frames)
            try AudioFileWriter.write(
                AudioData(channels: [tone], sampleRate: Self.sampleRate), to: wav, encoding: .int16)
            let editList = directory.appendingPathComponent("cli.m4a").path
            let keys = directory.appendingPathComponent("keys.m4a").path
            try FFmpegTool.run(["-i", wav, "-c:a", "aac", "-b:a", "128k", editList])
            let packets = (frames + 1024 + 1023) / 1024
            let tag = String(format: " 00000000 %08X %08X %016X", 1024, packets * 1024 - 1024 - frames, frames)
            try FFmpegTool.run([
                "-i", wav, "-c:a", "aac", "-b:a", "128k", "-use_editlist", "0", "-movflags", "use_metadata_tags",
                "-metadata", "iTunSMPB=\(tag)", keys
            ])
            for path in [editList, keys] {
                let preloaded = try AudioFileReader.load(path: path).channels[0]
                let reader = try AudioFileStreamReader(path: path)
                #expect(Self.maximumDifference(try Self.drain(reader)[0], preloaded[...]) == 0, "\(path)")
                try reader.selectRegion(startFrame: 61_000, frameCount: 30_000)
                #expect(Self.maximumDifference(try Self.drain(reader)[0], preloaded[61_000..<91_000]) == 0, "\(path)")
            }
        }
    }

    @Test func badFilesThrowClearErrors() throws {
        try withTemporaryDirectory { directory in
            let noise = directory.appendingPathComponent("noise.m4a").path
            try Data(seededBytes(count: 10_000, seed: 4)).write(to: URL(fileURLWithPath: noise))
            #expect {
                try AudioFileStreamReader(path: noise)
            } throws: { error in
                guard case .unsupportedFormat = error as? AudioFileError else { return false }
                return "\(error)".contains("noise.m4a")
            }
            // An M4A cut in half has lost its index (FFmpeg writes it last).
            let source = try Self.source(in: directory, frames: 20_000)
            let whole = directory.appendingPathComponent("whole.m4a").path
            try AudioFileWriter.write(source, to: whole)
            let bytes = try Data(contentsOf: URL(fileURLWithPath: whole))
            let cut = directory.appendingPathComponent("cut.m4a").path
            try bytes.prefix(bytes.count / 2).write(to: URL(fileURLWithPath: cut))
            #expect(throws: AudioFileError.self) { try AudioFileStreamReader(path: cut) }
            #expect(throws: AudioFileError.fileNotFound(path: directory.path + "/missing.m4a")) {
                try AudioFileStreamReader(path: directory.path + "/missing.m4a")
            }
        }
    }
}

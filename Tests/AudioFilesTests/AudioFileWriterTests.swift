// Tests (control side). The streaming writer produces the same file as the one-shot writer, picks
// formats and encodings as documented, and refuses impossible requests before touching the disk.

import AudioFiles
import Foundation
import Testing

@Suite("Writer")
struct AudioFileWriterTests {
    static let left = SignalProbe.sine(frequency: 1_000, amplitude: 0.5, sampleRate: 48_000, frameCount: 10_000)
    static let right = SignalProbe.sine(frequency: 1_500, amplitude: 0.25, sampleRate: 48_000, frameCount: 10_000)

    @Test func streamedBlocksEqualTheWholeSignal() throws {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("stream.wav").path
            let writer = try AudioFileWriter(path: path, format: .wav, sampleRate: 48_000, channelCount: 2)
            // First half as interleaved blocks of 1000 frames, second half as channel arrays.
            let interleaved = zip(Self.left, Self.right).flatMap { [$0, $1] }
            for start in stride(from: 0, to: 5_000, by: 1_000) {
                try interleaved[(start * 2)..<((start + 1_000) * 2)].withUnsafeBufferPointer { block in
                    try writer.write(interleaved: block, frames: 1_000)
                }
            }
            try writer.write(channels: [Array(Self.left[5_000...]), Array(Self.right[5_000...])])
            #expect(writer.framesWritten == 10_000)
            try writer.close()
            #expect(!writer.isOpen)

            let read = try AudioFileReader.load(path: path)
            #expect(read.channels == [Self.left, Self.right])
        }
    }

    @Test func closedWriterRefusesMoreFrames() throws {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("closed.flac").path
            let writer = try AudioFileWriter(path: path, sampleRate: 48_000, channelCount: 1)
            try writer.write(channels: [Self.left])
            try writer.close()
            try writer.close()  // a second close does nothing
            let error = #expect(throws: AudioFileError.self) { try writer.write(channels: [Self.left]) }
            #expect(error?.description.contains("closed.flac") == true)
            #expect(try AudioFileReader.info(path: path).frameCount == 10_000)
        }
    }

    @Test func extensionChoosesFormatAndDefaultEncoding() throws {
        let expectations: [(String, String, Int?)] = [
            ("wav", "WAV", 32), ("aif", "AIFF", 32), ("caf", "CAF", 32), ("flac", "FLAC", 24),
            ("ogg", "Ogg Vorbis", nil), ("opus", "Opus", nil), ("mp3", "MP3", nil)
        ]
        try withTemporaryDirectory { directory in
            for (fileExtension, formatName, bitDepth) in expectations {
                let path = directory.appendingPathComponent("tone.\(fileExtension)").path
                try AudioFileWriter.write(AudioData(channels: [Self.left], sampleRate: 48_000), to: path)
                let info = try AudioFileReader.info(path: path)
                #expect(info.formatName == formatName, "\(fileExtension)")
                #expect(info.bitDepth == bitDepth, "\(fileExtension)")
            }
        }
    }

    @Test func explicitFormatOverridesTheExtension() throws {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("take.raw").path
            try AudioFileWriter.write(
                AudioData(channels: [Self.left], sampleRate: 48_000), to: path, format: .flac, encoding: .int16)
            let info = try AudioFileReader.info(path: path)
            #expect(info.format == .flac)
            #expect(info.bitDepth == 16)
        }
    }

    @Test func impossibleRequestsAreRefusedNamingTheFile() throws {
        try withTemporaryDirectory { directory in
            let mono44k = AudioData(channels: [[Float](repeating: 0, count: 100)], sampleRate: 44_100)
            let silence = [Float](repeating: 0, count: 100)
            let cases: [(String, AudioData, AudioSampleEncoding?)] = [
                ("rate.opus", mono44k, nil),  // Opus has no 44.1 kHz mode
                ("channels.mp3", AudioData(channels: [silence, silence, silence], sampleRate: 48_000), nil),
                ("float.flac", AudioData(channels: [silence], sampleRate: 48_000), .float32),
                ("unknown.xyz", mono44k, nil),
                ("fractional.wav", AudioData(channels: [silence], sampleRate: 44_100.5), nil),
                ("ragged.wav", AudioData(channels: [silence, [0]], sampleRate: 48_000), nil),
                ("nochannels.wav", AudioData(channels: [], sampleRate: 48_000), nil)
            ]
            for (name, data, encoding) in cases {
                let path = directory.appendingPathComponent(name).path
                let error = #expect(throws: AudioFileError.self, "\(name)") {
                    try AudioFileWriter.write(data, to: path, encoding: encoding)
                }
                #expect(error?.description.contains(name) == true, "\(String(describing: error))")
                #expect(!FileManager.default.fileExists(atPath: path), "\(name) was left behind")
            }
        }
    }

    @Test func unwritableDestinationsAreReported() throws {
        try withTemporaryDirectory { directory in
            let data = AudioData(channels: [[0, 0]], sampleRate: 48_000)
            let missing = directory.appendingPathComponent("missing/out.wav").path
            let missingError = #expect(throws: AudioFileError.self) { try AudioFileWriter.write(data, to: missing) }
            #expect(missingError == .writeFailed(path: missing, reason: "its directory does not exist"))

            let folder = directory.appendingPathComponent("folder.wav").path
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
            let folderError = #expect(throws: AudioFileError.self) { try AudioFileWriter.write(data, to: folder) }
            #expect(folderError == .notARegularFile(path: folder, kind: "a directory"))
        }
    }

    @Test func shortInterleavedBufferIsRejected() throws {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("short.wav").path
            let writer = try AudioFileWriter(path: path, sampleRate: 48_000, channelCount: 2)
            let samples = [Float](repeating: 0, count: 15)
            let error = #expect(throws: AudioFileError.self) {
                try samples.withUnsafeBufferPointer { try writer.write(interleaved: $0, frames: 8) }
            }
            guard case .invalidArgument = error else {
                Issue.record("expected invalidArgument, got \(String(describing: error))")
                return
            }
            #expect(writer.framesWritten == 0)
            try writer.close()
        }
    }
}

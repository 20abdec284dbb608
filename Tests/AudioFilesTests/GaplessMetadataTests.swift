// Tests (control side). Gapless metadata written by others: iTunes' iTunSMPB tag and files from the
// `ffmpeg` command-line tool (edit lists in a 1 kHz movie timescale, faststart, QuickTime keys)
// all decode to the frame count they were made from.

import AudioFiles
import DSPTestSupport
import Foundation
import Testing

@Suite("Gapless metadata from other writers")
struct GaplessMetadataTests {
    static let sampleRate = 48_000.0

    /// An AAC M4A written by us, as bytes, plus what it decodes to.
    static func aacFile(frames: Int, in directory: URL) throws -> (bytes: [UInt8], decoded: AudioData) {
        let path = directory.appendingPathComponent("plain.m4a").path
        let tone = SignalProbe.sine(frequency: 750, amplitude: 0.5, sampleRate: sampleRate, frameCount: frames)
        try AudioFileWriter.write(AudioData(channels: [tone], sampleRate: sampleRate), to: path)
        return ([UInt8](try Data(contentsOf: URL(fileURLWithPath: path))), try AudioFileReader.load(path: path))
    }

    /// iTunSMPB text: reserved, priming, remainder, valid frames (hex), as iTunes writes it.
    static func smpb(priming: Int, remainder: Int, valid: Int) -> String {
        " 00000000 " + [priming, remainder].map { String(format: "%08X", $0) }.joined(separator: " ")
            + " " + String(format: "%016llX", valid) + " 00000000 00000000"
    }

    @Test func iTunSMPBWithoutEditListGivesTheTaggedLength() throws {
        let frames = 50_000
        try withTemporaryDirectory { directory in
            var (bytes, reference) = try Self.aacFile(frames: frames, in: directory)
            // Hide the edit list; only the iTunes tag says where the audio is.
            #expect(MP4Boxes.rename(["moov", "trak", "edts"], to: "free", in: &bytes))
            let packets = (1024 + frames + 1023) / 1024
            let remainder = packets * 1024 - 1024 - frames
            let tag = Self.smpb(priming: 1024, remainder: remainder, valid: frames)
            #expect(MP4Boxes.appendITunesTag(name: "iTunSMPB", value: tag, to: &bytes))
            let path = directory.appendingPathComponent("itunes.m4a").path
            try Data(bytes).write(to: URL(fileURLWithPath: path))

            let info = try AudioFileReader.info(path: path)
            #expect(info.frameCount == frames)
            #expect(info.primingFrameCount == 1024)
            #expect(info.remainderFrameCount == remainder)
            // The same samples as through the edit list: same priming removed, same end.
            #expect(try AudioFileReader.load(path: path) == reference)
        }
    }

    @Test func withoutAnyGaplessMetadataEverySampleTableFrameIsKept() throws {
        let frames = 20_000
        try withTemporaryDirectory { directory in
            var (bytes, reference) = try Self.aacFile(frames: frames, in: directory)
            #expect(MP4Boxes.rename(["moov", "trak", "edts"], to: "free", in: &bytes))
            let path = directory.appendingPathComponent("bare.m4a").path
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            let info = try AudioFileReader.info(path: path)
            // Nothing marks the priming, so it stays; the trimmed last packet still gives the end.
            #expect(info.primingFrameCount == 0)
            #expect(info.frameCount == 1024 + frames)
            let read = try AudioFileReader.load(path: path)
            #expect(Array(read.channels[0][1024...]) == reference.channels[0])
        }
    }

    static let ffmpegMissing = "the ffmpeg command is not installed (Debian package ffmpeg); skipping"

    /// The ffmpeg CLI's own M4A files: an edit list in milliseconds, a trimmed last packet.
    @Test(
        .requiresTool("ffmpeg", FFmpegTool.isAvailable, Comment(rawValue: ffmpegMissing)),
        arguments: [88_200, 100_003, 1_000])
    func filesFromTheFFmpegCommandDecodeToTheirLength(_ frames: Int) throws {
        try withTemporaryDirectory { directory in
            let wav = directory.appendingPathComponent("in.wav").path
            let tone = SignalProbe.sine(frequency: 1_000, amplitude: 0.5, sampleRate: 44_100, frameCount: frames)
            try AudioFileWriter.write(AudioData(channels: [tone, tone], sampleRate: 44_100), to: wav, encoding: .int16)
            let source = try AudioFileReader.load(path: wav)
            let aac = directory.appendingPathComponent("cli-aac.m4a").path
            let alac = directory.appendingPathComponent("cli-alac.m4a").path
            let faststart = directory.appendingPathComponent("cli-faststart.m4a").path
            try FFmpegTool.run(["-i", wav, "-c:a", "aac", "-b:a", "160k", aac])
            try FFmpegTool.run(["-i", wav, "-c:a", "alac", alac])
            try FFmpegTool.run(["-i", wav, "-c:a", "aac", "-movflags", "+faststart", faststart])

            for path in [aac, faststart] {
                let info = try AudioFileReader.info(path: path)
                #expect(info.frameCount == frames, "\(path)")
                #expect(info.primingFrameCount == 1024)
                #expect(try AudioFileReader.load(path: path).frameCount == frames)
            }
            #expect(try AudioFileReader.load(path: alac) == source)
        }
    }

    /// iTunSMPB stored as QuickTime metadata (`-movflags use_metadata_tags`), which FFmpeg's
    /// demuxer reads but does not apply: the reader removes the priming itself.
    @Test(.requiresTool("ffmpeg", FFmpegTool.isAvailable, Comment(rawValue: ffmpegMissing)))
    func iTunSMPBAsQuickTimeMetadataIsApplied() throws {
        let frames = 30_001
        try withTemporaryDirectory { directory in
            let (_, reference) = try Self.aacFile(frames: frames, in: directory)
            let wav = directory.appendingPathComponent("in.wav").path
            let tone = SignalProbe.sine(frequency: 750, amplitude: 0.5, sampleRate: Self.sampleRate, frameCount: frames)
            try AudioFileWriter.write(AudioData(channels: [tone], sampleRate: Self.sampleRate), to: wav)
            let path = directory.appendingPathComponent("keys.m4a").path
            let tag = Self.smpb(priming: 1024, remainder: 31 * 1024 - 1024 - frames, valid: frames)
            try FFmpegTool.run([
                "-i", wav, "-c:a", "aac", "-b:a", "128k", "-use_editlist", "0", "-movflags", "use_metadata_tags",
                "-metadata", "iTunSMPB=\(tag)", path
            ])
            let info = try AudioFileReader.info(path: path)
            #expect(info.frameCount == frames)
            #expect(info.primingFrameCount == 1024)
            let read = try AudioFileReader.load(path: path)
            #expect(read.frameCount == frames)
            // Same encoder, same settings: the same samples as our own gapless file.
            #expect(read == reference)
        }
    }
}

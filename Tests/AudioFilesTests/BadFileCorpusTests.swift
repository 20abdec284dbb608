// Tests (control side). The bad-file corpus (Tests/AudioFilesTests/Corpus, seeded by Fuzz/make_corpus.py
// and grown by the libFuzzer harness in Fuzz/): every input either decodes to finite samples or is
// refused with an AudioFileError that names the file, and `inspect` reports it without throwing.
// Never a crash, never a hang.
import AudioFiles
import Foundation
import Testing

@Suite("Bad-file corpus")
struct BadFileCorpusTests {
    /// The fuzzer's extension table: an input's first byte indexes it.
    static let extensions = [
        "wav", "aiff", "caf", "flac", "ogg", "opus", "mp3", "m4a", "mp4", "aac", "w64", "raw", "xyz"
    ]
    static let corpus = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Corpus")

    static var inputs: [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: corpus.path)) ?? []).filter { $0.hasSuffix(".fuzz") }
            .sorted()
    }

    @Test func theCorpusIsThere() {
        #expect(Self.inputs.count >= 20, "corpus at \(Self.corpus.path): \(Self.inputs)")
    }

    @Test(arguments: inputs)
    func everyInputDecodesCleanlyOrIsRefusedByName(_ input: String) throws {
        let bytes = try Data(contentsOf: Self.corpus.appendingPathComponent(input))
        try #require(!bytes.isEmpty)
        let ext = Self.extensions[Int(bytes[0]) % Self.extensions.count]
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent(input.replacingOccurrences(of: ".fuzz", with: "." + ext)).path
            try bytes.dropFirst().write(to: URL(fileURLWithPath: path))
            do {
                let info = try AudioFileReader.info(path: path)
                #expect(info.channelCount >= 1, "\(input): \(info.channelCount) channels")
                let audio = try AudioFileReader.load(path: path, targetSampleRate: 48_000)
                #expect(audio.channels.count == info.channelCount && audio.channels.count <= 64, "\(input)")
                for channel in audio.channels {
                    #expect(channel.allSatisfy { $0.isFinite }, "\(input): non-finite samples")
                }
            } catch {
                #expect("\(error)".contains(path), "\(input): the error does not name the file: \(error)")
            }
            // `soundstage info --verify`: the header checks and a full decode never throw or crash;
            // whatever they refuse is named as damage or as an error naming the file.
            let inspection = AudioFileReader.inspect(path: path, verify: true)
            if let error = inspection.error {
                #expect("\(error)".contains(path), "\(input): the inspect error does not name the file: \(error)")
            }
            #expect(inspection.info != nil || inspection.error != nil || inspection.damage != nil, "\(input)")
            if let verification = inspection.verification, let info = inspection.info {
                #expect(verification.decodedFrameCount >= 0 && info.frameCount >= 0, "\(input)")
            }
            do {
                let reader = try AudioFileStreamReader(path: path, targetSampleRate: 44_100)
                let buffer = UnsafeMutablePointer<Float>.allocate(capacity: 4_096 * 64)
                defer { buffer.deallocate() }
                var total = 0
                while total < 48_000 * 10, let n = try? reader.read(into: buffer, frames: 4_096), n > 0 { total += n }
            } catch {
                #expect("\(error)".contains(path), "\(input): the stream error does not name the file: \(error)")
            }
        }
    }
}

// Tests (control side). Seeded damage (cuts, flipped bytes, overwritten runs) to files of every
// format never crashes the reader: each damaged file either loads with finite samples or throws an
// AudioFileError that names it.

import AudioFiles
import Foundation
import Testing

@Suite("Damaged-file fuzz")
struct AudioFileFuzzTests {
    static let mutationsPerFormat = 30

    @Test(arguments: ["wav", "aiff", "caf", "flac", "ogg", "opus", "mp3", "m4a", "aac"])
    func damagedFileLoadsCleanlyOrThrowsNamingIt(_ fileExtension: String) throws {
        let tone = SignalProbe.sine(frequency: 1_000, amplitude: 0.5, sampleRate: 48_000, frameCount: 9_600)
        let encoding: AudioSampleEncoding? = ["wav", "aiff", "caf"].contains(fileExtension) ? .int16 : nil
        try withTemporaryDirectory { directory in
            let original = directory.appendingPathComponent("original.\(fileExtension)").path
            try AudioFileWriter.write(
                AudioData(channels: [tone, tone], sampleRate: 48_000), to: original, encoding: encoding)
            let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: original)))

            for trial in 0..<Self.mutationsPerFormat {
                let random = seededBytes(count: 16, seed: UInt64(trial + 1) * 7_919)
                let position = (Int(random[0]) << 8 | Int(random[1])) % bytes.count
                var damaged = bytes
                switch trial % 3 {
                case 0:
                    damaged = Array(bytes.prefix(position))
                case 1:
                    for offset in 0..<8 where position + offset < damaged.count {
                        damaged[position + offset] = random[offset + 2]
                    }
                default:
                    let end = min(damaged.count, position + 64)
                    damaged.replaceSubrange(
                        position..<end, with: seededBytes(count: end - position, seed: UInt64(trial) + 99))
                }
                let path = directory.appendingPathComponent("damaged\(trial).\(fileExtension)").path
                try Data(damaged).write(to: URL(fileURLWithPath: path))
                do throws(AudioFileError) {
                    let data = try AudioFileReader.load(path: path, targetSampleRate: 44_100)
                    let isFinite = data.channels.allSatisfy { $0.allSatisfy(\.isFinite) }
                    #expect(isFinite, "trial \(trial): non-finite samples")
                } catch {
                    #expect(error.description.contains("damaged\(trial).\(fileExtension)"))
                }
            }
        }
    }
}

// Benchmark support (control side). Writes long, distinct test assets in every format, a second at a
// time, and reuses them between runs when they are already there.
import AudioFiles
import Foundation

/// Makes the benchmark's audio files: stereo, `sampleRate`, two tones per file (their pitches depend
/// on the seed, so no two files are alike) under seeded noise at −30 dBFS, a little like music for the
/// encoders.
public enum AssetFactory {
    public static let sampleRate = 48_000.0

    /// The formats the benchmarks know, by command-line name, with their writer format and encoding.
    public static let formats: [(name: String, format: AudioFileFormat, encoding: AudioSampleEncoding?)] = [
        ("wav", .wav, .int16), ("flac", .flac, .int16), ("ogg", .oggVorbis, nil), ("opus", .opus, nil),
        ("mp3", .mp3, nil), ("aac", .aacM4A, nil), ("alac", .alacM4A, .int16)
    ]

    public static func format(named name: String) -> (
        name: String, format: AudioFileFormat, encoding: AudioSampleEncoding?
    )? {
        formats.first { $0.name == name }
    }

    /// `directory/<prefix>-<seed>-<format>.<ext>`, written unless a file of that length is already there.
    /// Returns the path and whether it was written now.
    public static func asset(
        in directory: String, prefix: String, seed: Int, seconds: Int, format name: String
    ) throws -> (path: String, isNew: Bool) {
        guard let entry = format(named: name) else {
            throw AudioFileError.invalidArgument(path: name, reason: "unknown format")
        }
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let path = "\(directory)/\(prefix)-\(seed)-\(entry.name).\(entry.format.fileExtension)"
        let frames = seconds * Int(sampleRate)
        if let info = try? AudioFileReader.info(path: path), info.frameCount == frames { return (path, false) }
        let partial = path + ".partial"
        let writer = try AudioFileWriter(
            path: partial, format: entry.format, sampleRate: sampleRate, channelCount: 2, encoding: entry.encoding)
        var noise = UInt64(truncatingIfNeeded: seed &* 2_654_435_761 &+ 1)
        let low = 110.0 * pow(2, Double(seed % 24) / 12)
        let high = low * 3.01
        for second in 0..<seconds {
            var left = [Float](repeating: 0, count: Int(sampleRate))
            var right = left
            for i in 0..<left.count {
                let t = Double(second * left.count + i) / sampleRate
                noise ^= noise << 13
                noise ^= noise >> 7
                noise ^= noise << 17
                let n = Float(Double(noise >> 11) / Double(1 << 53) * 2 - 1) * 0.03
                left[i] = Float(0.3 * sin(2 * .pi * low * t) + 0.1 * sin(2 * .pi * high * t)) + n
                right[i] = Float(0.1 * sin(2 * .pi * low * t) + 0.3 * sin(2 * .pi * high * t)) - n
            }
            try writer.write(channels: [left, right])
        }
        try writer.close()
        guard rename(partial, path) == 0 else { throw AudioFileError.writeFailed(path: path, reason: "rename failed") }
        return (path, true)
    }

    /// Asks the kernel to drop the file's cached pages, so the next read comes from the disk.
    public static func dropFromPageCache(_ path: String) {
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { return }
        fdatasync(fd)
        _ = posix_fadvise(fd, 0, 0, Int32(POSIX_FADV_DONTNEED))
        close(fd)
    }

    /// The file's size in bytes.
    public static func size(of path: String) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int) ?? 0
    }
}

// Tests (control side). Shared by the `soundstage info` tests: real files written by Soundstage's
// own writer (or built byte by byte), cut with truncate(2) or damaged in place, and the real binary
// run on them.

import AudioFiles
import Foundation
import Testing

enum InfoFiles {
    static let sampleRate = 48_000.0

    /// Two seconds of a stereo tone at 48 kHz (or of digital silence), written as `name` (the
    /// format from its extension).
    static func write(_ name: String, in dir: URL, frames: Int = 96_000, isSilent: Bool = false) throws -> String {
        let path = dir.appendingPathComponent(name).path
        let gain = isSilent ? 0.0 : 1.0
        let left = (0..<frames).map { Float(gain * 0.5 * sin(2 * Double.pi * 440 * Double($0) / sampleRate)) }
        let right = (0..<frames).map { Float(gain * 0.25 * sin(2 * Double.pi * 660 * Double($0) / sampleRate)) }
        try AudioFileWriter.write(AudioData(channels: [left, right], sampleRate: sampleRate), to: path)
        return path
    }

    /// Cuts the file at `path` to `fraction` of its size with truncate(2); returns the new size.
    @discardableResult
    static func cut(_ path: String, to fraction: Double) throws -> Int {
        let size = try #require(try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int)
        let kept = Int(Double(size) * fraction)
        #expect(truncate(path, off_t(kept)) == 0)
        return kept
    }

    /// Flips the bits of 400 bytes in the middle of the file at `path` (XOR 0x5A).
    static func damageTheMiddle(of path: String) throws {
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        let middle = bytes.count / 2
        for index in middle..<(middle + 400) { bytes[index] ^= 0x5A }
        try Data(bytes).write(to: URL(fileURLWithPath: path))
    }

    /// Runs `soundstage info ARGS`.
    static func info(_ arguments: [String]) throws -> Fixtures.Result {
        try Fixtures.run(Fixtures.executable, ["info"] + arguments, timeout: 120)
    }

    /// Runs `soundstage info --json ARGS` and parses its array.
    static func json(_ arguments: [String]) throws -> (status: Int32, objects: [[String: Any]]) {
        let result = try info(["--json"] + arguments)
        let parsed = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8))
        return (result.status, try #require(parsed as? [[String: Any]], "\(result.stdout)"))
    }

    /// A 16-bit stereo RF64 file of `frames` frames whose `ds64` chunk declares `declaredFrames`
    /// (data size and sample count alike), built byte by byte (EBU Tech 3306).
    static func rf64(frames: Int, declaredFrames: Int, at path: String) throws {
        var bytes: [UInt8] = []
        func ascii(_ text: String) { bytes += Array(text.utf8) }
        func le(_ value: UInt64, _ count: Int) {
            bytes += (0..<count).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) }
        }
        let dataBytes = UInt64(frames * 4)
        ascii("RF64"); le(0xFFFF_FFFF, 4); ascii("WAVE")
        ascii("ds64"); le(28, 4)
        le(UInt64(4 + 36 + 8 + 16 + 8) + dataBytes, 8); le(UInt64(declaredFrames * 4), 8); le(UInt64(declaredFrames), 8)
        le(0, 4)
        ascii("fmt "); le(16, 4); le(1, 2); le(2, 2); le(48_000, 4); le(48_000 * 4, 4); le(4, 2); le(16, 2)
        ascii("data"); le(0xFFFF_FFFF, 4)
        for frame in 0..<frames {
            let sample = UInt64(UInt16(bitPattern: Int16(8_000 * sin(Double(frame) * 0.05))))
            le(sample, 2); le(sample, 2)
        }
        try Data(bytes).write(to: URL(fileURLWithPath: path))
    }
}

// Control side. Completes the `fmt ` chunk of the float WAV files libsndfile writes, so that every
// reader takes them without a warning.
import Foundation

/// libsndfile writes a float WAV's `fmt ` chunk with 16 bytes, the PCM layout. For any other format
/// tag (float is 3) the WAVE specification adds a 2-byte `cbSize`; sox warns "wave header missing
/// extended part of fmt chunk" without it. libsndfile has no option for it (its WAVEX files warn in
/// sox too, as sox applies the check to the extensible sub-format), so after libsndfile has closed
/// the file the header is rewritten in place: `fmt ` grows to 18 bytes with `cbSize` 0, the `fact`
/// chunk moves up by 2 bytes and the `PAD ` chunk libsndfile leaves before `data` (written when
/// there is no PEAK chunk) shrinks by 2 bytes. The sample data does not move.
enum WAVFloatHeader {
    /// Bytes read from the start of the file: enough for RIFF, `fmt `, `fact` and `PAD ` headers.
    private static let headerLength = 12 + 24 + 12 + 8

    /// Rewrites the header of the float WAV open as `descriptor` (readable, writable and seekable).
    /// Returns false, changing nothing, when the file does not have libsndfile's float layout
    /// (RIFF, a 16-byte `fmt ` with tag 3, `fact`, then `PAD ` of at least 2 bytes).
    ///
    /// - Throws: `.writeFailed` when the header cannot be written back.
    @discardableResult
    static func addExtensionSize(descriptor: Int32, path: String) throws(AudioFileError) -> Bool {
        var header = [UInt8](repeating: 0, count: headerLength)
        let count = header.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, headerLength, 0) }
        guard count == headerLength, Self.string(header, 0) == "RIFF", Self.string(header, 8) == "WAVE",
            Self.string(header, 12) == "fmt ", Self.uint32(header, 16) == 16, Self.uint16(header, 20) == 3,
            Self.string(header, 36) == "fact", Self.uint32(header, 40) == 4,
            Self.string(header, 48) == "PAD ", Self.uint32(header, 52) >= 2
        else { return false }
        let padSize = Self.uint32(header, 52)
        var rewritten = Array(header[0..<20])
        Self.append(UInt32(18), to: &rewritten, replacingAt: 16)
        rewritten += header[20..<36]  // format tag … bits per sample
        rewritten += [0, 0]  // cbSize
        rewritten += header[36..<48]  // fact
        rewritten += Array("PAD ".utf8)
        var size = [UInt8]()
        Self.append(padSize - 2, to: &size, replacingAt: nil)
        rewritten += size
        // The old PAD header's 8 bytes now end 2 bytes later: zero what the new PAD covers there.
        rewritten += [0, 0]
        let written = rewritten.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, 0) }
        guard written == rewritten.count else {
            throw .writeFailed(
                path: path, reason: "could not complete the WAV header: \(String(cString: strerror(errno)))")
        }
        return true
    }

    private static func string(_ bytes: [UInt8], _ offset: Int) -> String {
        String(decoding: bytes[offset..<(offset + 4)], as: UTF8.self)
    }

    private static func uint16(_ bytes: [UInt8], _ offset: Int) -> UInt16 {
        UInt16(bytes[offset]) | UInt16(bytes[offset + 1]) << 8
    }

    private static func uint32(_ bytes: [UInt8], _ offset: Int) -> UInt32 {
        (0..<4).reduce(UInt32(0)) { $0 | UInt32(bytes[offset + $1]) << (8 * $1) }
    }

    /// Little-endian `value`, appended or written over 4 bytes at `offset`.
    private static func append(_ value: UInt32, to bytes: inout [UInt8], replacingAt offset: Int?) {
        let little = (0..<4).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) }
        if let offset {
            bytes.replaceSubrange(offset..<(offset + 4), with: little)
        } else {
            bytes += little
        }
    }
}

// Control side. Reads how many frames a WAV, AIFF or CAF header *declares*, so the reader can tell
// a truncated file from a short one: libsndfile silently clamps the count to the bytes present.

import CSndFile
import Foundation

/// Frame count declared by an uncompressed container's header, independent of the file's length.
///
/// libsndfile 1.2.0 opens a WAV whose data chunk claims more bytes than the file holds and reports
/// only the frames that are present (it notes "should be" in its log). This walker reads the chunk
/// list itself so the reader can report `AudioFileError.truncated`. It reads with `pread`, never
/// trusts a size without bounds checks, and gives up (returns nil) on anything unexpected; nil
/// means "no claim", never an error.
///
/// Covered: RIFF/WAVE (incl. WAVE_FORMAT_EXTENSIBLE) via the `data` chunk size, AIFF/AIFC via
/// `COMM.numSampleFrames`, CAF via the `data` chunk size (-1, "until end of file", is no claim).
/// Not covered: RF64, Wave64 and other containers; their counts are taken as libsndfile reports.
///
/// For MPEG audio, `hasMPEGLengthTag` tells whether the first frame carries a Xing/Info/VBRI tag,
/// i.e. whether libsndfile's frame count is a declaration (exact) or mpg123's estimate.
enum DeclaredFrameCount {
    /// At most this many chunks are visited before giving up.
    private static let maximumChunkCount = 4096

    /// - Parameters:
    ///   - fd: open descriptor of the file (its offset is not moved).
    ///   - fileSize: file length in bytes.
    ///   - format: libsndfile format code from `SF_INFO.format`.
    ///   - channelCount: channels per frame (≥ 1).
    /// - Returns: the frame count the header declares, or nil when there is no usable claim.
    static func read(fd: Int32, fileSize: Int, format: Int32, channelCount: Int) -> Int? {
        guard channelCount > 0, let sampleBytes = SndFileLibrary.bytesPerSample(of: format) else { return nil }
        let bytesPerFrame = sampleBytes * channelCount
        let reader = ByteReader(fd: fd, fileSize: fileSize)
        switch SndFileLibrary.major(format) {
        case Int(SF_FORMAT_WAV), Int(SF_FORMAT_WAVEX):
            return riffDataBytes(reader).map { $0 / bytesPerFrame }
        case Int(SF_FORMAT_AIFF):
            return aiffFrameCount(reader)
        case Int(SF_FORMAT_CAF):
            return cafDataBytes(reader).map { $0 / bytesPerFrame }
        default:
            return nil
        }
    }

    /// True when the first MPEG audio frame (after an optional ID3v2 tag) contains a "Xing",
    /// "Info" or "VBRI" length tag, which states the stream's frame count.
    static func hasMPEGLengthTag(fd: Int32, fileSize: Int) -> Bool {
        let reader = ByteReader(fd: fd, fileSize: fileSize)
        var start = 0
        if let id3 = reader.bytes(at: 0, count: 10), id3.ascii(0, 3) == "ID3" {
            // Syncsafe size: 4 × 7 bits, plus the 10-byte header and an optional 10-byte footer.
            let size = (6..<10).reduce(0) { $0 << 7 | Int(id3[$1] & 0x7F) }
            start = 10 + size + (id3[5] & 0x10 != 0 ? 10 : 0)
        }
        let window = min(8_192, fileSize - start)
        guard window > 4, let bytes = reader.bytes(at: start, count: window) else { return false }
        // First frame sync: 11 set bits, and a layer field that is not the reserved 00.
        guard
            let sync = (0..<(bytes.count - 1)).first(where: {
                bytes[$0] == 0xFF && bytes[$0 + 1] & 0xE0 == 0xE0 && bytes[$0 + 1] & 0x06 != 0
            })
        else { return false }
        // The tag follows the 4-byte header and the side information (9 to 32 bytes); VBRI sits
        // at a fixed 32 bytes after the header.
        let tagRange = (sync + 4)..<min(sync + 4 + 64, bytes.count - 4)
        return tagRange.contains { ["Xing", "Info", "VBRI"].contains(bytes.ascii($0, 4)) }
    }

    /// Declared size of the RIFF `data` chunk, in bytes.
    private static func riffDataBytes(_ reader: ByteReader) -> Int? {
        guard let header = reader.bytes(at: 0, count: 12), header.ascii(0, 4) == "RIFF",
            header.ascii(8, 4) == "WAVE"
        else { return nil }
        var offset = 12
        for _ in 0..<maximumChunkCount {
            guard let chunk = reader.bytes(at: offset, count: 8) else { return nil }
            let size = chunk.uint32LE(4)
            if chunk.ascii(0, 4) == "data" {
                // 0 and 0xFFFFFFFF are placeholders some writers leave while streaming.
                return (size == 0 || size == 0xFFFF_FFFF) ? nil : Int(size)
            }
            offset += 8 + Int(size) + Int(size & 1)
        }
        return nil
    }

    /// `numSampleFrames` of the AIFF/AIFC `COMM` chunk.
    private static func aiffFrameCount(_ reader: ByteReader) -> Int? {
        guard let header = reader.bytes(at: 0, count: 12), header.ascii(0, 4) == "FORM",
            header.ascii(8, 4) == "AIFF" || header.ascii(8, 4) == "AIFC"
        else { return nil }
        var offset = 12
        for _ in 0..<maximumChunkCount {
            guard let chunk = reader.bytes(at: offset, count: 8) else { return nil }
            let size = chunk.uint32BE(4)
            if chunk.ascii(0, 4) == "COMM" {
                guard size >= 6, let comm = reader.bytes(at: offset + 8, count: 6) else { return nil }
                return Int(comm.uint32BE(2))
            }
            offset += 8 + Int(size) + Int(size & 1)
        }
        return nil
    }

    /// Declared size of the CAF `data` chunk's audio, in bytes (chunk size minus the 4-byte edit
    /// count).
    private static func cafDataBytes(_ reader: ByteReader) -> Int? {
        guard let header = reader.bytes(at: 0, count: 8), header.ascii(0, 4) == "caff" else { return nil }
        var offset = 8
        for _ in 0..<maximumChunkCount {
            guard let chunk = reader.bytes(at: offset, count: 12) else { return nil }
            let size = Int64(bitPattern: chunk.uint64BE(4))
            if chunk.ascii(0, 4) == "data" {
                return size >= 4 ? Int(size - 4) : nil
            }
            guard size >= 0, size <= Int64(reader.fileSize) else { return nil }
            offset += 12 + Int(size)
        }
        return nil
    }
}

/// Bounds-checked positional reads from a file descriptor.
private struct ByteReader {
    let fd: Int32
    let fileSize: Int

    /// `count` bytes at `offset`, or nil when they are not all inside the file or the read fails.
    func bytes(at offset: Int, count: Int) -> [UInt8]? {
        guard offset >= 0, count > 0, offset <= fileSize - count else { return nil }
        var buffer = [UInt8](repeating: 0, count: count)
        let got = buffer.withUnsafeMutableBytes { raw in
            pread(fd, raw.baseAddress, count, off_t(offset))
        }
        return got == count ? buffer : nil
    }
}

extension [UInt8] {
    fileprivate func ascii(_ start: Int, _ count: Int) -> String {
        String(decoding: self[start..<start + count], as: Unicode.ASCII.self)
    }

    fileprivate func uint32LE(_ start: Int) -> UInt32 {
        (0..<4).reduce(UInt32(0)) { $0 | UInt32(self[start + $1]) << (8 * UInt32($1)) }
    }

    fileprivate func uint32BE(_ start: Int) -> UInt32 {
        (0..<4).reduce(UInt32(0)) { $0 << 8 | UInt32(self[start + $1]) }
    }

    fileprivate func uint64BE(_ start: Int) -> UInt64 {
        (0..<8).reduce(UInt64(0)) { $0 << 8 | UInt64(self[start + $1]) }
    }
}

// Control side. Reads how many frames a WAV, RF64, Wave64, AIFF or CAF header *declares*, so the
// reader can tell a truncated file from a short one: libsndfile silently clamps the count to the
// bytes present.

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
/// Covered: RIFF/WAVE (incl. WAVE_FORMAT_EXTENSIBLE) via the `data` chunk size, RF64/BW64 via the
/// `ds64` chunk (the larger of its data size in frames and its sample count, so a header whose two
/// claims disagree is caught), Wave64 via its `data` chunk size, AIFF/AIFC via
/// `COMM.numSampleFrames`, CAF via the `data` chunk size (-1, "until end of file", is no claim).
/// Other containers' counts are taken as libsndfile reports them.
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
        case Int(SF_FORMAT_RF64):
            return rf64FrameCount(reader, bytesPerFrame: bytesPerFrame)
        case Int(SF_FORMAT_W64):
            return wave64DataBytes(reader).map { $0 / bytesPerFrame }
        case Int(SF_FORMAT_AIFF):
            return aiffFrameCount(reader)
        case Int(SF_FORMAT_CAF):
            return cafDataBytes(reader).map { $0 / bytesPerFrame }
        default:
            return nil
        }
    }

    /// Declared size of the RIFF `data` chunk, in bytes.
    private static func riffDataBytes(_ reader: ByteReader) -> Int? {
        guard let header = reader.bytes(at: 0, count: 12), header.ascii(0, 4) == "RIFF",
            header.ascii(8, 4) == "WAVE", let size = riffDataChunkSize(reader)
        else { return nil }
        // 0 and 0xFFFFFFFF are placeholders some writers leave while streaming.
        return (size == 0 || size == 0xFFFF_FFFF) ? nil : Int(size)
    }

    /// Frames an RF64/BW64 header declares: its `ds64` data size in frames, or its sample count when
    /// that is larger. A `data` chunk with a 32-bit size other than 0xFFFFFFFF states its own size.
    private static func rf64FrameCount(_ reader: ByteReader, bytesPerFrame: Int) -> Int? {
        guard let header = reader.bytes(at: 0, count: 44), ["RF64", "BW64"].contains(header.ascii(0, 4)),
            header.ascii(8, 4) == "WAVE", header.ascii(12, 4) == "ds64", header.uint32LE(16) >= 24,
            let size = riffDataChunkSize(reader)
        else { return nil }
        let bytes = size == 0xFFFF_FFFF ? header.uint64LE(28) : UInt64(size)
        let sampleCount = header.uint64LE(36)
        let frames = min(bytes / UInt64(bytesPerFrame), UInt64(Int.max))
        return Int(max(frames, min(sampleCount, UInt64(Int.max))))
    }

    /// The 32-bit size field of the `data` chunk of a RIFF, RF64 or BW64 file (chunks from byte 12).
    private static func riffDataChunkSize(_ reader: ByteReader) -> UInt32? {
        var offset = 12
        for _ in 0..<maximumChunkCount {
            guard let chunk = reader.bytes(at: offset, count: 8) else { return nil }
            let size = chunk.uint32LE(4)
            if chunk.ascii(0, 4) == "data" { return size }
            offset += 8 + Int(size) + Int(size & 1)
        }
        return nil
    }

    /// Declared size of the Wave64 `data` chunk's audio, in bytes (its 64-bit size counts the
    /// 24-byte chunk header; chunks start on 8-byte boundaries).
    private static func wave64DataBytes(_ reader: ByteReader) -> Int? {
        guard let header = reader.bytes(at: 0, count: 40), header.ascii(0, 4) == "riff",
            header.ascii(24, 4) == "wave"
        else { return nil }
        var offset = 40
        for _ in 0..<maximumChunkCount {
            guard let chunk = reader.bytes(at: offset, count: 24) else { return nil }
            let size = chunk.uint64LE(16)
            guard size >= 24, size <= UInt64(Int.max / 2) else { return nil }
            if chunk.ascii(0, 4) == "data" { return Int(size) - 24 }
            offset += (Int(size) + 7) & ~7
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

// Control side. Bounds-checked positional reads and byte-order helpers for the header walkers
// (DeclaredFrameCount, FLACTailCheck, MPEGLengthTag, OggTailCheck).

import Foundation

/// Bounds-checked positional reads from a file descriptor; the descriptor's offset is not moved.
struct ByteReader {
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

    /// The last `count` bytes of the file (fewer when the file is shorter) and where they start.
    func tail(count: Int) -> (start: Int, bytes: [UInt8])? {
        let length = min(count, fileSize)
        return bytes(at: fileSize - length, count: length).map { (fileSize - length, $0) }
    }
}

extension [UInt8] {
    func ascii(_ start: Int, _ count: Int) -> String {
        String(decoding: self[start..<start + count], as: Unicode.ASCII.self)
    }

    func uint16BE(_ start: Int) -> Int { Int(self[start]) << 8 | Int(self[start + 1]) }

    func uint32LE(_ start: Int) -> UInt32 {
        (0..<4).reduce(UInt32(0)) { $0 | UInt32(self[start + $1]) << (8 * UInt32($1)) }
    }

    func uint32BE(_ start: Int) -> UInt32 {
        (0..<4).reduce(UInt32(0)) { $0 << 8 | UInt32(self[start + $1]) }
    }

    func uint64LE(_ start: Int) -> UInt64 {
        (0..<8).reduce(UInt64(0)) { $0 | UInt64(self[start + $1]) << (8 * UInt64($1)) }
    }

    func uint64BE(_ start: Int) -> UInt64 {
        (0..<8).reduce(UInt64(0)) { $0 << 8 | UInt64(self[start + $1]) }
    }
}

// Control side. Gives the Ogg files libsndfile writes a fixed stream serial number, so that the same
// audio gives the same bytes.
import Foundation

/// libsndfile seeds each Ogg stream's serial number from the clock, with no setting for it, so two
/// encodes of the same audio differ in every page's serial and checksum. After libsndfile has closed
/// an Ogg Vorbis or Opus file, `fix` rewrites each page's serial number to `serialNumber` and its
/// CRC to match, in place (8 bytes a page; nothing moves). The file must hold one logical stream,
/// as libsndfile writes.
enum OggSerialNumber {
    /// "Sstg": any constant would do; a file holds a single stream, so it cannot collide.
    static let serialNumber: UInt32 = 0x6774_7353

    /// Rewrites the pages of the file open as `descriptor` (readable, writable, seekable). Stops,
    /// leaving the rest as it is, at the first bytes that are not an Ogg page of the same stream.
    /// `trimmingEndBy`: samples to take off the granule position of the end-of-stream page (silence the
    /// writer added so that Opus's last packet is a full one, `OpusFinalPacket`).
    ///
    /// - Throws: `.writeFailed` when a page cannot be written back.
    static func fix(descriptor: Int32, path: String, trimmingEndBy trim: Int64 = 0) throws(AudioFileError) {
        var offset: off_t = 0
        var originalSerial: UInt32?
        var page = [UInt8]()
        while true {
            var header = [UInt8](repeating: 0, count: 27)
            guard read(descriptor, &header, at: offset), header[0..<4].elementsEqual("OggS".utf8) else { return }
            let serial = (0..<4).reduce(UInt32(0)) { $0 | UInt32(header[14 + $1]) << (8 * $1) }
            if originalSerial == nil { originalSerial = serial }
            guard serial == originalSerial else { return }
            var lacing = [UInt8](repeating: 0, count: Int(header[26]))
            guard read(descriptor, &lacing, at: offset + 27) else { return }
            let bodyLength = lacing.reduce(0) { $0 + Int($1) }
            page = [UInt8](repeating: 0, count: 27 + lacing.count + bodyLength)
            guard read(descriptor, &page, at: offset) else { return }
            for index in 0..<4 {
                page[14 + index] = UInt8(truncatingIfNeeded: serialNumber >> (8 * index))
                page[22 + index] = 0
            }
            let granule = (0..<8).reduce(Int64(0)) { $0 | Int64(page[6 + $1]) << (8 * $1) }
            if trim > 0, header[5] & 0x04 != 0, granule >= trim {
                for index in 0..<8 { page[6 + index] = UInt8(truncatingIfNeeded: (granule - trim) >> (8 * index)) }
            }
            let crc = checksum(page)
            for index in 0..<4 { page[22 + index] = UInt8(truncatingIfNeeded: crc >> (8 * index)) }
            // Granule position (6…13), serial (14…17), sequence (unchanged) and CRC (22…25).
            let written = page.withUnsafeBytes { pwrite(descriptor, $0.baseAddress! + 6, 20, offset + 6) }
            guard written == 20 else {
                throw .writeFailed(
                    path: path, reason: "could not rewrite an Ogg page header: \(String(cString: strerror(errno)))")
            }
            offset += off_t(page.count)
        }
    }

    /// Reads exactly `buffer.count` bytes at `offset`; false at the end of the file or on an error.
    private static func read(_ descriptor: Int32, _ buffer: inout [UInt8], at offset: off_t) -> Bool {
        let count = buffer.count
        return buffer.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, count, offset) } == count
    }

    /// Ogg's CRC-32: polynomial 0x04C11DB7, initial value 0, no reflection, no final XOR.
    private static let table: [UInt32] = (0..<256).map { index in
        var value = UInt32(index) << 24
        for _ in 0..<8 { value = value & 0x8000_0000 != 0 ? (value << 1) ^ 0x04C1_1DB7 : value << 1 }
        return value
    }

    private static func checksum(_ bytes: [UInt8]) -> UInt32 {
        bytes.reduce(UInt32(0)) { crc, byte in (crc << 8) ^ table[Int((crc >> 24) ^ UInt32(byte))] }
    }
}

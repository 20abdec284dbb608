// Control side. A cheap check that a FLAC file holds the samples its STREAMINFO declares: find the
// last frame header near the end of the file and check where that frame starts and that its
// CRC-16 closes at the end of the file. Reads at most about 1 MiB; decodes nothing.

/// Checks the end of a native FLAC stream against its STREAMINFO (FLAC format specification,
/// RFC 9639, sections 8.2 STREAMINFO and 9.1 frame header).
enum FLACTailCheck {
    /// The STREAMINFO fields the check uses.
    private struct StreamInfo {
        var maximumBlockSize: Int
        var maximumFrameSize: Int
        var totalSamples: Int
    }

    /// A frame header found in the tail.
    private struct FrameHeader {
        /// Offset in the tail buffer.
        var offset: Int
        var firstSample: Int
        var blockSize: Int
    }

    /// Nil when the end of the stream agrees with STREAMINFO, or when the file is not a plain
    /// FLAC stream starting with "fLaC" or declares no length (then nothing is claimed).
    static func damage(_ reader: ByteReader) -> AudioFileDamage? {
        guard let info = streamInfo(reader), info.totalSamples > 0 else { return nil }
        let window = min(1 << 20, max(65_536, 2 * info.maximumFrameSize))
        guard var (_, tail) = reader.tail(count: window) else { return nil }
        // An ID3v1 tag some taggers append is not part of the stream.
        if tail.count > 128, tail.ascii(tail.count - 128, 3) == "TAG" { tail.removeLast(128) }
        let expected = info.totalSamples
        var candidates = headers(in: tail, info: info).makeIterator()
        guard let last = candidates.next() else {
            return AudioFileDamage(
                kind: .damaged, expectedFrames: expected,
                reason: "STREAMINFO declares \(expected) frames but no FLAC frame header was found "
                    + "in the last \(tail.count) bytes")
        }
        // The last frame is complete when its CRC-16 closes at the end of the file. A false sync
        // inside the data could precede it, so the next few headers are tried as well.
        let complete = ([last] + Array(candidates.prefix(3))).first { closesAtEnd($0, tail) }
        if let complete {
            let end = complete.firstSample + complete.blockSize
            guard end < expected else { return nil }
            return AudioFileDamage(
                kind: .truncated, expectedFrames: expected, availableFrames: end,
                reason: "STREAMINFO declares \(expected) frames but the file ends after the frame "
                    + "that ends at frame \(end)")
        }
        return AudioFileDamage(
            kind: .truncated, expectedFrames: expected, availableFrames: min(last.firstSample, expected),
            reason: "STREAMINFO declares \(expected) frames but the last FLAC frame, from frame "
                + "\(last.firstSample), is cut short (its checksum does not close at the end of the file)")
    }

    /// STREAMINFO, when the file starts with "fLaC" and its first metadata block is STREAMINFO.
    private static func streamInfo(_ reader: ByteReader) -> StreamInfo? {
        guard let head = reader.bytes(at: 0, count: 42), head.ascii(0, 4) == "fLaC", head[4] & 0x7F == 0 else {
            return nil
        }
        let body = 8
        let maximumFrame = Int(head[body + 7]) << 16 | Int(head[body + 8]) << 8 | Int(head[body + 9])
        let total = (Int(head[body + 13]) & 0x0F) << 32 | Int(head.uint32BE(body + 14))
        return StreamInfo(
            maximumBlockSize: head.uint16BE(body + 2), maximumFrameSize: maximumFrame, totalSamples: total)
    }

    /// Valid frame headers in `tail`, last first.
    private static func headers(in tail: [UInt8], info: StreamInfo) -> [FrameHeader] {
        // Zeros after the end let a header be parsed up to its longest form (16 bytes); a header
        // must still end inside the file. The last frame of digital silence is only a few bytes.
        let padded = tail + [UInt8](repeating: 0, count: 16)
        var found: [FrameHeader] = []
        var index = tail.count - 2
        while index >= 0, found.count < 8 {
            if tail[index] == 0xFF, tail[index + 1] & 0xFE == 0xF8,
                let header = parseHeader(padded, at: index, end: tail.count, info: info)
            {
                found.append(header)
            }
            index -= 1
        }
        return found
    }

    /// Parses and CRC-8-checks a frame header at `offset` that ends before `end`; nil when it is
    /// not one. `bytes` holds at least 16 bytes from `offset`.
    private static func parseHeader(_ bytes: [UInt8], at offset: Int, end: Int, info: StreamInfo) -> FrameHeader? {
        let isVariable = bytes[offset + 1] & 1 == 1
        let blockCode = Int(bytes[offset + 2] >> 4)
        let rateCode = Int(bytes[offset + 2] & 0x0F)
        let channelCode = Int(bytes[offset + 3] >> 4)
        guard blockCode != 0, rateCode != 15, channelCode <= 10, bytes[offset + 3] & 1 == 0 else { return nil }
        // The coded number: UTF-8-like, 1 to 7 bytes, up to 36 bits.
        var position = offset + 4
        let lead = bytes[position]
        let leadingOnes = (~lead).leadingZeroBitCount
        guard leadingOnes != 1, leadingOnes <= 7 else { return nil }
        let extra = max(0, leadingOnes - 1)
        var number = Int(lead & (UInt8(0x7F) >> leadingOnes))
        for byte in bytes[(position + 1)..<(position + 1 + extra)] {
            guard byte & 0xC0 == 0x80 else { return nil }
            number = number << 6 | Int(byte & 0x3F)
        }
        position += 1 + extra
        var blockSize: Int
        switch blockCode {
        case 1: blockSize = 192
        case 2...5: blockSize = 576 << (blockCode - 2)
        case 6: blockSize = Int(bytes[position]) + 1; position += 1
        case 7: blockSize = bytes.uint16BE(position) + 1; position += 2
        default: blockSize = 256 << (blockCode - 8)
        }
        position += [12: 1, 13: 2, 14: 2][rateCode] ?? 0
        guard position < end, crc8(bytes[offset..<position]) == bytes[position] else { return nil }
        let first = isVariable ? number : number * info.maximumBlockSize
        return FrameHeader(offset: offset, firstSample: first, blockSize: blockSize)
    }

    /// True when the bytes from the header to the end of the file end in their own CRC-16.
    private static func closesAtEnd(_ header: FrameHeader, _ tail: [UInt8]) -> Bool {
        guard tail.count - header.offset > 4 else { return false }
        let stored = tail.uint16BE(tail.count - 2)
        return crc16(tail[header.offset..<(tail.count - 2)]) == stored
    }

    /// CRC-8, polynomial x^8 + x^2 + x + 1, initial value 0 (frame header checksum).
    private static func crc8(_ bytes: ArraySlice<UInt8>) -> UInt8 {
        var crc: UInt8 = 0
        for byte in bytes {
            crc ^= byte
            for _ in 0..<8 { crc = crc & 0x80 != 0 ? (crc << 1) ^ 0x07 : crc << 1 }
        }
        return crc
    }

    /// CRC-16, polynomial x^16 + x^15 + x^2 + 1, initial value 0 (frame checksum).
    private static func crc16(_ bytes: ArraySlice<UInt8>) -> Int {
        var crc: UInt16 = 0
        for byte in bytes {
            crc ^= UInt16(byte) << 8
            for _ in 0..<8 { crc = crc & 0x8000 != 0 ? (crc << 1) ^ 0x8005 : crc << 1 }
        }
        return Int(crc)
    }
}

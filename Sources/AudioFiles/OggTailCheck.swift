// Control side. A cheap check that an Ogg file ends the way a finished stream does: a complete last
// page, with a valid checksum and the end-of-stream flag. Ogg declares no length up front, so this is
// how a cut or unfinished file shows. Reads at most the last 64 KiB; decodes nothing.

/// Checks the last page of an Ogg stream (RFC 3533, section 6: page header and CRC).
enum OggTailCheck {
    /// Largest possible page: 27-byte header, 255 lacing values, 255 × 255 bytes of data.
    private static let maximumPageSize = 27 + 255 + 255 * 255

    /// Nil when the last page is complete, passes its CRC, ends the stream and its granule
    /// position agrees with `decodableFrames` (the length the decoder reports, at `sampleRate`);
    /// otherwise the damage.
    static func damage(_ reader: ByteReader, decodableFrames: Int?, sampleRate: Double) -> AudioFileDamage? {
        guard let (start, tail) = reader.tail(count: maximumPageSize), tail.count >= 27 else { return nil }
        let present = decodableFrames.map { "; \($0) frames can be decoded" } ?? ""
        guard
            let page = stride(from: tail.count - 27, through: 0, by: -1).first(where: {
                tail.ascii($0, 4) == "OggS" && tail[$0 + 4] == 0
            })
        else {
            return AudioFileDamage(
                kind: .damaged, availableFrames: decodableFrames,
                reason: "no Ogg page starts in the last \(tail.count) bytes\(present)")
        }
        let segmentCount = Int(tail[page + 26])
        let pageStart = start + page
        guard page + 27 + segmentCount <= tail.count else {
            return cutShort(at: pageStart, expectedBytes: nil, reader: reader, frames: decodableFrames)
        }
        let length = 27 + segmentCount + tail[(page + 27)..<(page + 27 + segmentCount)].reduce(0) { $0 + Int($1) }
        if page + length > tail.count {
            return cutShort(at: pageStart, expectedBytes: length, reader: reader, frames: decodableFrames)
        }
        if page + length < tail.count {
            return AudioFileDamage(
                kind: .damaged, availableFrames: decodableFrames,
                reason: "\(tail.count - page - length) bytes of unknown data follow the last Ogg page\(present)")
        }
        var body = Array(tail[page..<(page + length)])
        let stored = body.uint32LE(22)
        for index in 22..<26 { body[index] = 0 }
        if crc32(body) != stored {
            return AudioFileDamage(
                kind: .damaged, availableFrames: decodableFrames,
                reason: "the last Ogg page (at byte \(pageStart)) fails its checksum\(present)")
        }
        if tail[page + 5] & 0x04 == 0 {
            return AudioFileDamage(
                kind: .truncated, availableFrames: decodableFrames,
                reason: "the stream has no end-of-stream page, so the file was cut or never finished\(present)")
        }
        let granule = Int(truncatingIfNeeded: body.uint64LE(6))
        guard let decodable = decodableFrames,
            let declared = declaredFrames(
                reader, lastGranule: granule, serial: body.uint32LE(14), sampleRate: sampleRate),
            declared > decodable
        else { return nil }
        return AudioFileDamage(
            kind: .damaged, expectedFrames: declared, availableFrames: decodable,
            reason: "the last Ogg page's granule position declares \(declared) frames but only \(decodable) "
                + "can be decoded (a page in the middle is lost or damaged)")
    }

    /// Frames the last granule position declares, for a single Vorbis or Opus stream (the first
    /// page has the same serial number): the granule for Vorbis; for Opus the granule (48 kHz)
    /// minus the pre-skip, at `sampleRate`, rounded down (so a count the decoder rounds up is no alarm).
    private static func declaredFrames(_ reader: ByteReader, lastGranule: Int, serial: UInt32, sampleRate: Double)
        -> Int?
    {
        guard lastGranule > 0, let first = reader.bytes(at: 0, count: 27 + 1 + 19), first.ascii(0, 4) == "OggS",
            first.uint32LE(14) == serial, first[26] == 1
        else { return nil }
        let body = 28
        if first[body] == 1, first.ascii(body + 1, 6) == "vorbis" { return lastGranule }
        guard first.ascii(body, 8) == "OpusHead" else { return nil }
        let preSkip = Int(first[body + 10]) | Int(first[body + 11]) << 8
        let frames = (Double(max(0, lastGranule - preSkip)) * sampleRate / 48_000).rounded(.down)
        return frames < Double(Int.max / 2) ? Int(frames) : nil
    }

    private static func cutShort(at pageStart: Int, expectedBytes: Int?, reader: ByteReader, frames: Int?)
        -> AudioFileDamage
    {
        let held = reader.fileSize - pageStart
        let size = expectedBytes.map { "\(held) of its \($0) bytes" } ?? "\(held) bytes"
        let present = frames.map { "; \($0) frames can be decoded" } ?? ""
        return AudioFileDamage(
            kind: .truncated, availableFrames: frames,
            reason: "the last Ogg page (at byte \(pageStart)) is cut short: the file holds \(size)\(present)")
    }

    /// Ogg's CRC-32: polynomial 0x04C11DB7, initial value 0, no reflection.
    private static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0
        for byte in bytes {
            crc ^= UInt32(byte) << 24
            for _ in 0..<8 { crc = crc & 0x8000_0000 != 0 ? (crc << 1) ^ 0x04C1_1DB7 : crc << 1 }
        }
        return crc
    }
}

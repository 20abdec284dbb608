// Control side. The Xing/Info/VBRI tag in an MP3's first frame: whether the stream's length is
// declared, and how many bytes of stream it declares, so `info` can tell a cut file from a short one.

/// The length tag of an MPEG audio stream, read from the first frame after an optional ID3v2 tag.
struct MPEGLengthTag {
    /// File offset of the first frame (the one that carries the tag).
    var streamStart: Int
    /// Bytes of MPEG stream the tag declares, from the first frame on; nil when the tag has no
    /// byte count.
    var declaredStreamBytes: Int?

    /// Reads the tag; nil when the first frame carries none (the length is then mpg123's estimate).
    init?(_ reader: ByteReader) {
        var start = 0
        if let id3 = reader.bytes(at: 0, count: 10), id3.ascii(0, 3) == "ID3" {
            // Syncsafe size: 4 × 7 bits, plus the 10-byte header and an optional 10-byte footer.
            let size = (6..<10).reduce(0) { $0 << 7 | Int(id3[$1] & 0x7F) }
            start = 10 + size + (id3[5] & 0x10 != 0 ? 10 : 0)
        }
        let window = min(8_192, reader.fileSize - start)
        guard window > 4, let bytes = reader.bytes(at: start, count: window) else { return nil }
        // First frame sync: 11 set bits, and a layer field that is not the reserved 00.
        guard
            let sync = (0..<(bytes.count - 1)).first(where: {
                bytes[$0] == 0xFF && bytes[$0 + 1] & 0xE0 == 0xE0 && bytes[$0 + 1] & 0x06 != 0
            })
        else { return nil }
        // The tag follows the 4-byte header and the side information (9 to 32 bytes); VBRI sits
        // at a fixed 32 bytes after the header.
        let tagRange = (sync + 4)..<min(sync + 4 + 64, bytes.count - 4)
        guard let tag = tagRange.first(where: { ["Xing", "Info", "VBRI"].contains(bytes.ascii($0, 4)) }) else {
            return nil
        }
        streamStart = start + sync
        if bytes.ascii(tag, 4) == "VBRI" {
            // "VBRI", version (2), delay (2), quality (2), bytes (4), frames (4).
            declaredStreamBytes = tag + 14 <= bytes.count ? Int(bytes.uint32BE(tag + 10)) : nil
        } else {
            // "Xing"/"Info", flags (4): bit 0 a frame count (4) follows, bit 1 a byte count (4).
            guard tag + 8 <= bytes.count else {
                declaredStreamBytes = nil
                return
            }
            let flags = bytes.uint32BE(tag + 4)
            let bytesAt = tag + 8 + (flags & 1 != 0 ? 4 : 0)
            declaredStreamBytes = flags & 2 != 0 && bytesAt + 4 <= bytes.count ? Int(bytes.uint32BE(bytesAt)) : nil
        }
    }

    /// Bytes of stream the file holds from the first frame on, an ID3v1 tag at the end not counted.
    func presentStreamBytes(_ reader: ByteReader) -> Int {
        let hasID3v1 = reader.bytes(at: reader.fileSize - 128, count: 3)?.ascii(0, 3) == "TAG"
        return reader.fileSize - streamStart - (hasID3v1 ? 128 : 0)
    }
}

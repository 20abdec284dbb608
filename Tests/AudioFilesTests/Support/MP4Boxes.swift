// Test support (control side only). A tiny ISO base media (MP4) box walker for editing test files
// on purpose: find a box by its path, rename it, patch a field, add iTunes metadata.

import Foundation

/// Byte-level MP4 editing for tests. Every function returns nil (or leaves the bytes alone) when
/// the layout is not what it expects; tests then fail on their own `#require`.
enum MP4Boxes {
    /// A box found in a file: where its header starts, its total size and its payload start.
    struct Box {
        var offset: Int
        var size: Int
        var payload: Int
    }

    /// The first box along `path` (for example `["moov", "trak", "mdia", "mdhd"]`). Each step
    /// looks inside the previous box's payload (for `meta`, after its 4-byte version/flags).
    static func find(_ path: [String], in bytes: [UInt8]) -> Box? {
        var start = 0
        var end = bytes.count
        var found: Box?
        for type in path {
            guard let box = children(of: bytes, from: start, to: end).first(where: { $0.type == type })?.box else {
                return nil
            }
            found = box
            start = box.payload + (type == "meta" ? 4 : 0)
            end = box.offset + box.size
        }
        return found
    }

    /// The boxes directly inside `start..<end`.
    static func children(of bytes: [UInt8], from start: Int, to end: Int) -> [(type: String, box: Box)] {
        var result: [(String, Box)] = []
        var position = start
        while position + 8 <= end {
            var size = Int(readUInt32(bytes, at: position))
            let type = String(decoding: bytes[(position + 4)..<(position + 8)], as: UTF8.self)
            var header = 8
            if size == 1, position + 16 <= end {
                size = Int(readUInt64(bytes, at: position + 8))
                header = 16
            } else if size == 0 {
                size = end - position
            }
            guard size >= header, position + size <= end else { break }
            result.append((type, Box(offset: position, size: size, payload: position + header)))
            position += size
        }
        return result
    }

    /// Big-endian 32-bit value at `offset`.
    static func readUInt32(_ bytes: [UInt8], at offset: Int) -> UInt32 {
        bytes[offset..<(offset + 4)].reduce(0) { $0 << 8 | UInt32($1) }
    }

    /// Big-endian 64-bit value at `offset`.
    static func readUInt64(_ bytes: [UInt8], at offset: Int) -> UInt64 {
        bytes[offset..<(offset + 8)].reduce(0) { $0 << 8 | UInt64($1) }
    }

    /// Stores a big-endian 32-bit value at `offset`.
    static func writeUInt32(_ value: UInt32, into bytes: inout [UInt8], at offset: Int) {
        for index in 0..<4 { bytes[offset + index] = UInt8(truncatingIfNeeded: value >> (24 - 8 * index)) }
    }

    /// Renames the box along `path` (e.g. `edts` → `free`, so demuxers skip the edit list).
    static func rename(_ path: [String], to type: String, in bytes: inout [UInt8]) -> Bool {
        guard let box = find(path, in: bytes) else { return false }
        bytes.replaceSubrange((box.offset + 4)..<(box.offset + 8), with: Array(type.utf8))
        return true
    }

    /// Appends `moov/udta/meta/ilst/----` holding an iTunes freeform tag (`com.apple.iTunes`,
    /// `name`, UTF-8 `value`), the way iTunes stores iTunSMPB. Needs `moov` to be the last
    /// top-level box (FFmpeg's default layout), so no chunk offset moves.
    static func appendITunesTag(name: String, value: String, to bytes: inout [UInt8]) -> Bool {
        guard let moov = find(["moov"], in: bytes), moov.offset + moov.size == bytes.count,
            moov.payload == moov.offset + 8
        else { return false }
        func box(_ type: String, _ payload: [UInt8]) -> [UInt8] {
            var header = [UInt8](repeating: 0, count: 4)
            writeUInt32(UInt32(8 + payload.count), into: &header, at: 0)
            return header + Array(type.utf8) + payload
        }
        let zero: [UInt8] = [0, 0, 0, 0]
        let freeform = box(
            "----",
            box("mean", zero + Array("com.apple.iTunes".utf8)) + box("name", zero + Array(name.utf8))
                + box("data", [0, 0, 0, 1] + zero + Array(value.utf8)))
        let handler = box("hdlr", zero + zero + Array("mdirappl".utf8) + zero + zero + [0])
        let udta = box("udta", box("meta", zero + handler + box("ilst", freeform)))
        bytes += udta
        writeUInt32(UInt32(moov.size + udta.count), into: &bytes, at: moov.offset)
        return true
    }
}

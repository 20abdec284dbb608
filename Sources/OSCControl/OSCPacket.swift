// Control side. OSC 1.0 packets as values, with a strict decoder and an encoder (pure; no liblo).
// The service screens every UDP datagram with `OSCPacket.decode` before liblo dispatches it, so a
// malformed packet is answered with an /error to its sender instead of being dropped silently.

/// An OSC message: an address (or address pattern) and its arguments.
public struct OSCMessage: Sendable, Equatable, CustomStringConvertible {
    public var address: String
    public var arguments: [OSCArgument]

    public init(_ address: String, _ arguments: [OSCArgument] = []) {
        self.address = address
        self.arguments = arguments
    }

    /// The type tag string without the leading ','.
    public var typeTags: String { String(arguments.map(\.typeTag)) }

    public var description: String {
        ([address] + arguments.map(\.description)).joined(separator: " ")
    }
}

/// A message or a bundle of packets with a time tag.
public indirect enum OSCPacket: Sendable, Equatable {
    case message(OSCMessage)
    case bundle(OSCTimetag, [OSCPacket])

    /// Every message in order, with the time tag of the innermost bundle holding it (immediate for a
    /// bare message).
    public var messages: [(message: OSCMessage, timetag: OSCTimetag)] {
        switch self {
        case .message(let m): return [(m, .immediate)]
        case .bundle(let tag, let elements):
            return elements.flatMap { element -> [(message: OSCMessage, timetag: OSCTimetag)] in
                if case .message(let m) = element { return [(m, tag)] }
                return element.messages
            }
        }
    }
}

/// Why a packet was refused by `OSCPacket.decode`.
public struct OSCDecodeError: Error, Sendable, Equatable, CustomStringConvertible {
    public var message: String
    public var description: String { message }
    init(_ message: String) { self.message = message }
}

extension OSCPacket {
    /// Bundles nested deeper than this are refused (recursion bound for hostile input).
    public static let maximumBundleDepth = 8

    /// Decodes one packet, checking everything liblo 0.31 would check and a little more: 4-byte
    /// alignment, NUL-terminated padded strings, known type tags, argument sizes, blob lengths,
    /// bundle element sizes, nesting depth, and that the address starts with '/'.
    public static func decode(_ bytes: UnsafeRawBufferPointer) throws(OSCDecodeError) -> OSCPacket {
        var reader = Reader(bytes: bytes)
        let packet = try reader.packet(depth: 0)
        guard reader.offset == bytes.count else { throw OSCDecodeError("trailing bytes after the packet") }
        return packet
    }

    /// `decode` for an array of bytes.
    public static func decode(_ bytes: [UInt8]) throws(OSCDecodeError) -> OSCPacket {
        let result = bytes.withUnsafeBytes { raw in
            Result { () throws(OSCDecodeError) -> OSCPacket in try decode(raw) }
        }
        return try result.get()
    }

    /// The packet's OSC 1.0 encoding.
    public func encoded() -> [UInt8] {
        var out: [UInt8] = []
        encode(into: &out)
        return out
    }

    func encode(into out: inout [UInt8]) {
        switch self {
        case .message(let m):
            OSCPacket.appendString(m.address, to: &out)
            OSCPacket.appendString("," + m.typeTags, to: &out)
            for argument in m.arguments { OSCPacket.append(argument, to: &out) }
        case .bundle(let tag, let elements):
            OSCPacket.appendString("#bundle", to: &out)
            OSCPacket.appendUInt64(tag.rawValue, to: &out)
            for element in elements {
                var inner: [UInt8] = []
                element.encode(into: &inner)
                OSCPacket.appendUInt32(UInt32(inner.count), to: &out)
                out += inner
            }
        }
    }

    /// The encoded size of a message, without encoding it.
    public static func encodedSize(of message: OSCMessage) -> Int {
        var size = paddedSize(message.address.utf8.count) + paddedSize(message.arguments.count + 1)
        for argument in message.arguments {
            switch argument {
            case .int32, .float, .char, .midi: size += 4
            case .int64, .double, .timetag: size += 8
            case .string(let s), .symbol(let s): size += paddedSize(s.utf8.count)
            case .blob(let b): size += 4 + (b.count + 3) / 4 * 4
            case .bool, .null, .infinitum: break
            }
        }
        return size
    }

    /// Bytes a string takes: its UTF-8 bytes, a NUL, padding to a multiple of 4.
    static func paddedSize(_ length: Int) -> Int { (length / 4 + 1) * 4 }

    static func appendString(_ s: String, to out: inout [UInt8]) {
        out += Array(s.utf8)
        let pad = paddedSize(s.utf8.count) - s.utf8.count
        out += [UInt8](repeating: 0, count: pad)
    }

    static func appendUInt32(_ v: UInt32, to out: inout [UInt8]) {
        out += [UInt8(v >> 24), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)]
    }

    static func appendUInt64(_ v: UInt64, to out: inout [UInt8]) {
        appendUInt32(UInt32(v >> 32), to: &out)
        appendUInt32(UInt32(v & 0xFFFF_FFFF), to: &out)
    }

    static func append(_ argument: OSCArgument, to out: inout [UInt8]) {
        switch argument {
        case .int32(let v): appendUInt32(UInt32(bitPattern: v), to: &out)
        case .int64(let v): appendUInt64(UInt64(bitPattern: v), to: &out)
        case .float(let v): appendUInt32(v.bitPattern, to: &out)
        case .double(let v): appendUInt64(v.bitPattern, to: &out)
        case .string(let s), .symbol(let s): appendString(s, to: &out)
        case .blob(let b):
            appendUInt32(UInt32(b.count), to: &out)
            out += b
            out += [UInt8](repeating: 0, count: (4 - b.count % 4) % 4)
        case .timetag(let t): appendUInt64(t.rawValue, to: &out)
        case .char(let c): appendUInt32(UInt32(c), to: &out)
        case .midi(let a, let b, let c, let d): out += [a, b, c, d]
        case .bool, .null, .infinitum: break
        }
    }
}

/// A bounds-checked big-endian reader over one packet.
private struct Reader {
    let bytes: UnsafeRawBufferPointer
    var offset = 0
    var end: Int

    init(bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
        end = bytes.count
    }

    mutating func packet(depth: Int) throws(OSCDecodeError) -> OSCPacket {
        guard end - offset >= 4 else { throw OSCDecodeError("packet shorter than 4 bytes") }
        guard (end - offset) % 4 == 0 else {
            throw OSCDecodeError("packet size \(end - offset) is not a multiple of 4")
        }
        if bytes[offset] == UInt8(ascii: "#") {
            return try bundle(depth: depth)
        }
        return .message(try message())
    }

    mutating func bundle(depth: Int) throws(OSCDecodeError) -> OSCPacket {
        guard depth < OSCPacket.maximumBundleDepth else {
            throw OSCDecodeError("bundles nested deeper than \(OSCPacket.maximumBundleDepth)")
        }
        let marker = try string()
        guard marker == "#bundle" else { throw OSCDecodeError("a packet starting with '#' must be a #bundle") }
        let tag = OSCTimetag(rawValue: try uint64())
        var elements: [OSCPacket] = []
        while offset < end {
            let size = Int(try uint32())
            guard size > 0, size % 4 == 0, size <= end - offset else {
                throw OSCDecodeError("bundle element size \(size) is invalid (\(end - offset) bytes left)")
            }
            let savedEnd = end
            end = offset + size
            elements.append(try packet(depth: depth + 1))
            guard offset == end else { throw OSCDecodeError("bundle element has trailing bytes") }
            end = savedEnd
        }
        return .bundle(tag, elements)
    }

    mutating func message() throws(OSCDecodeError) -> OSCMessage {
        let address = try string()
        guard address.hasPrefix("/") else { throw OSCDecodeError("the address must start with '/'") }
        guard offset < end else {
            // OSC 1.0 allows a missing type tag string for old senders; liblo refuses it, and so do we.
            throw OSCDecodeError("missing type tag string")
        }
        let tags = try string()
        guard tags.first == "," else { throw OSCDecodeError("the type tag string must start with ','") }
        var arguments: [OSCArgument] = []
        for tag in tags.utf8.dropFirst() {
            arguments.append(try argument(tag))
        }
        return OSCMessage(address, arguments)
    }

    mutating func argument(_ tag: UInt8) throws(OSCDecodeError) -> OSCArgument {
        switch tag {
        case UInt8(ascii: "i"): return .int32(Int32(bitPattern: try uint32()))
        case UInt8(ascii: "h"): return .int64(Int64(bitPattern: try uint64()))
        case UInt8(ascii: "f"): return .float(Float(bitPattern: try uint32()))
        case UInt8(ascii: "d"): return .double(Double(bitPattern: try uint64()))
        case UInt8(ascii: "s"): return .string(try string())
        case UInt8(ascii: "S"): return .symbol(try string())
        case UInt8(ascii: "t"): return .timetag(OSCTimetag(rawValue: try uint64()))
        case UInt8(ascii: "c"): return .char(UInt8(truncatingIfNeeded: try uint32()))
        case UInt8(ascii: "m"):
            let v = try uint32()
            return .midi(UInt8(v >> 24), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF))
        case UInt8(ascii: "T"): return .bool(true)
        case UInt8(ascii: "F"): return .bool(false)
        case UInt8(ascii: "N"): return .null
        case UInt8(ascii: "I"): return .infinitum
        case UInt8(ascii: "b"):
            let size = Int(Int32(bitPattern: try uint32()))
            let padded = (size + 3) / 4 * 4
            guard size >= 0, padded <= end - offset else { throw OSCDecodeError("blob size \(size) is invalid") }
            let data = Array(UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + size)]))
            offset += padded
            return .blob(data)
        default:
            let shown = tag >= 0x20 && tag < 0x7F ? "'\(Character(UnicodeScalar(tag)))'" : "0x" + String(tag, radix: 16)
            throw OSCDecodeError("unsupported type tag \(shown)")
        }
    }

    mutating func uint32() throws(OSCDecodeError) -> UInt32 {
        guard end - offset >= 4 else { throw OSCDecodeError("argument data ends early") }
        var v: UInt32 = 0
        for i in 0..<4 { v = v << 8 | UInt32(bytes[offset + i]) }
        offset += 4
        return v
    }

    mutating func uint64() throws(OSCDecodeError) -> UInt64 {
        UInt64(try uint32()) << 32 | UInt64(try uint32())
    }

    /// A NUL-terminated string padded with NULs to a multiple of 4 bytes.
    mutating func string() throws(OSCDecodeError) -> String {
        var terminator = offset
        while terminator < end && bytes[terminator] != 0 { terminator += 1 }
        guard terminator < end else { throw OSCDecodeError("string is not NUL-terminated") }
        let padded = offset + OSCPacket.paddedSize(terminator - offset)
        guard padded <= end else { throw OSCDecodeError("string padding runs past the end") }
        for i in terminator..<padded where bytes[i] != 0 {
            throw OSCDecodeError("string padding must be NUL bytes")
        }
        let text = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[offset..<terminator]), as: UTF8.self)
        offset = padded
        return text
    }
}

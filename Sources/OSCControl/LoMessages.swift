// OSC thread only. Conversions between liblo's C values and Swift values, and owned liblo addresses.
import CLibLo
import Glibc

/// A liblo address owned by Swift (freed on deinit). Used only on the OSC thread; `@unchecked Sendable`
/// only so a reply target can ride along with a job on the worker queue and come back.
final class LoAddress: @unchecked Sendable {
    // @unchecked: a liblo handle, used on the OSC thread only; it rides along with a job and comes back.
    let raw: lo_address
    /// LO_UDP or LO_TCP.
    let proto: Int32
    /// "osc.udp://host:port/" as liblo prints it.
    let url: String

    private init(raw: lo_address) {
        self.raw = raw
        proto = lo_address_get_protocol(raw)
        if let cURL = lo_address_get_url(raw) {
            url = String(cString: cURL)
            free(cURL)
        } else {
            url = ""
        }
    }

    deinit { lo_address_free(raw) }

    /// A UDP address from a numeric host and port.
    static func udp(host: String, port: Int) -> LoAddress? {
        guard let raw = lo_address_new(host, String(port)) else { return nil }
        return LoAddress(raw: raw)
    }

    /// An address from an OSC URL (`osc.udp://host:port/`, `osc.tcp://…`). Nil when liblo cannot parse it,
    /// the protocol is neither UDP nor TCP, the port is not 1…65535 or the host does not resolve (a
    /// reply sent there would be lost, and with it every later reply routed to it).
    static func url(_ text: String) -> LoAddress? {
        let proto = lo_url_get_protocol_id(text)
        guard proto == LO_UDP || proto == LO_TCP else { return nil }
        guard let raw = lo_address_new_from_url(text) else { return nil }
        let address = LoAddress(raw: raw)
        guard let host = lo_address_get_hostname(raw), host.pointee != 0,
            let portText = lo_address_get_port(raw), let port = Int(String(cString: portText)),
            (1...65_535).contains(port)
        else { return nil }
        var hints = addrinfo()
        hints.ai_socktype = proto == LO_UDP ? Int32(SOCK_DGRAM.rawValue) : Int32(SOCK_STREAM.rawValue)
        var found: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, portText, &hints, &found) == 0, found != nil else { return nil }
        freeaddrinfo(found)
        return address
    }
}

enum LoValues {
    /// Builds a liblo message; the caller frees it with `lo_message_free`.
    static func message(_ arguments: [OSCArgument]) -> lo_message {
        let m = lo_message_new()!
        for argument in arguments {
            switch argument {
            case .int32(let v): lo_message_add_int32(m, v)
            case .int64(let v): lo_message_add_int64(m, v)
            case .float(let v): lo_message_add_float(m, v)
            case .double(let v): lo_message_add_double(m, v)
            case .string(let s): lo_message_add_string(m, s)
            case .symbol(let s): lo_message_add_symbol(m, s)
            case .blob(let bytes):
                // liblo cannot make an empty blob (lo_blob_new(0) is NULL, and adding NULL crashes while
                // serialising), so an empty blob goes out as nil.
                guard !bytes.isEmpty,
                    let blob = bytes.withUnsafeBytes({ lo_blob_new(Int32(bytes.count), $0.baseAddress) })
                else {
                    lo_message_add_nil(m)
                    continue
                }
                lo_message_add_blob(m, blob)
                lo_blob_free(blob)
            case .timetag(let t): lo_message_add_timetag(m, lo_timetag(sec: t.seconds, frac: t.fraction))
            case .char(let c): lo_message_add_char(m, CChar(bitPattern: c))
            case .midi(let a, let b, let c, let d):
                var bytes: [UInt8] = [a, b, c, d]
                lo_message_add_midi(m, &bytes)
            case .bool(let b):
                if b { lo_message_add_true(m) } else { lo_message_add_false(m) }
            case .null: lo_message_add_nil(m)
            case .infinitum: lo_message_add_infinitum(m)
            }
        }
        return m
    }

    /// The arguments of a handler call, or nil when a type tag is unknown.
    static func arguments(
        types: UnsafePointer<CChar>?, argv: UnsafeMutablePointer<UnsafeMutablePointer<lo_arg>?>?, argc: Int32
    ) -> [OSCArgument]? {
        guard argc > 0 else { return [] }
        guard let types, let argv else { return nil }
        var result: [OSCArgument] = []
        result.reserveCapacity(Int(argc))
        for i in 0..<Int(argc) {
            let tag = UInt8(bitPattern: types[i])
            if tag == 0 { return nil }
            let arg = argv[i]
            func text() -> String? {
                guard let arg else { return nil }
                return String(cString: UnsafeRawPointer(arg).assumingMemoryBound(to: CChar.self))
            }
            switch tag {
            // liblo allocates each argument at its own size (4 bytes for i, f, c, m), smaller than the
            // lo_arg union, so each is read at its own width rather than through `pointee`.
            case UInt8(ascii: "i"): guard let arg else { return nil }; result.append(.int32(load(arg, Int32.self)))
            case UInt8(ascii: "h"): guard let arg else { return nil }; result.append(.int64(load(arg, Int64.self)))
            case UInt8(ascii: "f"): guard let arg else { return nil }; result.append(.float(load(arg, Float.self)))
            case UInt8(ascii: "d"): guard let arg else { return nil }; result.append(.double(load(arg, Double.self)))
            case UInt8(ascii: "s"): guard let s = text() else { return nil }; result.append(.string(s))
            case UInt8(ascii: "S"): guard let s = text() else { return nil }; result.append(.symbol(s))
            case UInt8(ascii: "c"):
                guard let arg else { return nil }
                result.append(.char(UInt8(truncatingIfNeeded: load(arg, Int32.self))))
            case UInt8(ascii: "t"):
                guard let arg else { return nil }
                result.append(
                    .timetag(
                        OSCTimetag(
                            seconds: load(arg, UInt32.self),
                            fraction: UnsafeRawPointer(arg).loadUnaligned(fromByteOffset: 4, as: UInt32.self))))
            case UInt8(ascii: "m"):
                guard let arg else { return nil }
                let m = UnsafeRawPointer(arg)
                result.append(
                    .midi(
                        m.load(fromByteOffset: 0, as: UInt8.self), m.load(fromByteOffset: 1, as: UInt8.self),
                        m.load(fromByteOffset: 2, as: UInt8.self), m.load(fromByteOffset: 3, as: UInt8.self)))
            case UInt8(ascii: "b"):
                guard let arg else { return nil }
                let size = Int(loshim_arg_blob_size(arg))
                guard size >= 0, size <= 1 << 20, let data = loshim_arg_blob_data(arg) else { return nil }
                result.append(.blob(Array(UnsafeBufferPointer(start: data, count: size))))
            case UInt8(ascii: "T"): result.append(.bool(true))
            case UInt8(ascii: "F"): result.append(.bool(false))
            case UInt8(ascii: "N"): result.append(.null)
            case UInt8(ascii: "I"): result.append(.infinitum)
            default: return nil
            }
        }
        return result
    }

    /// One argument's value at its own width.
    private static func load<T>(_ arg: UnsafeMutablePointer<lo_arg>, _ type: T.Type) -> T {
        UnsafeRawPointer(arg).loadUnaligned(as: T.self)
    }
}

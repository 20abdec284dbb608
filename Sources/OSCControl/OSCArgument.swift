// Control side. One OSC argument as a Swift value, and its conversion to engine parameter values.
import AudioGraph

/// An OSC 1.0 argument (with the common extended types liblo supports).
public enum OSCArgument: Sendable, Hashable, CustomStringConvertible {
    case int32(Int32)
    case int64(Int64)
    case float(Float)
    case double(Double)
    case string(String)
    case symbol(String)
    case blob([UInt8])
    case timetag(OSCTimetag)
    case char(UInt8)
    case midi(UInt8, UInt8, UInt8, UInt8)
    case bool(Bool)
    case null
    case infinitum

    /// The OSC type tag character.
    public var typeTag: Character {
        switch self {
        case .int32: return "i"
        case .int64: return "h"
        case .float: return "f"
        case .double: return "d"
        case .string: return "s"
        case .symbol: return "S"
        case .blob: return "b"
        case .timetag: return "t"
        case .char: return "c"
        case .midi: return "m"
        case .bool(let b): return b ? "T" : "F"
        case .null: return "N"
        case .infinitum: return "I"
        }
    }

    public var description: String {
        switch self {
        case .int32(let v): return "i:\(v)"
        case .int64(let v): return "h:\(v)"
        case .float(let v): return "f:\(v)"
        case .double(let v): return "d:\(v)"
        case .string(let v): return "s:\"\(OSCText.sanitized(v, limit: 64))\""
        case .symbol(let v): return "S:\"\(OSCText.sanitized(v, limit: 64))\""
        case .blob(let v): return "b:<\(v.count) bytes>"
        case .timetag(let t): return "t:\(t)"
        case .char(let c): return "c:\(c)"
        case .midi(let a, let b, let c, let d): return "m:\(a) \(b) \(c) \(d)"
        case .bool(let b): return b ? "T" : "F"
        case .null: return "N"
        case .infinitum: return "I"
        }
    }

    /// A string or symbol argument's text.
    public var stringValue: String? {
        switch self {
        case .string(let s), .symbol(let s): return s
        default: return nil
        }
    }

    /// A whole number: int32/int64, or a float/double with no fractional part (Pd sends floats).
    public var integerValue: Int64? {
        switch self {
        case .int32(let v): return Int64(v)
        case .int64(let v): return v
        case .float(let v) where v.isFinite && v.rounded() == v && abs(v) < 9e15: return Int64(v)
        case .double(let v) where v.isFinite && v.rounded() == v && abs(v) < 9e15: return Int64(v)
        default: return nil
        }
    }

    /// Any number as a Double. A 32-bit float is taken as the decimal it was written from (see
    /// `decimal(_:)`).
    public var doubleValue: Double? {
        switch self {
        case .int32(let v): return Double(v)
        case .int64(let v): return Double(v)
        case .float(let v): return Self.decimal(v)
        case .double(let v): return v
        default: return nil
        }
    }

    /// True/false from T/F or a number equal to 1/0.
    public var boolValue: Bool? {
        switch self {
        case .bool(let b): return b
        default:
            guard let d = doubleValue, d == 0 || d == 1 else { return nil }
            return d == 1
        }
    }

    /// The engine value this argument stands for; `ParameterSpec.coerce` then converts between int and
    /// float and accepts 0/1 for booleans. Nil for types no parameter takes (blob, timetag, MIDI, nil…).
    public var parameterValue: ParameterValue? {
        switch self {
        case .int32(let v): return .int(Int(v))
        case .int64(let v): return .int(Int(v))
        case .float(let v): return .float(Self.decimal(v))
        case .double(let v): return .float(v)
        case .string(let s), .symbol(let s): return .string(s)
        case .bool(let b): return .bool(b)
        case .char(let c): return .string(String(UnicodeScalar(c)))
        case .blob, .timetag, .midi, .null, .infinitum: return nil
        }
    }

    /// The double nearest the shortest decimal that reads back as `value`: 0.2 for the float an OSC
    /// client sent when its user typed 0.2, not 0.20000000298023224. A value set over OSC is then the
    /// same as the one a patch gives with the same text, and a saved patch writes what was sent
    /// (docs/DECISIONS.md).
    static func decimal(_ value: Float) -> Double {
        guard value.isFinite else { return Double(value) }
        return Double(value.description) ?? Double(value)
    }

    /// The OSC argument that reports an engine value.
    public init(_ value: ParameterValue) {
        switch value {
        case .float(let v): self = .float(Float(v))
        case .int(let v): self = v >= Int(Int32.min) && v <= Int(Int32.max) ? .int32(Int32(v)) : .int64(Int64(v))
        case .bool(let b): self = .bool(b)
        case .string(let s): self = .string(s)
        }
    }
}

/// Text helpers for replies: addresses and strings from the network may hold any bytes.
enum OSCText {
    /// `text` with control and non-ASCII characters replaced by '?', cut to `limit` characters.
    static func sanitized(_ text: String, limit: Int = 200) -> String {
        var out = ""
        var count = 0
        for scalar in text.unicodeScalars {
            if count >= limit {
                out += "…"
                break
            }
            out.unicodeScalars.append(scalar.value >= 0x20 && scalar.value < 0x7F ? scalar : "?")
            count += 1
        }
        return out
    }

    /// True when `path` is an OSC address pattern as liblo sees it (it fans these out to every match).
    static func isPattern(_ path: String) -> Bool {
        path.utf8.contains {
            $0 == 0x20 || $0 == 0x23 || $0 == 0x2A || $0 == 0x2C || $0 == 0x3F
                || $0 == 0x5B || $0 == 0x5D || $0 == 0x7B || $0 == 0x7D
        }
    }
}

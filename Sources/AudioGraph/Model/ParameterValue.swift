// Control side. A parameter value as it arrives from a patch or an OSC message.

/// A loosely typed value; `ParameterSpec.coerce` turns it into the parameter's type.
public enum ParameterValue: Sendable, Equatable, Hashable, CustomStringConvertible {
    case float(Double)
    case int(Int)
    case bool(Bool)
    case string(String)

    public var description: String {
        switch self {
        case .float(let v): return "\(v)"
        case .int(let v): return "\(v)"
        case .bool(let v): return v ? "true" : "false"
        case .string(let v): return "\"\(v)\""
        }
    }

    /// The value as a Double when it is numeric (bools count as 0/1).
    public var doubleValue: Double? {
        switch self {
        case .float(let v): return v
        case .int(let v): return Double(v)
        case .bool(let v): return v ? 1 : 0
        case .string: return nil
        }
    }

    /// The value as a String, if it is one.
    public var stringValue: String? {
        if case .string(let s) = self { return s }
        return nil
    }

    /// The value as a Bool (true/false, or a number equal to 0 or 1).
    public var boolValue: Bool? {
        switch self {
        case .bool(let v): return v
        case .int(let v) where v == 0 || v == 1: return v == 1
        case .float(let v) where v == 0 || v == 1: return v == 1
        default: return nil
        }
    }

    /// The value as an Int (an int, or a float with no fractional part).
    public var intValue: Int? {
        switch self {
        case .int(let v): return v
        case .float(let v) where v.isFinite && v.rounded() == v && abs(v) < 9e15: return Int(v)
        default: return nil
        }
    }
}

// Control side. The value of one node parameter in a patch: a scalar or a flat list of scalars.

/// A parameter value as written in a patch file.
///
/// The parser resolves plain YAML scalars with the **YAML 1.2 core schema**, not YAML 1.1:
/// - `true`/`True`/`TRUE`/`false`/`False`/`FALSE` are ``bool(_:)``;
/// - decimal integers (`-1`, `+7`), `0x1F` and `0o17` are ``int(_:)``;
/// - `1.5`, `.5`, `1e-3`, `.inf`, `-.inf`, `.nan` are ``double(_:)``;
/// - everything else, including `yes`, `no`, `on`, `off`, `y`, `n`, is ``string(_:)``;
/// - quoted scalars, block scalars (`|`, `>`) and anything tagged `!!str` are always strings.
///
/// The accessors below then coerce leniently, so a consumer that expects a boolean still accepts
/// the YAML 1.1 spellings (see ``asBool``) while the document keeps exactly what was written.
/// Lists hold scalars only; the parser rejects nested lists and mappings.
///
/// Equality is structural: `.int(1) != .double(1)`, and `.double(.nan)` is not equal to itself.
public enum PatchValue: Sendable, Hashable {
    case bool(Bool)
    case int(Int)
    case double(Double)
    case string(String)
    case list([PatchValue])

    /// The value as a `Double`: `.double` as is, `.int` converted; `nil` for anything else.
    public var asDouble: Double? {
        switch self {
        case .double(let value): value
        case .int(let value): Double(value)
        default: nil
        }
    }

    /// The value as an `Int`: `.int` as is, or a `.double` with no fractional part that fits in
    /// `Int` (so `48000.0` from a JSON writer is accepted); `nil` for anything else.
    public var asInt: Int? {
        switch self {
        case .int(let value):
            return value
        case .double(let value):
            // Int's range is [-2^63, 2^63); both bounds are exact doubles.
            guard value.isFinite, value.rounded() == value, value >= -0x1p63, value < 0x1p63 else { return nil }
            return Int(value)
        default:
            return nil
        }
    }

    /// The value as a `Bool`: `.bool` as is, or a `.string` spelled as a YAML 1.1 boolean:
    /// `true`/`false`, `yes`/`no`, `on`/`off`, each in lower case, Capitalized or UPPER case.
    /// `y`/`n` and numbers (`0`, `1`) are **not** booleans. Returns `nil` for anything else.
    public var asBool: Bool? {
        switch self {
        case .bool(let value):
            return value
        case .string(let text):
            return Self.yaml11Boolean(text)
        default:
            return nil
        }
    }

    /// The text of a `.string`; `nil` for anything else (numbers are not converted).
    public var asString: String? {
        if case .string(let text) = self { return text }
        return nil
    }

    /// The elements of a `.list`; `nil` for a scalar.
    public var asList: [PatchValue]? {
        if case .list(let elements) = self { return elements }
        return nil
    }

    /// A short phrase naming the value's type for messages: "a boolean", "an integer", "a number",
    /// "a string" or "a list".
    public var typeDescription: String {
        switch self {
        case .bool: "a boolean"
        case .int: "an integer"
        case .double: "a number"
        case .string: "a string"
        case .list: "a list"
        }
    }

    /// The YAML 1.1 boolean spellings that ``asBool`` accepts, without `y`/`n`.
    static func yaml11Boolean(_ text: String) -> Bool? {
        switch text {
        case "true", "True", "TRUE", "yes", "Yes", "YES", "on", "On", "ON": true
        case "false", "False", "FALSE", "no", "No", "NO", "off", "Off", "OFF": false
        default: nil
        }
    }
}

extension PatchValue: ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral,
    ExpressibleByStringLiteral, ExpressibleByArrayLiteral
{
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(integerLiteral value: Int) { self = .int(value) }
    public init(floatLiteral value: Double) { self = .double(value) }
    public init(stringLiteral value: String) { self = .string(value) }
    public init(arrayLiteral elements: PatchValue...) { self = .list(elements) }
}

extension PatchValue: CustomStringConvertible {
    /// The value as it would appear in a YAML flow context: `true`, `-1`, `0.5`, `"text"`, `[1, 2]`.
    public var description: String {
        switch self {
        case .bool(let value): String(value)
        case .int(let value): String(value)
        case .double(let value): YAMLScalarFormatter.double(value)
        case .string(let text): YAMLScalarFormatter.string(text)
        case .list(let elements): "[" + elements.map(\.description).joined(separator: ", ") + "]"
        }
    }
}

// Control side. A YAML scalar resolved with the YAML 1.2 core schema (null, bool, int, float, string).

/// A scalar's typed value under the YAML 1.2 core schema.
///
/// Yams' default resolver follows YAML 1.1, where `yes`, `no`, `on` and `off` are booleans (the
/// "Norway problem"). Patches use YAML 1.2 instead, so this module resolves scalars itself.
enum YAMLScalar: Equatable {
    case null
    case bool(Bool)
    case int(Int)
    case double(Double)
    case string(String)

    /// Resolves `text`. A non-plain scalar (quoted, `|`, `>`, or tagged `!!str` / `!`) is always a
    /// string; a plain one follows the YAML 1.2 core schema (JSON's `true`, `false`, `null` and numbers
    /// included). An integer too large for `Int` becomes a `Double`.
    static func resolve(_ text: String, isPlain: Bool) -> YAMLScalar {
        guard isPlain else { return .string(text) }
        switch text {
        case "", "~", "null", "Null", "NULL": return .null
        case "true", "True", "TRUE": return .bool(true)
        case "false", "False", "FALSE": return .bool(false)
        case ".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF": return .double(.infinity)
        case "-.inf", "-.Inf", "-.INF": return .double(-.infinity)
        case ".nan", ".NaN", ".NAN": return .double(.nan)
        default: break
        }
        let scalars = Array(text.unicodeScalars)
        if isDecimalInteger(scalars) {
            if let value = Int(text) { return .int(value) }
            if let value = Double(text) { return .double(value) }
        }
        if scalars.count > 2, scalars[0] == "0", scalars[1] == "x" || scalars[1] == "o" {
            let radix = scalars[1] == "x" ? 16 : 8
            let digits = scalars[2...]
            // `Int(_:radix:)` would also take a sign; YAML 1.2 allows none here.
            if digits.allSatisfy({ Int(String($0), radix: radix) != nil }),
                let value = Int(String(String.UnicodeScalarView(digits)), radix: radix)
            {
                return .int(value)
            }
        }
        if isDecimalFloat(scalars), let value = Double(text) {
            return .double(value)
        }
        return .string(text)
    }

    /// `[-+]? [0-9]+`
    private static func isDecimalInteger(_ scalars: [Unicode.Scalar]) -> Bool {
        var digits = scalars[...]
        if let first = digits.first, first == "-" || first == "+" { digits = digits.dropFirst() }
        return !digits.isEmpty && digits.allSatisfy(isDigit)
    }

    /// `[-+]? ( \. [0-9]+ | [0-9]+ ( \. [0-9]* )? ) ( [eE] [-+]? [0-9]+ )?`
    private static func isDecimalFloat(_ scalars: [Unicode.Scalar]) -> Bool {
        var index = 0
        func skipDigits() -> Int {
            let start = index
            while index < scalars.count, isDigit(scalars[index]) { index += 1 }
            return index - start
        }
        if index < scalars.count, scalars[index] == "-" || scalars[index] == "+" { index += 1 }
        let integerDigits = skipDigits()
        var fractionDigits = 0
        if index < scalars.count, scalars[index] == "." {
            index += 1
            fractionDigits = skipDigits()
        }
        guard integerDigits > 0 || fractionDigits > 0 else { return false }
        if index < scalars.count, scalars[index] == "e" || scalars[index] == "E" {
            index += 1
            if index < scalars.count, scalars[index] == "-" || scalars[index] == "+" { index += 1 }
            guard skipDigits() > 0 else { return false }
        }
        return index == scalars.count
    }

    private static func isDigit(_ scalar: Unicode.Scalar) -> Bool {
        ("0"..."9").contains(scalar)
    }
}

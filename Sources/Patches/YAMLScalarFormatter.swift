// Control side. Writes strings and numbers as YAML scalars that read back as the same value.

/// Formats scalars for ``PatchWriter`` so that ``YAMLScalar/resolve(_:isPlain:)`` reads them back
/// unchanged (and so that YAML 1.1 tools read them the same way too).
enum YAMLScalarFormatter {
    /// Words that some YAML reader would take for something other than a string.
    private static let reservedWords: Set<String> = [
        "true", "false", "yes", "no", "on", "off", "y", "n", "null", "~"
    ]

    /// `text` plain when that is unambiguous (`tone`, `sounds/tone.wav`, `p1`), otherwise
    /// double-quoted with escapes.
    static func string(_ text: String) -> String {
        isPlainSafe(text) ? text : quoted(text)
    }

    /// A double that reads back as a double: `0.5`, `440.0`, `1e-05`, `.inf`, `-.inf`, `.nan`.
    static func double(_ value: Double) -> String {
        if value.isNaN { return ".nan" }
        if value.isInfinite { return value < 0 ? "-.inf" : ".inf" }
        return String(value)
    }

    /// Plain only for `[A-Za-z_/][A-Za-z0-9_./-]*` that is not a reserved word: such text is never
    /// a number, a boolean, null or YAML syntax, in YAML 1.1 or 1.2, in block or flow context.
    private static func isPlainSafe(_ text: String) -> Bool {
        guard let first = text.unicodeScalars.first, !reservedWords.contains(text.lowercased()) else { return false }
        switch first {
        case "a"..."z", "A"..."Z", "_", "/": break
        default: return false
        }
        return text.unicodeScalars.allSatisfy { scalar in
            switch scalar {
            case "a"..."z", "A"..."Z", "0"..."9", "_", ".", "/", "-": true
            default: false
            }
        }
    }

    /// A YAML double-quoted scalar; control characters and the YAML line breaks are escaped.
    fileprivate static func quoted(_ text: String) -> String {
        var result = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\t": result += "\\t"
            case "\r": result += "\\r"
            case "\0": result += "\\0"
            case "\u{20}"..."\u{7E}":
                result.unicodeScalars.append(scalar)
            case "\u{0}"..."\u{1F}", "\u{7F}"..."\u{9F}", "\u{2028}", "\u{2029}", "\u{FEFF}", "\u{FFFE}", "\u{FFFF}":
                result += "\\u" + hex(scalar.value, width: 4)
            default:
                result.unicodeScalars.append(scalar)
            }
        }
        return result + "\""
    }

    private static func hex(_ value: UInt32, width: Int) -> String {
        let digits = String(value, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, width - digits.count)) + digits
    }
}

extension YAMLScalarFormatter {
    /// `text` double-quoted with escapes, for showing a value inside a message.
    static func quotedForMessage(_ text: String) -> String {
        quoted(text)
    }
}

// Control side. The rule for the names of nodes, buffers and recorders, and its messages.

/// The one name rule: 1–64 characters, each an ASCII letter, digit, `_`, `-` or `.` (names appear in OSC
/// addresses such as `/node/<name>/<param>`). The engine and OSC refuse names with ``refusal(_:what:)``;
/// the patch reader is handed ``problem(_:what:)`` (SoundstageKit's `PatchNameRule.engine`), so a patch's
/// names are refused with their line and column by the same rule.
public enum NodeName {
    /// The longest name accepted, in characters (each one ASCII, so also in bytes).
    public static let maximumLength = 64

    /// Whether `name` follows the rule (``problem(_:what:)`` finds nothing).
    public static func isValid(_ name: String) -> Bool {
        problem(name, what: "name") == nil
    }

    /// Whether `scalar` may appear in a name.
    public static func isNameCharacter(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar {
        case "a"..."z", "A"..."Z", "0"..."9", "_", "-", ".": true
        default: false
        }
    }

    /// Why `name` breaks the rule, as a message about `what` (`node name`, `buffer name`…) naming the
    /// first offending character or the length; nil when it follows the rule. The patch reader's wording.
    public static func problem(_ name: String, what: String) -> String? {
        if name.isEmpty {
            return "\(what) must not be empty"
        }
        if let bad = name.unicodeScalars.first(where: { !isNameCharacter($0) }) {
            let shown = bad == " " ? "a space" : "'\(bad.escaped(asASCII: false))'"
            return "invalid \(what) '\(name)': only letters, digits, '_', '-' and '.' are allowed (found \(shown))"
        }
        let length = name.unicodeScalars.count
        if length > maximumLength {
            return "\(what) '\(name.prefix(20))…' is \(length) characters long; the limit is \(maximumLength)"
        }
        // Buffers have no addresses of their own beside those methods.
        if reservedNames.contains(name) && !what.hasPrefix("buffer") { return reservation(name, what: what) }
        return nil
    }

    /// Whether `name` may name a buffer (the rule without the reserved names).
    public static func isValidBufferName(_ name: String) -> Bool {
        problem(name, what: "buffer name") == nil
    }

    /// Names OSC gives its own methods beside the named ones (`/node/list`, `/recorder/new`…): a node
    /// or recorder of that name could not be told from the method.
    public static let reservedNames: Set<String> = ["new", "free", "list", "kinds", "load"]

    private static func reservation(_ name: String, what: String) -> String {
        "'\(name)' cannot be a \(what): OSC has a method of that name (/node/\(name), /recorder/\(name)…); "
            + "choose another"
    }

    /// The refusal of a name: `'x' is not a valid node name (letters, digits, '_', '-', '.'; at most 64
    /// characters)`. `shown` is the name as it may be printed (OSC sanitizes it); `what` names the thing
    /// (`node name`, `buffer name`, `recorder name`).
    public static func refusal(_ shown: String, what: String = "node name") -> String {
        if reservedNames.contains(shown) && !what.hasPrefix("buffer") { return reservation(shown, what: what) }
        return "'\(shown)' is not a valid \(what) (letters, digits, '_', '-', '.'; at most \(maximumLength) characters)"
    }

    /// ``refusal(_:what:)`` as the engine's `.invalidName` error.
    public static func invalidNameError(_ name: String, what: String = "node name") -> EngineError {
        EngineError(.invalidName, refusal(name, what: what))
    }
}

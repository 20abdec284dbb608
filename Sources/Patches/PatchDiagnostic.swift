// Control side. One message about a patch file, printed the way compilers print theirs.

/// A message about a place in a patch file.
///
/// ``description`` reads `path:line:column: error: message`, the form editors and terminals
/// recognise; parts that are unknown are left out (`line:column: error: …`, `path: error: …`,
/// `error: …`).
public struct PatchDiagnostic: Sendable, Equatable, CustomStringConvertible {
    /// How serious the message is.
    public enum Severity: String, Sendable {
        case error, warning, note
    }

    /// The patch file, as given to the parser; `nil` for text without a file.
    public var path: String?
    /// Where the problem is; `nil` when it concerns the file as a whole (for example unreadable).
    public var location: SourceLocation?
    /// One line naming the problem (no location, no trailing period).
    public var message: String
    /// Severity; the parser only reports errors.
    public var severity: Severity

    /// Creates a diagnostic.
    public init(path: String? = nil, location: SourceLocation? = nil, message: String, severity: Severity = .error) {
        self.path = path
        self.location = location
        self.message = message
        self.severity = severity
    }

    /// `path:line:column: error: message`, leaving out the parts that are unknown.
    public var description: String {
        var prefix = ""
        if let path { prefix += path + ":" }
        if let location { prefix += "\(location.line):\(location.column):" }
        return (prefix.isEmpty ? "" : prefix + " ") + "\(severity.rawValue): \(message)"
    }
}

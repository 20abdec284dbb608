// Control side. The error thrown when a patch file cannot be read into a document.

/// Everything wrong with a patch, found in one pass. Never empty.
public struct PatchParseError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The problems, ordered by location (file-wide ones first).
    public var diagnostics: [PatchDiagnostic]

    /// Creates an error from its diagnostics.
    public init(diagnostics: [PatchDiagnostic]) {
        self.diagnostics = diagnostics
    }

    /// One diagnostic per line.
    public var description: String {
        diagnostics.map(\.description).joined(separator: "\n")
    }
}

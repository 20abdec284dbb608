// Control side. The error thrown when a patch file cannot be read into a document.

/// Everything wrong with a patch, found in one pass. Never empty.
public struct PatchParseError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The problems, ordered by location (file-wide ones first).
    public var diagnostics: [PatchDiagnostic]
    /// After schema errors (not a syntax error): the document with each bad entry left out, so that
    /// `check` can go on to the engine's checks of the rest.
    public var partialDocument: PatchDocument?
    /// Names of the buffers, nodes and recorders left out of `partialDocument`: what the rest says of
    /// them follows from the errors already reported.
    public var leftOutNames: Set<String>

    /// Creates an error from its diagnostics.
    public init(diagnostics: [PatchDiagnostic], partialDocument: PatchDocument? = nil, leftOutNames: Set<String> = []) {
        self.diagnostics = diagnostics
        self.partialDocument = partialDocument
        self.leftOutNames = leftOutNames
    }

    /// One diagnostic per line.
    public var description: String {
        diagnostics.map(\.description).joined(separator: "\n")
    }

    /// Two errors are the same when they report the same problems.
    public static func == (lhs: PatchParseError, rhs: PatchParseError) -> Bool {
        lhs.diagnostics == rhs.diagnostics
    }
}

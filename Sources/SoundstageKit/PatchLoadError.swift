// Control side. Every problem found while loading a patch, each with its place in the file.
import Patches

/// Loading failed; `diagnostics` lists every problem found (compiler-style descriptions).
public struct PatchLoadError: Error, Sendable, CustomStringConvertible {
    public var diagnostics: [PatchDiagnostic]

    public init(diagnostics: [PatchDiagnostic]) { self.diagnostics = diagnostics }

    public var description: String { diagnostics.map(\.description).joined(separator: "\n") }
}

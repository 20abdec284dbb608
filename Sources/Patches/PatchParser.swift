// Control side. Entry point: patch text or file → PatchDocument, or every error found in one pass.

import Foundation
import Yams

/// Reads patch files (YAML, or JSON, which is valid YAML) into ``PatchDocument``s.
///
/// Checks syntax and schema only: key names, types, ranges, names (with the ``PatchNameRule`` the
/// caller passes: the engine's), endpoint syntax, unique node and buffer names. It knows nothing else
/// about the engine. All errors carry a location where one exists, and as many as possible are
/// reported in one pass; a YAML syntax error stops the pass, since nothing after it can be trusted.
///
/// Plain scalars are resolved with the YAML 1.2 core schema (see ``PatchValue``). Anchors and
/// aliases are expanded by Yams; merge keys (`<<`) are not supported and report as unknown keys.
public enum PatchParser {
    /// Parses patch text. `path` is only used in diagnostics and stored in the document; `names` is the
    /// rule node, buffer and recorder names must follow.
    ///
    /// - Throws: ``PatchParseError`` with every problem found, ordered by location.
    public static func parse(text: String, path: String? = nil, names: PatchNameRule) throws(PatchParseError)
        -> PatchDocument
    {
        let composed: DuplicateKeyTolerantComposer.Result
        do {
            composed = try DuplicateKeyTolerantComposer.compose(text)
        } catch let duplicate as DuplicateKeyTolerantComposer.UnresolvedDuplicate {
            throw PatchParseError(diagnostics: [
                PatchDiagnostic(path: path, location: duplicate.location, message: "duplicate key '\(duplicate.key)'")
            ])
        } catch {
            throw PatchParseError(diagnostics: [syntaxDiagnostic(for: error, text: text, path: path)])
        }
        guard let root = composed.root, !PatchSchemaReader.isNull(root) else {
            throw PatchParseError(diagnostics: [
                PatchDiagnostic(
                    path: path, location: SourceLocation(line: 1, column: 1),
                    message: "the patch is empty; it needs at least 'version: 1'")
            ])
        }
        var reader = PatchSchemaReader(path: path, keyOverrides: composed.keyOverrides, names: names)
        let document = reader.readDocument(root)
        guard reader.diagnostics.isEmpty else {
            throw PatchParseError(
                diagnostics: ordered(reader.diagnostics), partialDocument: document, leftOutNames: reader.leftOutNames)
        }
        return document
    }

    /// Reads and parses the file at `path` (UTF-8). The path is kept in the document and the
    /// diagnostics as given; relative `file:` paths in the patch are relative to its folder.
    ///
    /// - Throws: ``PatchParseError``; a file that cannot be read gives one diagnostic naming it,
    ///   without location.
    public static func parse(contentsOf path: String, names: PatchNameRule) throws(PatchParseError) -> PatchDocument {
        var isDirectory: ObjCBool = false
        let problem: String?
        var text = ""
        if !FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) {
            problem = "no such file"
        } else if isDirectory.boolValue {
            problem = "it is a directory, not a patch file"
        } else if let data = FileManager.default.contents(atPath: path) ?? readStream(path) {
            if let decoded = String(validating: data, as: UTF8.self) {
                text = decoded
                problem = nil
            } else {
                problem = "the file is not UTF-8 text"
            }
        } else {
            problem = "the file cannot be read (check its permissions)"
        }
        if let problem {
            throw PatchParseError(diagnostics: [
                PatchDiagnostic(path: path, message: "cannot read patch file '\(path)': \(problem)")
            ])
        }
        return try parse(text: text, path: path, names: names)
    }

    /// The whole of a file that is not a regular one (a pipe such as /dev/stdin, a FIFO), which
    /// `FileManager.contents(atPath:)` does not read; nil when it cannot be opened.
    static func readStream(_ path: String) -> Data? {
        guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        return try? handle.readToEnd() ?? Data()
    }

    /// Sorts by location, file-wide diagnostics first, keeping the order found among equals.
    public static func ordered(_ diagnostics: [PatchDiagnostic]) -> [PatchDiagnostic] {
        diagnostics.enumerated().sorted { lhs, rhs in
            let left = lhs.element.location ?? SourceLocation(line: 0, column: 0)
            let right = rhs.element.location ?? SourceLocation(line: 0, column: 0)
            return left != right ? left < right : lhs.offset < rhs.offset
        }.map(\.element)
    }

    /// Turns a Yams error into a diagnostic at the position libyaml reported.
    ///
    /// Matched with `if case` rather than an exhaustive `switch`, so that the code builds with
    /// Yams 5 and with Yams 6, which adds cases; anything else falls back to its description.
    static func syntaxDiagnostic(for error: any Error, text: String, path: String?) -> PatchDiagnostic {
        guard let yamlError = error as? YamlError else {
            return PatchDiagnostic(path: path, message: "cannot read the YAML: \(error)")
        }
        var context: YamlError.Context?
        var problem: String
        var mark: Mark?
        if case .scanner(let errorContext, let errorProblem, let errorMark, _) = yamlError {
            (context, problem, mark) = (errorContext, errorProblem, errorMark)
        } else if case .parser(let errorContext, let errorProblem, let errorMark, _) = yamlError {
            (context, problem, mark) = (errorContext, errorProblem, errorMark)
        } else if case .composer(let errorContext, let errorProblem, let errorMark, _) = yamlError {
            (context, problem, mark) = (errorContext, errorProblem, errorMark)
        } else if case .reader(let readerProblem, let offset, _, _) = yamlError {
            let location = offset.map { TextPosition.location(ofCharacterOffset: $0, in: text) }
            return PatchDiagnostic(path: path, location: location, message: "invalid YAML text: \(readerProblem)")
        } else {
            return PatchDiagnostic(path: path, message: "invalid YAML: \(yamlError)")
        }
        let location = mark.map { SourceLocation(line: $0.line, column: $0.column) }
        if problem == "but found another document" {
            return PatchDiagnostic(
                path: path, location: location,
                message: "a patch file holds a single YAML document, but a second one starts here")
        }
        if let context, context.mark.line > 0,
            context.mark.line != mark?.line || context.mark.column != mark?.column
        {
            problem += " (\(context.text) that started at line \(context.mark.line), column \(context.mark.column))"
        }
        if let location, let index = TextPosition.index(of: location, in: text), text.unicodeScalars[index] == "\t" {
            problem += "; YAML cannot be indented with tabs, use spaces"
        }
        return PatchDiagnostic(path: path, location: location, message: "YAML syntax error: \(problem)")
    }
}

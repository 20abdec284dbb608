// Tests of PatchDiagnostic's compiler-style description and of reading patch files from disk.

import Foundation
import Patches
import Testing

@Suite struct PatchDiagnosticTests {
    @Test func descriptionLeavesOutUnknownParts() {
        let location = Patches.SourceLocation(line: 3, column: 5)
        #expect(
            PatchDiagnostic(path: "file.yaml", location: location, message: "m").description
                == "file.yaml:3:5: error: m")
        #expect(PatchDiagnostic(location: location, message: "m").description == "3:5: error: m")
        #expect(PatchDiagnostic(path: "file.yaml", message: "m").description == "file.yaml: error: m")
        #expect(PatchDiagnostic(message: "m").description == "error: m")
        #expect(PatchDiagnostic(message: "m", severity: .warning).description == "warning: m")
    }

    @Test func parseErrorPrintsOneDiagnosticPerLine() {
        let error = PatchParseError(diagnostics: [PatchDiagnostic(message: "a"), PatchDiagnostic(message: "b")])
        #expect(error.description == "error: a\nerror: b")
    }

    @Test func patchFileParsesWithItsPath() throws {
        let path = try temporaryFile(named: "ok.yaml", contents: Data("version: 1\nnodes: [{name: a, kind: k}]\n".utf8))
        defer { removeTemporaryFolder(of: path) }
        let document = try PatchParser.parse(contentsOf: path, names: .unchecked)
        #expect(document.path == path)
        #expect(document.nodes.map(\.name) == ["a"])
    }

    @Test func errorsInAPatchFileNameTheFile() throws {
        let path = try temporaryFile(named: "bad.yaml", contents: Data("version: 1\nengine:\n  outputs: 0\n".utf8))
        defer { removeTemporaryFolder(of: path) }
        #expect(
            throws: PatchParseError(diagnostics: [
                PatchDiagnostic(
                    path: path, location: Patches.SourceLocation(line: 3, column: 12),
                    message: "'outputs' must be between 1 and 64, found 0")
            ])
        ) {
            try PatchParser.parse(contentsOf: path, names: .unchecked)
        }
    }

    @Test func missingFileIsOneDiagnosticNamingIt() {
        let path = "/nonexistent-soundstage-dir/patch.yaml"
        #expect(
            throws: PatchParseError(diagnostics: [
                PatchDiagnostic(path: path, message: "cannot read patch file '\(path)': no such file")
            ])
        ) {
            try PatchParser.parse(contentsOf: path, names: .unchecked)
        }
    }

    @Test func directoryIsNotAPatchFile() {
        let path = FileManager.default.temporaryDirectory.path
        #expect(
            throws: PatchParseError(diagnostics: [
                PatchDiagnostic(
                    path: path, message: "cannot read patch file '\(path)': it is a directory, not a patch file")
            ])
        ) {
            try PatchParser.parse(contentsOf: path, names: .unchecked)
        }
    }

    @Test func nonUTF8FileIsRejected() throws {
        let path = try temporaryFile(named: "latin1.yaml", contents: Data([0x76, 0x3A, 0x20, 0xE9, 0x0A]))
        defer { removeTemporaryFolder(of: path) }
        #expect(
            throws: PatchParseError(diagnostics: [
                PatchDiagnostic(path: path, message: "cannot read patch file '\(path)': the file is not UTF-8 text")
            ])
        ) {
            try PatchParser.parse(contentsOf: path, names: .unchecked)
        }
    }

    /// Writes `contents` to a fresh file in a new temporary folder and returns its path.
    private func temporaryFile(named name: String, contents: Data) throws -> String {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("PatchesTests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let url = folder.appendingPathComponent(name)
        try contents.write(to: url)
        return url.path
    }

    private func removeTemporaryFolder(of path: String) {
        try? FileManager.default.removeItem(at: URL(fileURLWithPath: path).deletingLastPathComponent())
    }
}

// Control side. `soundstage graph PATCH`: the patch drawn as a graph (DOT, or SVG through Graphviz).
import ArgumentParser
import Foundation
import AudioFiles
import Patches
import SoundstageKit

struct GraphCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "graph",
        abstract: "Draw a patch: nodes by kind, buses, connections, taps, inserts and JACK ports (DOT or SVG).")

    enum Format: String, ExpressibleByArgument, CaseIterable {
        case dot, svg
    }

    @Argument(help: "The patch file (YAML or JSON).")
    var patch: String

    @Option(
        help:
            "dot (Graphviz's text) or svg (drawn by Graphviz's dot, which must be installed); default: from --out's extension (.svg, .dot, .gv), else dot."
    )
    var format: Format?

    @Option(name: .long, help: "Where to write the picture (default: standard output).")
    var out: String?

    /// `--format`, or the one `--out`'s extension names; a format the extension contradicts, an
    /// extension that names another kind of file (a .png, the patch's own .yaml) and `--out` naming the
    /// patch itself are refused.
    func resolvedFormat() throws -> Format {
        let suffix = out.map { URL(fileURLWithPath: $0).pathExtension.lowercased() } ?? ""
        let fromExtension: Format? =
            switch suffix {
            case "svg": .svg
            case "dot", "gv": .dot
            default: nil
            }
        if let out, Self.otherKinds.contains(suffix) {
            throw ValidationError(
                "--out '\(out)' names a .\(suffix) file; graph writes DOT (.dot, .gv) or SVG (.svg)"
                    + (Self.patchExtensions.contains(suffix) ? "" : "; for .\(suffix), run: dot -T\(suffix) FILE.dot"))
        }
        if let out, Self.sameFile(out, patch) {
            throw ValidationError("--out '\(out)' is the patch itself; name another file")
        }
        if let format, let fromExtension, format != fromExtension {
            throw ValidationError(
                "--format \(format.rawValue) does not match --out's extension, which says \(fromExtension.rawValue)")
        }
        return format ?? fromExtension ?? .dot
    }

    func validate() throws { _ = try resolvedFormat() }

    func run() throws {
        let format = try resolvedFormat()
        let document: PatchDocument
        switch PatchLoader.parseAndCheck(path: patch) {
        case .success(let checked):
            document = checked
        case .failure(let error):
            for problem in error.diagnostics { printError(problem.description) }
            throw ExitCode(1)
        }
        let dot = PatchPicture.dot(document, title: URL(fileURLWithPath: patch).lastPathComponent)
        let bytes: Data
        switch format {
        case .dot:
            bytes = Data(dot.utf8)
        case .svg:
            bytes = try Self.drawSVG(dot)
        }
        guard let out else {
            FileHandle.standardOutput.write(bytes)
            return
        }
        do {
            try OutputDestination.write(bytes, to: out)
        } catch {
            printError("could not write \(out): \(error)")
            throw ExitCode(1)
        }
    }

    static let patchExtensions: Set<String> = ["yaml", "yml", "json"]
    /// Extensions of files graph does not write: pictures Graphviz draws from DOT, and patches.
    static let otherKinds: Set<String> =
        Set(["png", "jpg", "jpeg", "gif", "pdf", "ps", "eps", "webp", "bmp", "tif", "tiff"]).union(patchExtensions)

    /// Whether both paths name one existing file (the same device and inode).
    static func sameFile(_ a: String, _ b: String) -> Bool {
        var first = stat()
        var second = stat()
        guard stat(a, &first) == 0, stat(b, &second) == 0 else { return false }
        return first.st_dev == second.st_dev && first.st_ino == second.st_ino
    }

    /// Runs Graphviz's `dot -Tsvg` on `dot`.
    static func drawSVG(_ dot: String) throws -> Data {
        do throws(CommandFailure) {
            return try ExternalTool.dot(for: "SVG (--format svg; --format dot writes the text)").run(
                ["-Tsvg"], input: Data(dot.utf8))
        } catch {
            printError(error.message)
            throw ExitCode(1)
        }
    }
}

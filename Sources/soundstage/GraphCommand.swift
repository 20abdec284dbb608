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

    /// `--format`, or the one `--out`'s extension names; a format the extension contradicts is refused.
    func resolvedFormat() throws -> Format {
        let fromExtension: Format? =
            switch out.map({ URL(fileURLWithPath: $0).pathExtension.lowercased() }) {
            case "svg": .svg
            case "dot", "gv": .dot
            default: nil
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
        let problems = PatchLoader.check(path: patch)
        if !problems.isEmpty {
            for problem in problems { printError(problem.description) }
            throw ExitCode(1)
        }
        let document: PatchDocument
        do {
            document = try PatchParser.parse(contentsOf: patch, names: .engine)
        } catch {
            printError(error.description)
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

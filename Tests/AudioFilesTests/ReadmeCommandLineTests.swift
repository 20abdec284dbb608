// Tests (control side). README's command-line summary lists each command's options as the executable
// parses them: the flags of every `soundstage <command>` line, in order, are those of its --help usage.
import DSPTestSupport
import Foundation
import Testing

@Suite(.requiresTool("the soundstage executable", SoundstageTool.isAvailable, "build the soundstage product first"))
struct ReadmeCommandLineTests {
    /// The `soundstage …` lines of README's "The command line" block, continuation lines joined.
    static func readmeCommands() throws -> [String: String] {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
        let section = try #require(readme.components(separatedBy: "## The command line").dropFirst().first)
        let block = try #require(section.components(separatedBy: "```").dropFirst().first)
        var commands: [String: String] = [:]
        var current: String?
        for line in block.split(separator: "\n").map(String.init) {
            if line.hasPrefix("soundstage ") {
                let name = String(line.split(separator: " ")[1])
                commands[name] = line
                current = name
            } else if let name = current, line.hasPrefix(" ") {
                commands[name, default: ""] += " " + line.trimmingCharacters(in: .whitespaces)
            }
        }
        return commands
    }

    static func flags(_ text: String) -> [String] {
        var found: [String] = []
        var rest = Substring(text)
        while let range = rest.range(of: #"--[a-z][a-z-]*"#, options: .regularExpression) {
            found.append(String(rest[range]))
            rest = rest[range.upperBound...]
        }
        return found
    }

    /// The first flag of each option line of a --help's OPTIONS section.
    static func optionSectionFlags(_ help: String) -> [String] {
        guard let section = help.components(separatedBy: "OPTIONS:").dropFirst().first else { return [] }
        return section.split(separator: "\n").compactMap { line -> String? in
            guard line.hasPrefix("  -") else { return nil }
            // The option's own column ends at the first run of two spaces; its description follows.
            let spec = line.dropFirst(2).components(separatedBy: "  ").first ?? ""
            return flags(spec).first
        }.filter { $0 != "--version" && $0 != "--help" }
    }

    @Test func everyCommandsOptionsMatchItsUsage() throws {
        let commands = try Self.readmeCommands()
        #expect(Set(commands.keys) == ["run", "render", "check", "info", "convert", "graph"])
        for (name, line) in commands.sorted(by: { $0.key < $1.key }) {
            let help = try SoundstageTool.run([name, "--help"])
            #expect(help.status == 0)
            let usage = try #require(help.stdout.split(separator: "\n").first { $0.hasPrefix("USAGE:") })
            // A usage too long for one line is folded into `[<options>]`: the options are then those of
            // the OPTIONS section, in order (less --version and --help, which README leaves out).
            let parsed =
                usage.contains("[<options>]")
                ? Self.optionSectionFlags(help.stdout) : Self.flags(String(usage))
            #expect(Self.flags(line) == parsed, "README's \(name) line: \(line)\nhelp: \(parsed)")
        }
    }
}

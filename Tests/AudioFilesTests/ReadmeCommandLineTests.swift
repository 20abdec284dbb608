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

    @Test func everyCommandsOptionsMatchItsUsage() throws {
        let commands = try Self.readmeCommands()
        #expect(Set(commands.keys) == ["run", "render", "check", "info", "convert"])
        for (name, line) in commands.sorted(by: { $0.key < $1.key }) {
            let help = try SoundstageTool.run([name, "--help"])
            #expect(help.status == 0)
            let usage = try #require(help.stdout.split(separator: "\n").first { $0.hasPrefix("USAGE:") })
            #expect(Self.flags(line) == Self.flags(String(usage)), "README's \(name) line: \(line)\nusage: \(usage)")
        }
    }
}

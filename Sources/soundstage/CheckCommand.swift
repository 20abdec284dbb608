// Control side. `soundstage check PATCH...`: validate patches (files included) without audio.
import ArgumentParser
import SoundstageKit

struct CheckCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check", abstract: "Validate patch files and report every error with its line and column.")

    @Argument(help: "Patch files (YAML or JSON).")
    var patches: [String]

    @OptionGroup var quiet: QuietOption

    func run() throws {
        quiet.apply()
        var failed = false
        for path in patches {
            let diagnostics = PatchLoader.diagnose(path: path)
            for d in diagnostics { printError(d.description) }
            if diagnostics.contains(where: { $0.severity == .error }) {
                failed = true
            } else {
                say("\(path): ok" + (diagnostics.isEmpty ? "" : " (\(diagnostics.count) warning(s))"))
            }
        }
        if failed { throw ExitCode(1) }
    }
}

// Control side. The `soundstage` command: composition root for the engine, its hosts and tools.
import ArgumentParser

@main
struct Soundstage: ParsableCommand {
    static let version = "0.1.0"

    static let configuration = CommandConfiguration(
        commandName: "soundstage",
        abstract: "A headless audio engine for JACK, driven by patch files.",
        version: version,
        subcommands: [
            RunCommand.self, RenderCommand.self, CheckCommand.self, InfoCommand.self, ConvertCommand.self,
            GraphCommand.self
        ])
}

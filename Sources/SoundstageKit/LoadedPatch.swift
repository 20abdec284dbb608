// Control side. An engine built from a patch, with what the host needs to know to run it.
import AudioGraph
import Patches

/// The result of loading a patch: a ready engine (nothing rendering yet) plus host settings.
public final class LoadedPatch: Sendable {
    public let engine: Engine
    public let document: PatchDocument
    /// JACK connections to make at start; short names are our own ports.
    public let jackConnections: [(from: String, to: String)]
    /// Connect our outputs to the physical playback ports.
    public let connectPhysical: Bool
    /// Files that could not be read when loading tolerantly (`Overrides.toleratesFileProblems`).
    public let warnings: [PatchDiagnostic]

    init(
        engine: Engine, document: PatchDocument, jackConnections: [(from: String, to: String)], connectPhysical: Bool,
        warnings: [PatchDiagnostic] = []
    ) {
        self.engine = engine
        self.document = document
        self.jackConnections = jackConnections
        self.connectPhysical = connectPhysical
        self.warnings = warnings
    }

    /// A few lines telling a person what the patch plays.
    public func summary() -> String {
        var lines: [String] = []
        let config = engine.configuration
        lines.append(
            "engine: \(Int(config.sampleRate)) Hz, \(config.outputChannelCount) out, \(config.inputChannelCount) in, "
                + "\(config.blockFrames)-frame sub-blocks")
        for buffer in engine.buffers() {
            let seconds = Double(buffer.frameCount) / buffer.sampleRate
            lines.append(
                "buffer \(buffer.name): \(buffer.channelCount) ch, \(buffer.frameCount) frames (\(String(format: "%.2f", seconds)) s)"
            )
        }
        let order = engine.renderOrder()
        for node in engine.nodes() where node.name != "output" {
            var text = "node \(node.name) (\(node.kind.rawValue))"
            if node.kind.isPlayer {
                let source = node.parameters[ParameterKey.buffer.name]?.stringValue ?? ""
                let file = node.parameters[ParameterKey.file.name]?.stringValue ?? ""
                let what = !source.isEmpty ? "buffer \(source)" : !file.isEmpty ? "file \(file)" : "nothing"
                let loops = node.parameters[ParameterKey.numberOfLoops.name]?.intValue ?? 0
                let looping =
                    node.parameters[ParameterKey.loop.name]?.boolValue == true || loops < 0
                    ? ", looping"
                    : loops > 0 ? ", \(loops + 1) passes" : ""
                let playing = node.parameters[ParameterKey.playing.name]?.boolValue == true ? "playing" : "stopped"
                text += ": \(playing) \(what)\(looping)"
            }
            text += order.contains(node.name) ? "" : " [inactive: not connected to the output]"
            lines.append(text)
        }
        lines.append("signal flow: " + engine.connections().map(\.description).joined(separator: ", "))
        return lines.joined(separator: "\n")
    }
}

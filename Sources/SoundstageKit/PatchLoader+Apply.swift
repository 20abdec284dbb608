// Control side. Replacing a running engine's graph with a patch (/patch/load), losing nothing on error.
import AudioGraph
import Foundation
import Patches

extension PatchLoader {
    /// Replaces `engine`'s graph (nodes, connections, buffers) with the patch at `path`, while audio runs.
    /// The patch is first built and checked completely on a scratch engine at the running engine's rate;
    /// on any error the running graph is untouched and every problem is reported. The swap itself is one
    /// batch, so the old graph fades out and the new one in within the same render cycle. The patch's
    /// channel counts must match the running engine (its JACK ports are fixed).
    ///
    /// Audio files that are missing or unreadable do not stop the load: what needed them goes without,
    /// and each problem is returned as a warning (the OSC layer sends them as `/error`s).
    @discardableResult
    public static func apply(path: String, to engine: Engine) throws(PatchLoadError) -> [PatchDiagnostic] {
        let document: PatchDocument
        do {
            document = try PatchParser.parse(contentsOf: path, names: .engine)
        } catch {
            throw PatchLoadError(diagnostics: error.diagnostics)
        }
        return try apply(document, to: engine)
    }

    /// `apply(path:to:)` for a parsed document. Returns the warnings (files that could not be read).
    @discardableResult
    public static func apply(_ document: PatchDocument, to engine: Engine) throws(PatchLoadError) -> [PatchDiagnostic] {
        let scratch = try prepare(document, for: engine)

        // Mirror it into the live engine in one batch.
        do {
            try engine.batch { () throws(EngineError) in
                for node in engine.nodes() where node.name != "main" && node.name != "output" {
                    try engine.detach(node.name)
                }
                for connection in engine.connections() {
                    try engine.disconnect(
                        "\(connection.source):\(connection.sourceBus)",
                        from: "\(connection.destination):\(connection.destinationBus)")
                }
                for buffer in engine.buffers() { try engine.removeBuffer(buffer.name) }
                let scratchNodes = Dictionary(uniqueKeysWithValues: scratch.engine.nodes().map { ($0.name, $0) })
                for spec in NodeKind.mixer.parameters where !spec.isReadOnly && spec.key != .channels {
                    try engine.set("main", spec.name, to: spec.defaultValue)
                }
                // `main`'s channel count as the patch loaded afresh has it (the engine's outputs, unless the
                // patch says otherwise, which is set again below).
                if let channels = scratchNodes["main"]?.parameters["channels"],
                    engine.nodes().first(where: { $0.name == "main" })?.parameters["channels"] != channels
                {
                    try engine.set("main", "channels", to: channels)
                }
                for buffer in scratch.engine.buffers() { try engine.addBuffer(buffer) }
                for node in document.nodes {
                    guard let kind = NodeKind(rawValue: node.kind), let built = scratchNodes[node.name] else {
                        continue
                    }
                    var parameters: [String: ParameterValue] = [:]
                    for param in node.params {
                        guard var value = built.parameters[param.key] else { continue }
                        // A player's file is relative to the new patch, not to the running one.
                        if param.key == "file", let file = value.stringValue, !file.isEmpty {
                            value = .string(document.resolvedPath(forFile: file))
                        }
                        parameters[param.key] = value
                    }
                    if node.name == "main" || node.name == "output" {
                        for (key, value) in parameters.sorted(by: { $0.key < $1.key }) {
                            try engine.set(node.name, key, to: value)
                        }
                    } else {
                        try engine.attach(kind, name: node.name, parameters: parameters)
                    }
                }
                for connection in scratch.engine.connections() {
                    try engine.connect(
                        "\(connection.source):\(connection.sourceBus)",
                        to: "\(connection.destination):\(connection.destinationBus)")
                }
            }
        } catch {
            throw PatchLoadError(diagnostics: [
                PatchDiagnostic(path: document.path, message: "applying the patch failed: \(error)")
            ])
        }
        return scratch.warnings
    }

    /// The parse-and-check step that `/patch/load` and hot reload share: the patch built completely on a
    /// scratch engine shaped like the running one (its rate, period and channel counts), or every problem
    /// with its line and column. The channel counts must match (the JACK ports are fixed); audio files
    /// that cannot be read are warnings in the result.
    static func prepare(_ document: PatchDocument, for engine: Engine) throws(PatchLoadError) -> LoadedPatch {
        let live = engine.configuration
        var problems: [PatchDiagnostic] = []
        func report(_ location: SourceLocation?, _ message: String) {
            problems.append(PatchDiagnostic(path: document.path, location: location, message: message))
        }
        if let outputs = document.engine.outputChannelCount, outputs != live.outputChannelCount {
            report(
                document.engine.fieldLocations["outputs"],
                "the patch needs \(outputs) outputs but the running engine has \(live.outputChannelCount); restart with this patch"
            )
        }
        let hasInput = document.nodes.contains { $0.kind == NodeKind.input.rawValue }
        let inputs =
            document.engine.inputChannelCount ?? (hasInput ? max(2, live.inputChannelCount) : live.inputChannelCount)
        if inputs != live.inputChannelCount && (document.engine.inputChannelCount != nil || hasInput) {
            report(
                document.engine.fieldLocations["inputs"],
                "the patch needs \(inputs) inputs but the running engine has \(live.inputChannelCount); restart with this patch"
            )
        }
        guard problems.isEmpty else { throw PatchLoadError(diagnostics: problems) }

        // Build and check everything on a scratch engine shaped like the live one.
        var shaped = document
        shaped.engine.outputChannelCount = live.outputChannelCount
        shaped.engine.inputChannelCount = live.inputChannelCount
        return try build(
            shaped,
            overrides: Overrides(
                sampleRate: live.sampleRate, blockFrames: live.blockFrames,
                toleratesFileProblems: true))
    }
}

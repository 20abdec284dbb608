// Control side. PatchDocument → patch YAML text (for `/patch/save` and tools).

/// Writes a ``PatchDocument`` as patch YAML (format version 1).
///
/// The output is block-style YAML in the order `version`, `engine`, `buffers`, `nodes`,
/// `connections`, `taps`, `jack`. Empty sections and fields left `nil` are omitted, and so are a
/// generator's `amplitude` and `channels` when they equal the defaults. Strings are written plain
/// when unambiguous and double-quoted otherwise; doubles always keep a `.` or an exponent so they
/// read back as numbers of the same type. Locations and `path` are not written.
///
/// For every document the parser accepts, `PatchParser.parse(text: PatchWriter.yaml(doc), names:)` (same rule)
/// equals `doc` once both sides are compared with ``PatchDocument/withoutLocations()``
/// (a `.nan` parameter aside, since NaN is not equal to itself).
public enum PatchWriter {
    /// The document as YAML text, ending with a newline.
    public static func yaml(_ document: PatchDocument) -> String {
        var lines = ["version: \(document.version)"]
        writeEngine(document.engine, into: &lines)
        if !document.buffers.isEmpty {
            lines.append("buffers:")
            for buffer in document.buffers { writeBuffer(buffer, into: &lines) }
        }
        if !document.nodes.isEmpty {
            lines.append("nodes:")
            for node in document.nodes { writeNode(node, into: &lines) }
        }
        if !document.connections.isEmpty {
            lines.append("connections:")
            for connection in document.connections {
                lines.append("  - from: \(string(connection.from.description))")
                lines.append("    to: \(string(connection.to.description))")
            }
        }
        if !document.taps.isEmpty {
            lines.append("taps:")
            for tap in document.taps {
                lines.append("  - node: \(string(tap.node))")
                lines.append("    bus: \(tap.bus)")
            }
        }
        if !document.recorders.isEmpty {
            lines.append("recorders:")
            for recorder in document.recorders {
                lines.append("  - name: \(string(recorder.name))")
                lines.append("    node: \(string(recorder.node))")
                lines.append("    path: \(string(recorder.path))")
                if let format = recorder.format { lines.append("    format: \(string(format))") }
                if let encoding = recorder.encoding { lines.append("    encoding: \(string(encoding))") }
                if let duration = recorder.duration { lines.append("    duration: \(duration)") }
                if !recorder.record { lines.append("    record: false") }
            }
        }
        writeJack(document.jack, into: &lines)
        if !document.session.isEmpty {
            lines.append("session:")
            if let pause = document.session.pauseOnRouteLoss { lines.append("  pauseOnRouteLoss: \(pause)") }
            if let node = document.session.nowPlaying { lines.append("  nowPlaying: \(string(node))") }
            let session = document.session
            if let category = session.category { lines.append("  category: \(category)") }
            if let mode = session.mode { lines.append("  mode: \(mode)") }
            if let on = session.mixWithOthers { lines.append("  mixWithOthers: \(on)") }
            if let on = session.duckOthers { lines.append("  duckOthers: \(on)") }
            if let on = session.interruptSpokenAudioAndMixWithOthers {
                lines.append("  interruptSpokenAudioAndMixWithOthers: \(on)")
            }
            if let level = session.duckLevel { lines.append("  duckLevel: \(level)") }
            if let active = session.active { lines.append("  active: \(active)") }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    private static func writeEngine(_ engine: PatchEngineSettings, into lines: inout [String]) {
        guard !engine.isEmpty else { return }
        lines.append("engine:")
        let fields: [(String, Int?)] = [
            ("sampleRate", engine.sampleRate), ("outputs", engine.outputChannelCount),
            ("inputs", engine.inputChannelCount), ("blockFrames", engine.blockFrames)
        ]
        for case let (key, value?) in fields {
            lines.append("  \(key): \(value)")
        }
    }

    private static func writeBuffer(_ buffer: PatchBuffer, into lines: inout [String]) {
        lines.append("  - name: \(string(buffer.name))")
        switch buffer.source {
        case .file(let path):
            lines.append("    file: \(string(path))")
        case .generate(let generator):
            lines.append("    generate:")
            lines.append("      waveform: \(generator.waveform.rawValue)")
            if let frequency = generator.frequency {
                lines.append("      frequency: \(YAMLScalarFormatter.double(frequency))")
            }
            lines.append("      duration: \(YAMLScalarFormatter.double(generator.duration))")
            if generator.amplitude != PatchGenerator.defaultAmplitude {
                lines.append("      amplitude: \(YAMLScalarFormatter.double(generator.amplitude))")
            }
            if generator.channelCount != PatchGenerator.defaultChannelCount {
                lines.append("      channels: \(generator.channelCount)")
            }
        }
        if let start = buffer.start { lines.append("    start: \(start)") }
        if let frames = buffer.frames { lines.append("    frames: \(frames)") }
    }

    private static func writeNode(_ node: PatchNode, into lines: inout [String]) {
        lines.append("  - name: \(string(node.name))")
        lines.append("    kind: \(string(node.kind))")
        guard !node.params.isEmpty else { return }
        lines.append("    params:")
        for parameter in node.params {
            lines.append("      \(string(parameter.key)): \(parameter.value.description)")
        }
    }

    private static func writeJack(_ jack: PatchJackSettings, into lines: inout [String]) {
        guard !jack.isEmpty else { return }
        lines.append("jack:")
        if !jack.connections.isEmpty {
            lines.append("  connect:")
            for connection in jack.connections {
                lines.append("    - from: \(string(connection.from))")
                lines.append("      to: \(string(connection.to))")
            }
        }
        if let connectPhysical = jack.connectPhysical {
            lines.append("  connectPhysical: \(connectPhysical)")
        }
    }

    private static func string(_ text: String) -> String {
        YAMLScalarFormatter.string(text)
    }
}

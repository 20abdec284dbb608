// Control side. The running graph written back as a patch document (for /patch/save).
import AudioGraph
import Patches

/// Turns an engine's current graph into a `PatchDocument`.
public enum PatchSnapshot {
    /// The engine's buffers, nodes (parameters that differ from their defaults), connections and
    /// settings. During an interruption the nodes are written as it will leave them when it ends
    /// (`Engine.nodesAsResumed`): a player it paused and will resume is written playing. Buffers made
    /// in memory by code have no file or generator and are left out (named in `skippedBuffers`). The
    /// implicit `main → output` connection is not written (a loaded patch always has it), nor the
    /// `sounds` mixer the sound pool made for itself, with its connections (the pool makes it again
    /// when a sound is next played).
    public static func document(of engine: Engine, jack: PatchJackSettings = PatchJackSettings())
        -> (document: PatchDocument, skippedBuffers: [String])
    {
        let config = engine.configuration
        var skipped: [String] = []
        var buffers: [PatchBuffer] = []
        for buffer in engine.buffers() {
            switch buffer.origin {
            case .file(let path, let start, let frames):
                buffers.append(
                    PatchBuffer(
                        name: buffer.name, source: .file(path: path), start: start == 0 ? nil : start,
                        frames: frames))
            case .generated(let waveform, let frequency, let duration, let amplitude, let channels):
                guard let wave = PatchGenerator.Waveform(rawValue: waveform) else {
                    skipped.append(buffer.name); continue
                }
                buffers.append(
                    PatchBuffer(
                        name: buffer.name,
                        source: .generate(
                            PatchGenerator(
                                waveform: wave, frequency: frequency, duration: duration, amplitude: amplitude,
                                channelCount: channels))))
            case .memory:
                skipped.append(buffer.name)
            }
        }
        let poolMixer = engine.soundPoolMixerName
        var nodes: [PatchNode] = []
        for node in engine.nodesAsResumed() where node.name != poolMixer {
            var params: [PatchParameter] = []
            let bands = node.parameters[ParameterKey.bands.name]?.intValue ?? NodeKind.defaultEQBandCount
            for spec in node.kind.parameters(bandCount: bands) where !spec.isReadOnly {
                guard let value = node.parameters[spec.name], value != spec.defaultValue else { continue }
                params.append(PatchParameter(key: spec.name, value: patchValue(value)))
            }
            let builtIn = node.name == "main" || node.name == "output"
            if builtIn && params.isEmpty { continue }
            nodes.append(PatchNode(name: node.name, kind: node.kind.rawValue, params: params))
        }
        // Players first, then mixers: sources before the nodes they feed reads naturally.
        nodes.sort { order($0.kind) == order($1.kind) ? $0.name < $1.name : order($0.kind) < order($1.kind) }
        let connections = engine.connections()
            .filter { !($0.source == "main" && $0.destination == "output" && $0.destinationBus == 0) }
            .filter { $0.source != poolMixer && $0.destination != poolMixer }
            .map {
                PatchConnection(
                    from: PatchEndpoint(node: $0.source, bus: $0.sourceBus == 0 ? nil : $0.sourceBus),
                    to: PatchEndpoint(node: $0.destination, bus: $0.destinationBus))
            }
        let document = PatchDocument(
            engine: PatchEngineSettings(
                sampleRate: Int(config.sampleRate), outputChannelCount: config.outputChannelCount,
                inputChannelCount: config.inputChannelCount, blockFrames: config.blockFrames),
            buffers: buffers, nodes: nodes, connections: connections, jack: jack)
        return (document, skipped)
    }

    /// A host's JACK connections as a patch's `jack:` section: full port names, output first; those of
    /// `clientName` (our own ports) are written short, as the patch format has them, so they follow the
    /// client's name when the patch is loaded under another. Sorted, so the same connections always
    /// write the same text.
    public static func jackSettings(
        connections: [(source: String, destination: String)], clientName: String?
    ) -> PatchJackSettings {
        let own = clientName.map { $0 + ":" }
        func short(_ port: String) -> String {
            guard let own, port.hasPrefix(own) else { return port }
            return String(port.dropFirst(own.count))
        }
        var edges: [PatchJackConnection] = connections.map { edge in
            PatchJackConnection(from: short(edge.source), to: short(edge.destination))
        }
        edges.sort { a, b in a.from == b.from ? a.to < b.to : a.from < b.from }
        return PatchJackSettings(connections: edges)
    }

    /// The engine's graph as patch YAML.
    public static func yaml(of engine: Engine, jack: PatchJackSettings = PatchJackSettings()) -> String {
        PatchWriter.yaml(document(of: engine, jack: jack).document)
    }

    private static func order(_ kind: String) -> Int {
        switch kind {
        case "player", "audioplayer", "input": return 0
        case "mixer": return 1
        default: return 2
        }
    }

    private static func patchValue(_ value: ParameterValue) -> PatchValue {
        switch value {
        case .float(let d): return .double(d)
        case .int(let i): return .int(i)
        case .bool(let b): return .bool(b)
        case .string(let s): return .string(s)
        }
    }
}

// Control side. A patch load's phases, in order: the engine from `engine:`, then buffers, nodes,
// connections, taps and recorders. Each phase reports every problem it finds (with its place in the
// file) and goes on, so one load lists them all.
import AudioFiles
import AudioGraph
import Patches

/// One patch being built into an engine.
struct PatchBuild {
    let document: PatchDocument
    let overrides: PatchLoader.Overrides
    let engine: Engine
    private(set) var diagnostics: [PatchDiagnostic] = []
    private(set) var warnings: [PatchDiagnostic] = []
    /// Buffers whose file could not be read (tolerated): nodes naming them load without them.
    private(set) var missingBuffers: Set<String> = []
    /// The nodes the engine has after the node phase.
    private(set) var knownNodes: Set<String> = []

    /// The configure phase: the engine from the patch's `engine:` section and the overrides.
    init(document: PatchDocument, overrides: PatchLoader.Overrides) {
        self.document = document
        self.overrides = overrides
        let hasInput = document.nodes.contains { $0.kind == NodeKind.input.rawValue }
        let configuration = EngineConfiguration(
            sampleRate: overrides.sampleRate ?? document.engine.sampleRate.map(Double.init) ?? 48_000,
            blockFrames: overrides.blockFrames ?? document.engine.blockFrames ?? 64,
            outputChannelCount: document.engine.outputChannelCount ?? 2,
            inputChannelCount: document.engine.inputChannelCount ?? (hasInput ? 2 : 0))
        engine = Engine(
            configuration: configuration, fileLoader: PatchLoader.fileLoader(relativeTo: document),
            streamOpener: PatchLoader.streamOpener(relativeTo: document), hrtfSets: .sofaFiles)
    }

    mutating func report(_ location: SourceLocation?, _ message: String) {
        diagnostics.append(PatchDiagnostic(path: document.path, location: location, message: message))
    }

    /// A file problem: an error, or in tolerant mode a warning (the rest still loads).
    mutating func reportFile(_ location: SourceLocation?, _ message: String) {
        if overrides.toleratesFileProblems {
            warnings.append(
                PatchDiagnostic(path: document.path, location: location, message: message, severity: .warning))
        } else {
            report(location, message)
        }
    }

    /// The buffer phase: files decoded and converted, signals synthesized.
    mutating func loadBuffers() {
        let rate = engine.configuration.sampleRate
        for buffer in document.buffers {
            // A pitched waveform must be below the Nyquist frequency of the rate it renders at.
            if case .generate(let generator) = buffer.source, let frequency = generator.frequency, frequency >= rate / 2
            {
                report(
                    generator.fieldLocations["frequency"] ?? buffer.location,
                    "buffer '\(buffer.name)': frequency \(frequency) Hz is not below the Nyquist frequency "
                        + "(\(rate / 2) Hz at \(rate) Hz)")
                continue
            }
            do throws(AudioFileError) {
                let made = try PatchLoader.makeBuffer(buffer, of: document, rate: rate)
                do throws(EngineError) {
                    try engine.addBuffer(made)
                } catch {
                    report(buffer.location, "buffer '\(buffer.name)': \(error)")
                }
            } catch {
                reportFile(buffer.sourceLocation ?? buffer.location, "buffer '\(buffer.name)': \(error)")
                missingBuffers.insert(buffer.name)
            }
        }
    }

    /// The node phase: each parameter checked where it is written, then the node attached (or the
    /// built-in `main`/`output` set).
    mutating func attachNodes() {
        for node in document.nodes {
            guard let kind = NodeKind(rawValue: node.kind) else {
                report(
                    node.kindLocation ?? node.location, "unknown node kind '\(node.kind)' (kinds: \(NodeKind.allNames))"
                )
                continue
            }
            guard var parameters = checkedParameters(of: node, kind: kind) else { continue }
            attach(node, kind: kind, parameters: &parameters)
        }
        knownNodes = Set(engine.nodes().map(\.name))
    }

    /// The node's parameters coerced to their specs, or nil when one was refused (reported).
    private mutating func checkedParameters(of node: PatchNode, kind: NodeKind) -> [String: ParameterValue]? {
        var parameters: [String: ParameterValue] = [:]
        var ok = true
        // An EQ's parameters depend on its band count.
        let bands =
            node.parameter("bands").flatMap { PatchLoader.parameterValue($0.value)?.intValue }
            ?? NodeKind.defaultEQBandCount
        let specs = kind.parameters(bandCount: min(max(bands, 1), 16))
        for param in node.params {
            guard var value = PatchLoader.parameterValue(param.value) else {
                report(
                    param.valueLocation ?? param.keyLocation, "\(node.name).\(param.key): lists are not accepted here")
                ok = false
                continue
            }
            guard let spec = specs.first(where: { $0.name == param.key }) else {
                let hint =
                    SpellingSuggestion.closest(to: param.key, among: specs.map(\.name))
                    .map { " (did you mean '\($0)'?)" } ?? ""
                report(
                    param.keyLocation,
                    "\(kind.rawValue) '\(node.name)' has no parameter '\(param.key)'\(hint) "
                        + "(it has: \(specs.map(\.name).joined(separator: ", ")))")
                ok = false
                continue
            }
            // yes/no/on/off are booleans wherever a boolean is expected (the patch-level rule).
            if spec.type == .bool, case .string = param.value, let flag = param.value.asBool { value = .bool(flag) }
            if param.key == "buffer", let name = PatchLoader.parameterValue(param.value)?.stringValue,
                missingBuffers.contains(name)
            {
                // Already reported with its buffer; the node loads without it.
                continue
            }
            do throws(EngineError) {
                if spec.isReadOnly { throw EngineError(.readOnly, "\(node.name).\(param.key) is read-only") }
                var coerced = try spec.coerce(value, node: node.name)
                // An environment's SOFA file is relative to the patch, like buffer files.
                if param.key == "hrtf", let file = coerced.stringValue, !file.isEmpty {
                    coerced = .string(document.resolvedPath(forFile: file))
                }
                parameters[param.key] = coerced
            } catch {
                report(param.valueLocation ?? param.keyLocation, error.message)
                ok = false
            }
        }
        return ok ? parameters : nil
    }

    private mutating func attach(_ node: PatchNode, kind: NodeKind, parameters: inout [String: ParameterValue]) {
        do throws(EngineError) {
            if node.name == "main" || node.name == "output" {
                let builtIn: NodeKind = node.name == "main" ? .mixer : .output
                guard kind == builtIn else {
                    report(
                        node.kindLocation,
                        "'\(node.name)' is built in and is a \(builtIn.rawValue), not a \(kind.rawValue)")
                    return
                }
                for (key, value) in parameters.sorted(by: { $0.key < $1.key }) {
                    try engine.set(node.name, key, to: value)
                }
            } else {
                try engine.attach(kind, name: node.name, parameters: parameters)
            }
        } catch let error where error.code == .fileError && overrides.toleratesFileProblems {
            // The node without the file it could not read (a player with nothing to play, an
            // environment with the default HRTF set).
            let fileKey = parameters.keys.contains("file") ? "file" : "hrtf"
            reportFile(node.parameter(fileKey)?.valueLocation ?? node.location, error.message)
            parameters[fileKey] = nil
            do throws(EngineError) {
                try engine.attach(kind, name: node.name, parameters: parameters)
            } catch {
                report(node.location, error.message)
            }
        } catch {
            let fileKey = parameters.keys.contains("file") ? "file" : parameters.keys.contains("hrtf") ? "hrtf" : nil
            let location = fileKey.flatMap { node.parameter($0)?.valueLocation }
            report(location ?? node.location, error.message)
        }
    }

    /// The connection phase. A connection naming a declared node that failed to load is not reported
    /// again.
    mutating func connectNodes() {
        for connection in document.connections {
            let missing = [connection.from.node, connection.to.node].filter { !knownNodes.contains($0) }
            if !missing.isEmpty {
                // Each end on its own: a declared node that failed does not hide an undeclared other end.
                for (name, location) in [
                    (connection.from.node, connection.fromLocation), (connection.to.node, connection.toLocation)
                ] where missing.contains(name) && document.node(named: name) == nil {
                    report(
                        location ?? connection.location,
                        "connection refers to '\(name)', which is not a node in this patch")
                }
                continue
            }
            let destination = connection.to.node
            let before = engine.connections().filter { $0.destination == destination }
            do throws(EngineError) {
                try engine.connect(connection.from.description, to: connection.to.description)
            } catch {
                report(connection.location, error.message)
                continue
            }
            // An input takes one source (AVAudioEngine's rule): a second connection into it replaces the
            // first, which in a patch is most likely a mistake.
            let after = Set(engine.connections())
            for replaced in before where !after.contains(replaced) {
                warnings.append(
                    PatchDiagnostic(
                        path: document.path, location: connection.location,
                        message:
                            "this connection replaces the one from '\(replaced.source):\(replaced.sourceBus)' into "
                            + "'\(destination):\(replaced.destinationBus)': an input takes one source (to mix "
                            + "several, connect them to a mixer and the mixer to '\(destination)')",
                        severity: .warning))
            }
        }
    }

    /// The tap phase. `taps:` is reserved: a tap would only observe its node, and nothing in a patch can
    /// consume what it observes, so an entry is refused rather than accepted and ignored. An empty list
    /// is fine.
    mutating func checkTaps() {
        for tap in document.taps {
            report(
                tap.location ?? tap.nodeLocation,
                "taps are reserved and not supported yet (tap on '\(tap.node):\(tap.bus)'); "
                    + "to capture a node's output use a 'recorders' entry, to watch its level use OSC /meters")
        }
    }

    /// A voice processor that hears the engine's output must not have its own voice in it: a warning
    /// for each whose output reaches main (`VoiceSelfReference`).
    mutating func checkVoiceReferences() {
        let nodes = engine.nodes()
        let connections = engine.connections()
        for node in nodes
        where VoiceSelfReference.usesEngineReference(kind: node.kind, parameters: node.parameters)
            && VoiceSelfReference.reachesOutput(from: node.name, connections: connections)
        {
            let location = document.nodes.first { $0.name == node.name }?.location
            warnings.append(
                PatchDiagnostic(
                    path: document.path, location: location, message: VoiceSelfReference.warning(node: node.name),
                    severity: .warning))
        }
    }

    /// The recorder phase: each names a node and a format (the recorders start later, with the host),
    /// and asks for nothing `Recorder` would refuse: an encoding the format cannot store or has none of,
    /// a file name too long, a rate or channel count the format does not take, or the file of another
    /// recorder of the patch.
    mutating func checkRecorders() {
        var destinations: [String: String] = [:]
        for recorder in document.recorders {
            let nodeKnown = knownNodes.contains(recorder.node)
            if !nodeKnown {
                report(
                    recorder.nodeLocation ?? recorder.location,
                    "recorder '\(recorder.name)' refers to '\(recorder.node)', which is not a node in this patch")
            }
            var format: AudioFileFormat?
            if let name = recorder.format {
                if let named = AudioFileFormat(name: name) {
                    format = named
                    if let fromExtension = AudioFileFormat(path: recorder.path),
                        fromExtension.fileExtension != named.fileExtension
                    {
                        format = nil
                        report(
                            recorder.formatLocation ?? recorder.location,
                            "recording format '\(name)' (\(named.displayName)) does not match the extension of "
                                + "'\(recorder.path)' (\(fromExtension.displayName)); name the file ."
                                + "\(named.fileExtension) or leave 'format' out")
                    }
                } else {
                    report(
                        recorder.formatLocation ?? recorder.location,
                        "unknown recording format '\(name)' (wav, aiff, caf, flac, ogg, opus, mp3, m4a, alac, aac)")
                }
            } else if let fromExtension = AudioFileFormat(path: recorder.path) {
                format = fromExtension
            } else {
                report(
                    recorder.pathLocation ?? recorder.location,
                    "cannot tell a recording format from '\(recorder.path)'; use .wav, .caf, .flac, .aiff, .ogg, .opus, "
                        + ".mp3, .m4a or .aac, or give 'format'")
            }
            checkRecorderFile(recorder, format: format, nodeKnown: nodeKnown, destinations: &destinations)
        }
    }

    /// The checks of one recorder that need its format: encoding, file name, rate and channels, and
    /// a file no earlier recorder of the patch writes (`destinations`: resolved file → recorder).
    private mutating func checkRecorderFile(
        _ recorder: PatchRecorder, format: AudioFileFormat?, nodeKnown: Bool, destinations: inout [String: String]
    ) {
        let pathLocation = recorder.pathLocation ?? recorder.location
        let path = document.resolvedPath(forFile: recorder.path)
        if let problem = Recorder.fileNameProblem(path) {
            report(pathLocation, "recorder '\(recorder.name)' cannot write '\(recorder.path)': \(problem)")
        }
        let destination = Recorder.destination(of: path)
        if let other = destinations[destination] {
            report(
                pathLocation,
                "recorder '\(recorder.name)' writes to '\(recorder.path)', which is already the file of recorder "
                    + "'\(other)'; two recorders on one file would replace each other's takes")
        } else {
            destinations[destination] = recorder.name
        }
        guard let format else { return }
        let encoding = recorder.encoding.flatMap(AudioSampleEncoding.init(rawValue:))
        if let encoding, let reason = format.encodingRefusal(encoding) {
            report(recorder.encodingLocation ?? recorder.location, "recorder '\(recorder.name)': \(reason)")
            return
        }
        guard nodeKnown, let info = engine.nodes().first(where: { $0.name == recorder.node }) else { return }
        do throws(AudioFileError) {
            try AudioFileWriter.check(
                path: path, format: format, sampleRate: engine.configuration.sampleRate,
                channelCount: info.outputChannelCount, encoding: encoding)
        } catch {
            let reason: String
            switch error {
            case .invalidArgument(_, let text), .unsupportedFormat(_, let text): reason = text
            default: reason = error.description
            }
            report(recorder.formatLocation ?? pathLocation, "recorder '\(recorder.name)': \(reason)")
        }
    }

    /// The loaded patch, or every problem found (errors, then warnings).
    func finish() throws(PatchLoadError) -> LoadedPatch {
        guard diagnostics.isEmpty else { throw PatchLoadError(diagnostics: diagnostics + warnings) }
        return LoadedPatch(
            engine: engine, document: document,
            jackConnections: document.jack.connections.map { ($0.from, $0.to) },
            connectPhysical: document.jack.connectPhysical ?? false, warnings: warnings)
    }
}

// Control side. Builds an engine from a patch file: parse, configure, load buffers, attach, connect.
// Everything is validated before any host starts, and every error carries its line and column.
import AudioFiles
import AudioGraph
import Foundation
import Patches

/// Loads and checks patch files.
public enum PatchLoader {
    /// Options that override the patch's `engine:` section.
    public struct Overrides: Sendable {
        public var sampleRate: Double?
        public var blockFrames: Int?
        /// Load the rest of the patch when audio files (buffer files, a player's `file`, an
        /// environment's `hrtf`) are missing or unreadable: each such problem becomes a warning in
        /// `LoadedPatch.warnings` and what needed the file goes without it. `check` keeps them errors.
        public var toleratesFileProblems: Bool
        public init(sampleRate: Double? = nil, blockFrames: Int? = nil, toleratesFileProblems: Bool = false) {
            self.sampleRate = sampleRate
            self.blockFrames = blockFrames
            self.toleratesFileProblems = toleratesFileProblems
        }
    }

    /// Parses and builds the patch at `path`. On any error nothing is returned and every problem found
    /// is reported.
    public static func load(path: String, overrides: Overrides = Overrides()) throws(PatchLoadError) -> LoadedPatch {
        let document: PatchDocument
        do {
            document = try PatchParser.parse(contentsOf: path, names: .engine)
        } catch {
            throw PatchLoadError(diagnostics: error.diagnostics)
        }
        return try build(document, overrides: overrides)
    }

    /// Every problem in the patch at `path` (empty when it is valid). Loads its files to check them.
    public static func check(path: String) -> [PatchDiagnostic] {
        do {
            _ = try load(path: path)
            return []
        } catch {
            return error.diagnostics
        }
    }

    /// Builds an engine from a parsed document.
    public static func build(_ document: PatchDocument, overrides: Overrides = Overrides()) throws(PatchLoadError)
        -> LoadedPatch
    {
        var diagnostics: [PatchDiagnostic] = []
        var warnings: [PatchDiagnostic] = []
        func report(_ location: SourceLocation?, _ message: String) {
            diagnostics.append(PatchDiagnostic(path: document.path, location: location, message: message))
        }
        /// A file problem: an error, or in tolerant mode a warning (the rest still loads).
        func reportFile(_ location: SourceLocation?, _ message: String) {
            if overrides.toleratesFileProblems {
                warnings.append(PatchDiagnostic(path: document.path, location: location, message: message, severity: .warning))
            } else {
                report(location, message)
            }
        }
        var missingBuffers: Set<String> = []

        let hasInput = document.nodes.contains { $0.kind == NodeKind.input.rawValue }
        let configuration = EngineConfiguration(
            sampleRate: overrides.sampleRate ?? document.engine.sampleRate.map(Double.init) ?? 48_000,
            blockFrames: overrides.blockFrames ?? document.engine.blockFrames ?? 64,
            outputChannelCount: document.engine.outputChannelCount ?? 2,
            inputChannelCount: document.engine.inputChannelCount ?? (hasInput ? 2 : 0))
        let engine = Engine(configuration: configuration, fileLoader: fileLoader(relativeTo: document),
                            streamOpener: streamOpener(relativeTo: document))

        // Buffers.
        for buffer in document.buffers {
            do {
                let samples: [[Float]]
                switch buffer.source {
                case .file:
                    samples = try loadFileBuffer(buffer, of: document, rate: configuration.sampleRate)
                case .generate(let generator):
                    // A pitched waveform must be below the Nyquist frequency of the rate it renders at.
                    if let frequency = generator.frequency, frequency >= configuration.sampleRate / 2 {
                        report(generator.fieldLocations["frequency"] ?? buffer.location,
                               "buffer '\(buffer.name)': frequency \(frequency) Hz is not below the Nyquist frequency "
                                   + "(\(configuration.sampleRate / 2) Hz at \(configuration.sampleRate) Hz)")
                        continue
                    }
                    samples = BufferSynthesizer.render(generator, sampleRate: configuration.sampleRate)
                }
                try engine.addBuffer(SampleBuffer(name: buffer.name, channels: samples, sampleRate: configuration.sampleRate,
                                                  origin: origin(of: buffer, in: document)))
            } catch let error as AudioFileError {
                reportFile(buffer.sourceLocation ?? buffer.location, "buffer '\(buffer.name)': \(error)")
                missingBuffers.insert(buffer.name)
            } catch {
                report(buffer.location, "buffer '\(buffer.name)': \(error)")
            }
        }

        // Nodes: check each parameter where it is written, then attach.
        for node in document.nodes {
            guard let kind = NodeKind(rawValue: node.kind) else {
                report(node.kindLocation ?? node.location,
                       "unknown node kind '\(node.kind)' (kinds: \(NodeKind.allNames))")
                continue
            }
            var parameters: [String: ParameterValue] = [:]
            var ok = true
            // An EQ's parameters depend on its band count.
            let bands = node.parameter("bands").flatMap { parameterValue($0.value)?.intValue } ?? NodeKind.defaultEQBandCount
            let specs = kind.parameters(bandCount: min(max(bands, 1), 16))
            for param in node.params {
                guard var value = parameterValue(param.value) else {
                    report(param.valueLocation ?? param.keyLocation, "\(node.name).\(param.key): lists are not accepted here")
                    ok = false
                    continue
                }
                guard let spec = specs.first(where: { $0.name == param.key }) else {
                    let hint = SpellingSuggestion.closest(to: param.key, among: specs.map(\.name))
                        .map { " (did you mean '\($0)'?)" } ?? ""
                    report(param.keyLocation, "\(kind.rawValue) '\(node.name)' has no parameter '\(param.key)'\(hint) "
                        + "(it has: \(specs.map(\.name).joined(separator: ", ")))")
                    ok = false
                    continue
                }
                // yes/no/on/off are booleans wherever a boolean is expected (the patch-level rule).
                if spec.type == .bool, case .string = param.value, let flag = param.value.asBool { value = .bool(flag) }
                if param.key == "buffer", let name = parameterValue(param.value)?.stringValue, missingBuffers.contains(name) {
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
            guard ok else { continue }
            do throws(EngineError) {
                if node.name == "main" || node.name == "output" {
                    let builtIn: NodeKind = node.name == "main" ? .mixer : .output
                    guard kind == builtIn else {
                        report(node.kindLocation, "'\(node.name)' is built in and is a \(builtIn.rawValue), not a \(kind.rawValue)")
                        continue
                    }
                    for (key, value) in parameters.sorted(by: { $0.key < $1.key }) { try engine.set(node.name, key, to: value) }
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

        // Connections.
        let known = Set(engine.nodes().map(\.name))
        for connection in document.connections {
            let missing = [connection.from.node, connection.to.node].filter { !known.contains($0) }
            if let name = missing.first {
                let declared = document.node(named: name) != nil
                let location = name == connection.from.node ? connection.fromLocation : connection.toLocation
                if !declared {
                    report(location ?? connection.location, "connection refers to '\(name)', which is not a node in this patch")
                }
                continue  // a declared node that failed to load was already reported
            }
            do throws(EngineError) {
                try engine.connect(connection.from.description, to: connection.to.description)
            } catch {
                report(connection.location, error.message)
            }
        }

        // `taps:` is reserved: a tap would only observe its node, and nothing in a patch can consume what it
        // observes, so an entry is refused rather than accepted and ignored. An empty list is fine.
        for tap in document.taps {
            report(tap.location ?? tap.nodeLocation,
                   "taps are reserved and not supported yet (tap on '\(tap.node):\(tap.bus)'); "
                       + "to capture a node's output use a 'recorders' entry, to watch its level use OSC /meters")
        }

        for recorder in document.recorders {
            if !known.contains(recorder.node) {
                report(recorder.nodeLocation ?? recorder.location,
                       "recorder '\(recorder.name)' refers to '\(recorder.node)', which is not a node in this patch")
            }
            if let format = recorder.format {
                if AudioFileFormat(name: format) == nil {
                    report(recorder.formatLocation ?? recorder.location,
                           "unknown recording format '\(format)' (wav, aiff, caf, flac, ogg, opus, mp3, m4a, alac, aac)")
                }
            } else if AudioFileFormat(path: recorder.path) == nil {
                report(recorder.pathLocation ?? recorder.location,
                       "cannot tell a recording format from '\(recorder.path)'; use .wav, .caf, .flac, .aiff, .ogg, .opus, "
                           + ".mp3, .m4a or .aac, or give 'format'")
            }
        }

        guard diagnostics.isEmpty else { throw PatchLoadError(diagnostics: diagnostics + warnings) }
        return LoadedPatch(
            engine: engine, document: document,
            jackConnections: document.jack.connections.map { ($0.from, $0.to) },
            connectPhysical: document.jack.connectPhysical ?? false, warnings: warnings)
    }

    /// Decodes a `file` buffer's region (`start`/`frames` count the file's own frames) and converts it to
    /// `rate`.
    static func loadFileBuffer(_ buffer: PatchBuffer, of document: PatchDocument, rate: Double) throws -> [[Float]] {
        guard case .file(let file) = buffer.source else { return [] }
        return try AudioFileReader.load(
            path: document.resolvedPath(forFile: file), targetSampleRate: rate, startFrame: buffer.start ?? 0,
            frameCount: buffer.frames).channels
    }

    /// The origin recorded for a patch buffer (file paths made absolute).
    static func origin(of buffer: PatchBuffer, in document: PatchDocument) -> SampleBufferOrigin {
        switch buffer.source {
        case .file(let file):
            return .file(path: document.resolvedPath(forFile: file), startFrame: buffer.start ?? 0, frameCount: buffer.frames)
        case .generate(let g):
            return .generated(waveform: g.waveform.rawValue, frequency: g.frequency, duration: g.duration,
                              amplitude: g.amplitude, channelCount: g.channelCount)
        }
    }

    static func parameterValue(_ value: PatchValue) -> ParameterValue? {
        switch value {
        case .bool(let b): return .bool(b)
        case .int(let i): return .int(i)
        case .double(let d): return .float(d)
        case .string(let s): return .string(s)
        case .list: return nil
        }
    }

    /// Opens files for streaming (`scheduleFile` of long files): relative paths resolve against the
    /// patch's folder.
    public static func streamOpener(relativeTo document: PatchDocument?) -> @Sendable (String, Double) throws -> StreamSource {
        let base = document?.path.map { URL(fileURLWithPath: $0).deletingLastPathComponent().path }
        return { path, rate in
            let resolved = path.hasPrefix("/") || base == nil ? path : URL(fileURLWithPath: base!).appendingPathComponent(path).path
            do {
                return try AudioFileStreamReader(path: resolved, targetSampleRate: rate)
            } catch {
                throw EngineError(.fileError, "\(error)")
            }
        }
    }

    /// Loads files for the player's `file` parameter: relative paths resolve against the patch's folder.
    static func fileLoader(relativeTo document: PatchDocument) -> @Sendable (String, Double) throws -> SampleBuffer {
        let base = document.path.map { URL(fileURLWithPath: $0).deletingLastPathComponent().path }
        return { path, rate in
            let resolved = path.hasPrefix("/") || base == nil ? path : URL(fileURLWithPath: base!).appendingPathComponent(path).path
            do {
                let data = try AudioFileReader.load(path: resolved, targetSampleRate: rate)
                let name = "file." + (URL(fileURLWithPath: resolved).lastPathComponent.filter { $0.isLetter || $0.isNumber || $0 == "." || $0 == "_" || $0 == "-" })
                return SampleBuffer(name: name.isEmpty ? "file" : String(name.prefix(64)), channels: data.channels, sampleRate: rate)
            } catch {
                throw EngineError(.fileError, "\(error)")
            }
        }
    }
}

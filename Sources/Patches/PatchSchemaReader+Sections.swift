// Control side. The section readers of PatchSchemaReader: one function per part of the format.

import Yams

extension PatchSchemaReader {
    // The allowed keys of each mapping, in the order messages list them.
    static let topLevelKeys = [
        "version", "engine", "buffers", "nodes", "connections", "taps", "recorders", "jack", "session"
    ]
    static let engineKeys = ["sampleRate", "outputs", "inputs", "blockFrames"]
    static let bufferKeys = ["name", "file", "generate", "start", "frames"]
    static let generatorKeys = ["waveform", "frequency", "duration", "amplitude", "channels"]
    static let nodeKeys = ["name", "kind", "params"]
    static let connectionKeys = ["from", "to"]
    static let tapKeys = ["node", "bus"]
    static let recorderKeys = ["name", "node", "path", "format", "encoding", "duration", "record"]
    static let jackKeys = ["connect", "connectPhysical"]
    static let sessionKeys = [
        "pauseOnRouteLoss", "nowPlaying", "category", "mode", "mixWithOthers", "duckOthers",
        "interruptSpokenAudioAndMixWithOthers", "duckLevel", "active", "monitorOtherAudio"
    ]

    /// Reads the whole document. The result is complete only when no diagnostic was reported.
    mutating func readDocument(_ root: Node) -> PatchDocument {
        var document = PatchDocument(path: path)
        guard let mapping = root.mapping else {
            report(
                "a patch must be a mapping with 'version: 1' and the sections at the top level, "
                    + "found \(Self.describe(root))",
                at: Self.location(of: root))
            return document
        }
        let fields = fields(of: mapping, context: "the patch", allowed: Self.topLevelKeys)
        if let entry = fields["version"] {
            if let version = int(entry), version != PatchDocument.currentVersion {
                report(
                    "unsupported patch version \(version); this format is version \(PatchDocument.currentVersion)",
                    at: entry.valueLocation)
            }
        } else {
            reportMissing("version", in: fields, context: "the patch", detail: " (add 'version: 1' at the top)")
        }
        if let entry = fields["engine"], !entry.isNull {
            document.engine = readEngine(entry) ?? PatchEngineSettings()
        }
        document.buffers = readList(fields["buffers"], what: "buffer") { $0.readBuffer($1) }
        document.nodes = readList(fields["nodes"], what: "node") { $0.readNode($1) }
        document.connections = readList(fields["connections"], what: "connection") { $0.readConnection($1) }
        document.taps = readList(fields["taps"], what: "tap") { $0.readTap($1) }
        document.recorders = readList(fields["recorders"], what: "recorder") { $0.readRecorder($1) }
        if let entry = fields["jack"], !entry.isNull {
            document.jack = readJack(entry) ?? PatchJackSettings()
        }
        if let entry = fields["session"], !entry.isNull {
            document.session = readSession(entry) ?? PatchSessionSettings()
        }
        if let name = document.session.nowPlaying {
            let kind = document.node(named: name)?.kind
            if kind != "player" && kind != "audioplayer" {
                report(
                    kind.map { "session nowPlaying '\(name)' is a \($0); it must name a player or audioplayer" }
                        ?? "session nowPlaying names no node '\(name)'",
                    at: document.session.nowPlayingLocation)
            }
        }
        reportDuplicateNames(document.buffers.map { ($0.name, $0.nameLocation) }, what: "buffer")
        reportDuplicateNames(document.nodes.map { ($0.name, $0.nameLocation) }, what: "node")
        reportDuplicateNames(document.recorders.map { ($0.name, $0.location) }, what: "recorder")
        return document
    }

    /// Reads each entry of an optional list section with `readItem`, which sees only mappings;
    /// other entries are reported as "each entry of 'nodes' must be a mapping (a node), found …".
    private mutating func readList<Item>(
        _ entry: Entry?, what: String, readItem: (inout PatchSchemaReader, Node.Mapping) -> Item?
    ) -> [Item] {
        guard let entry, let elements = listValue(entry) else { return [] }
        var items: [Item] = []
        for element in elements {
            guard let mapping = element.mapping else {
                report(
                    "each entry of '\(entry.key)' must be a mapping (a \(what)), found \(Self.describe(element))",
                    at: Self.location(of: element))
                continue
            }
            if let item = readItem(&self, mapping) { items.append(item) }
        }
        return items
    }

    /// Reports each name used a second time, at the later one, with the line of the first.
    private mutating func reportDuplicateNames(_ names: [(String, SourceLocation?)], what: String) {
        var firstLocations: [String: SourceLocation?] = [:]
        for (name, location) in names {
            if let first = firstLocations[name] {
                report(
                    "duplicate \(what) name '\(name)'\(Self.firstSeen(first, from: location, verb: "first defined at"))",
                    at: location)
            } else {
                firstLocations[name] = location
            }
        }
    }

    /// A required name field, checked with the node-name rules; `nil` after reporting.
    private mutating func name(
        _ fields: Fields, key: String = "name", what: String, context: String
    ) -> (name: String, location: SourceLocation?)? {
        guard let entry = fields[key] else {
            reportMissing(key, in: fields, context: context)
            return nil
        }
        guard let name = string(entry, allowEmpty: true) else { return nil }
        if let problem = names.problem(name, what) {
            report(problem, at: entry.valueLocation)
            return nil
        }
        return (name, entry.valueLocation)
    }

    /// A required string field; `nil` after reporting.
    private mutating func requiredString(_ fields: Fields, key: String, context: String) -> String? {
        guard let entry = fields[key] else {
            reportMissing(key, in: fields, context: context)
            return nil
        }
        return string(entry)
    }

    // MARK: - engine

    /// `engine`: every key optional, each an integer within the ranges of ``PatchEngineSettings``.
    private mutating func readEngine(_ entry: Entry) -> PatchEngineSettings? {
        guard let mapping = mappingValue(entry) else { return nil }
        let fields = fields(of: mapping, context: "'engine'", allowed: Self.engineKeys)
        var settings = PatchEngineSettings(location: fields.location, fieldLocations: fields.valueLocations)
        settings.sampleRate = optionalInt(fields["sampleRate"], in: PatchEngineSettings.sampleRateRange)
        settings.outputChannelCount = optionalInt(fields["outputs"], in: PatchEngineSettings.outputChannelCountRange)
        settings.inputChannelCount = optionalInt(fields["inputs"], in: PatchEngineSettings.inputChannelCountRange)
        settings.blockFrames = optionalInt(fields["blockFrames"], in: PatchEngineSettings.blockFramesRange)
        return settings
    }

    /// An optional integer field: absent or null gives `nil` silently.
    private mutating func optionalInt(_ entry: Entry?, in range: ClosedRange<Int>) -> Int? {
        guard let entry, !entry.isNull else { return nil }
        return int(entry, in: range)
    }

    // MARK: - buffers

    /// One `buffers` entry: a valid name and exactly one of `file` / `generate`; `start` (≥ 0) and
    /// `frames` (≥ 1) only with `file`. Name uniqueness is checked by ``readDocument(_:)``.
    private mutating func readBuffer(_ mapping: Node.Mapping) -> PatchBuffer? {
        let fields = fields(of: mapping, context: "buffer", allowed: Self.bufferKeys)
        let named = name(fields, what: "buffer name", context: "buffer")
        let label = named.map { "buffer '\($0.name)'" } ?? "buffer"
        var source: PatchBuffer.Source?
        var sourceLocation: SourceLocation?
        switch (fields["file"], fields["generate"]) {
        case (.some, .some(let generate)):
            report("\(label) has both 'file' and 'generate'; give only one", at: generate.keyLocation)
        case (nil, nil):
            report(
                "\(label) needs either 'file' (an audio file) or 'generate' (a synthetic signal)", at: fields.location)
        case (.some(let file), nil):
            sourceLocation = file.valueLocation
            source = string(file).map { .file(path: $0) }
        case (nil, .some(let generate)):
            sourceLocation = generate.valueLocation
            source = mappingValue(generate).flatMap { readGenerator($0) }.map { .generate($0) }
        }
        var start: Int?
        var frames: Int?
        for (key, lowest) in [("start", 0), ("frames", 1)] {
            guard let entry = fields[key], !entry.isNull else { continue }
            if fields["generate"] != nil {
                report("'\(key)' applies only to 'file' buffers", at: entry.keyLocation)
                continue
            }
            let value = int(entry, in: lowest...Int.max)
            if key == "start" { start = value } else { frames = value }
        }
        guard let named, let source else {
            if let named { leftOutNames.insert(named.name) }
            return nil
        }
        return PatchBuffer(
            name: named.name, source: source, start: start, frames: frames,
            location: fields.location, nameLocation: named.location,
            sourceLocation: sourceLocation, fieldLocations: fields.valueLocations)
    }

    /// `generate`: a known waveform, `frequency` exactly when the waveform is periodic, `duration`,
    /// and `amplitude` / `channels` with their defaults, all within ``PatchGenerator``'s ranges.
    private mutating func readGenerator(_ mapping: Node.Mapping) -> PatchGenerator? {
        let fields = fields(of: mapping, context: "'generate'", allowed: Self.generatorKeys)
        var waveform: PatchGenerator.Waveform?
        if let entry = fields["waveform"] {
            if let text = string(entry) {
                waveform = PatchGenerator.Waveform(rawValue: text)
                if waveform == nil {
                    let names = PatchGenerator.Waveform.allCases.map(\.rawValue)
                    let hint =
                        SpellingSuggestion.closest(to: text, among: names).map { " (did you mean '\($0)'?)" } ?? ""
                    report(
                        "unknown waveform '\(text)'\(hint); allowed: \(names.joined(separator: ", "))",
                        at: entry.valueLocation)
                }
            }
        } else {
            reportMissing("waveform", in: fields, context: "'generate'")
        }
        var frequency: Double?
        if let entry = fields["frequency"], !entry.isNull {
            if let waveform, !waveform.isPeriodic {
                report("'frequency' does not apply to waveform '\(waveform.rawValue)'", at: entry.keyLocation)
            } else {
                frequency = double(entry, requirement: "greater than 0 Hz") { $0 > 0 }
            }
        } else if let waveform, waveform.isPeriodic, !fields.suggested.contains("frequency") {
            report("waveform '\(waveform.rawValue)' needs 'frequency' (in Hz, greater than 0)", at: fields.location)
        }
        var duration: Double?
        if let entry = fields["duration"] {
            let maximum = Self.format(PatchGenerator.maximumDuration)
            duration = double(entry, requirement: "greater than 0 and at most \(maximum) seconds") {
                $0 > 0 && $0 <= PatchGenerator.maximumDuration
            }
        } else {
            reportMissing("duration", in: fields, context: "'generate'", detail: " (in seconds)")
        }
        var amplitude: Double? = PatchGenerator.defaultAmplitude
        if let entry = fields["amplitude"], !entry.isNull {
            amplitude = double(entry, requirement: "between 0 and 1") { PatchGenerator.amplitudeRange.contains($0) }
        }
        var channelCount: Int? = PatchGenerator.defaultChannelCount
        if let entry = fields["channels"], !entry.isNull {
            channelCount = int(entry, in: PatchGenerator.channelCountRange)
        }
        guard let waveform, let duration, let amplitude, let channelCount,
            frequency != nil || !waveform.isPeriodic
        else { return nil }
        return PatchGenerator(
            waveform: waveform, frequency: frequency, duration: duration, amplitude: amplitude,
            channelCount: channelCount, location: fields.location, fieldLocations: fields.valueLocations)
    }

    // MARK: - nodes

    /// One `nodes` entry: a valid name, a non-empty kind, and `params` whose values are scalars or
    /// flat lists. Kinds and parameter names are left to the engine.
    private mutating func readNode(_ mapping: Node.Mapping) -> PatchNode? {
        let fields = fields(of: mapping, context: "node", allowed: Self.nodeKeys)
        let named = name(fields, what: "node name", context: "node")
        let kind = requiredString(fields, key: "kind", context: named.map { "node '\($0.name)'" } ?? "node")
        var params: [PatchParameter] = []
        if let entry = fields["params"], !entry.isNull, let paramsMapping = mappingValue(entry) {
            for (key, keyLocation, value) in keyedEntries(of: paramsMapping, keyKind: "parameter") {
                let shown = named.map { "\($0.name).\(key)" } ?? key
                if let parameterValue = readParameterValue(value, key: shown) {
                    params.append(
                        PatchParameter(
                            key: key, value: parameterValue, keyLocation: keyLocation,
                            valueLocation: Self.location(of: value)))
                }
            }
        }
        guard let named, let kind else {
            if let named { leftOutNames.insert(named.name) }
            return nil
        }
        return PatchNode(
            name: named.name, kind: kind, params: params, location: fields.location,
            nameLocation: named.location, kindLocation: fields["kind"]?.valueLocation)
    }

    /// A scalar or a flat list of scalars; `nil` after reporting.
    private mutating func readParameterValue(_ node: Node, key: String) -> PatchValue? {
        if let scalar = node.scalar {
            if let value = Self.patchValue(Self.resolve(scalar)) { return value }
            report("parameter '\(key)' has no value", at: Self.location(of: node))
            return nil
        }
        guard let sequence = node.sequence else {
            report(
                "parameter '\(key)' must be a number, string, boolean or a list of them, found \(Self.describe(node))",
                at: Self.location(of: node))
            return nil
        }
        var elements: [PatchValue] = []
        var isValid = true
        for element in sequence {
            if let scalar = element.scalar, let value = Self.patchValue(Self.resolve(scalar)) {
                elements.append(value)
            } else {
                report(
                    "list in parameter '\(key)' may hold only numbers, strings and booleans, found \(Self.describe(element))",
                    at: Self.location(of: element))
                isValid = false
            }
        }
        return isValid ? .list(elements) : nil
    }

    // MARK: - connections

    /// One `connections` entry: `from` and `to`, each a valid "node[:bus]" endpoint.
    private mutating func readConnection(_ mapping: Node.Mapping) -> PatchConnection? {
        let fields = fields(of: mapping, context: "connection", allowed: Self.connectionKeys)
        let from = endpoint(fields, key: "from")
        let to = endpoint(fields, key: "to")
        guard let from, let to else { return nil }
        return PatchConnection(
            from: from, to: to, location: fields.location,
            fromLocation: fields["from"]?.valueLocation, toLocation: fields["to"]?.valueLocation)
    }

    /// The endpoint under `key`, parsed with ``PatchEndpoint/init(parsing:names:)``; `nil` after reporting.
    private mutating func endpoint(_ fields: Fields, key: String) -> PatchEndpoint? {
        guard let entry = fields[key] else {
            reportMissing(key, in: fields, context: "connection")
            return nil
        }
        guard let text = string(entry, allowEmpty: true) else { return nil }
        do {
            return try PatchEndpoint(parsing: text, names: names)
        } catch {
            report("invalid '\(key)': \(error.message)", at: entry.valueLocation)
            return nil
        }
    }

    // MARK: - taps

    /// One `taps` entry: a valid node name and a bus ≥ 0 (default 0).
    private mutating func readTap(_ mapping: Node.Mapping) -> PatchTap? {
        let fields = fields(of: mapping, context: "tap", allowed: Self.tapKeys)
        let node = name(fields, key: "node", what: "node name", context: "tap")
        var bus: Int? = 0
        if let entry = fields["bus"], !entry.isNull {
            bus = int(entry, in: 0...Int.max)
        }
        guard let node, let bus else { return nil }
        return PatchTap(node: node.name, bus: bus, location: fields.location, nodeLocation: node.location)
    }

    // MARK: - recorders

    /// A recorder: `name`, `node`, `path` (required), `format`, `encoding`, `duration` (> 0 seconds) and
    /// `record` (boolean, default true).
    private mutating func readRecorder(_ mapping: Node.Mapping) -> PatchRecorder? {
        let fields = fields(of: mapping, context: "recorder", allowed: Self.recorderKeys)
        let recorderName = name(fields, key: "name", what: "recorder name", context: "recorder")
        let node = name(fields, key: "node", what: "node name", context: "recorder")
        let path = requiredString(fields, key: "path", context: "recorder")
        var format: String?
        if let entry = fields["format"], !entry.isNull {
            format = requiredString(fields, key: "format", context: "recorder")
        }
        var encoding: String?
        if let entry = fields["encoding"], !entry.isNull {
            encoding = requiredString(fields, key: "encoding", context: "recorder")
            if let e = encoding, !["int16", "int24", "float32"].contains(e) {
                report("unknown encoding '\(e)' (int16, int24 or float32)", at: entry.valueLocation)
            }
        }
        var duration: Double?
        if let entry = fields["duration"], !entry.isNull {
            duration = double(entry, requirement: "more than 0 and at most 86400 seconds") { $0 > 0 && $0 <= 86_400 }
        }
        var record = true
        if let entry = fields["record"], !entry.isNull { record = bool(entry) ?? true }
        guard let recorderName, let node, let path else { return nil }
        return PatchRecorder(
            name: recorderName.name, node: node.name, path: path, format: format, encoding: encoding,
            duration: duration, record: record, location: fields.location, nodeLocation: node.location,
            pathLocation: fields["path"]?.valueLocation, formatLocation: fields["format"]?.valueLocation,
            encodingLocation: fields["encoding"]?.valueLocation)
    }

    // MARK: - jack

    /// `jack`: `connect` as a list of `{from, to}` non-empty port names, and a boolean
    /// `connectPhysical` (YAML 1.1 spellings accepted, as ``PatchValue/asBool``).
    private mutating func readJack(_ entry: Entry) -> PatchJackSettings? {
        guard let mapping = mappingValue(entry) else { return nil }
        let fields = fields(of: mapping, context: "'jack'", allowed: Self.jackKeys)
        var settings = PatchJackSettings(location: fields.location)
        settings.connections = readList(fields["connect"], what: "port connection") { reader, mapping in
            let fields = reader.fields(of: mapping, context: "JACK connection", allowed: Self.connectionKeys)
            let from = reader.requiredString(fields, key: "from", context: "JACK connection")
            let to = reader.requiredString(fields, key: "to", context: "JACK connection")
            guard let from, let to else { return nil }
            return PatchJackConnection(
                from: from, to: to, location: fields.location,
                fromLocation: fields["from"]?.valueLocation, toLocation: fields["to"]?.valueLocation)
        }
        if let entry = fields["connectPhysical"], !entry.isNull {
            settings.connectPhysical = bool(entry)
            settings.connectPhysicalLocation = entry.valueLocation
        }
        return settings
    }

    // MARK: - session

    /// `session`: the audio session's settings, each optional.
    private mutating func readSession(_ entry: Entry) -> PatchSessionSettings? {
        guard let mapping = mappingValue(entry) else { return nil }
        let fields = fields(of: mapping, context: "'session'", allowed: Self.sessionKeys)
        var settings = PatchSessionSettings(location: fields.location)
        if let entry = fields["pauseOnRouteLoss"], !entry.isNull { settings.pauseOnRouteLoss = bool(entry) }
        if let entry = fields["nowPlaying"], !entry.isNull {
            settings.nowPlaying = string(entry)
            settings.nowPlayingLocation = entry.valueLocation
        }
        settings.category = fields["category"].flatMap { sessionName($0, among: PatchSessionSettings.categories) }
        settings.mode = fields["mode"].flatMap { sessionName($0, among: PatchSessionSettings.modes) }
        if let entry = fields["duckLevel"], !entry.isNull {
            settings.duckLevel = double(entry, requirement: "between -120 and 0 dB") { (-120...0).contains($0) }
        }
        if let entry = fields["active"], !entry.isNull { settings.active = bool(entry) }
        if let entry = fields["monitorOtherAudio"], !entry.isNull { settings.monitorOtherAudio = bool(entry) }
        let category = settings.category ?? "soloAmbient"
        let options: [(String, WritableKeyPath<PatchSessionSettings, Bool?>, [String])] = [
            ("mixWithOthers", \.mixWithOthers, PatchSessionSettings.mixingOptionCategories),
            ("duckOthers", \.duckOthers, PatchSessionSettings.duckOthersCategories),
            (
                "interruptSpokenAudioAndMixWithOthers", \.interruptSpokenAudioAndMixWithOthers,
                PatchSessionSettings.mixingOptionCategories
            )
        ]
        for (key, path, categories) in options {
            guard let entry = fields[key], !entry.isNull, let on = bool(entry) else { continue }
            settings[keyPath: path] = on
            if on && !categories.contains(category) {
                report(
                    "'\(key)' does not apply to the \(category) category (it does to "
                        + categories.joined(separator: ", ") + ")", at: entry.keyLocation)
            }
        }
        return settings
    }

    /// A category or mode name, reported with a suggestion when it is none of `names`.
    private mutating func sessionName(_ entry: Entry, among names: [String]) -> String? {
        guard !entry.isNull, let text = string(entry) else { return nil }
        guard names.contains(text) else {
            let hint = SpellingSuggestion.closest(to: text, among: names).map { " (did you mean '\($0)'?)" } ?? ""
            report(
                "unknown session \(entry.key) '\(text)'\(hint); allowed: \(names.joined(separator: ", "))",
                at: entry.valueLocation)
            return nil
        }
        return text
    }
}

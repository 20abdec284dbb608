// Control side. Hot reload: a running engine's graph brought to an edited patch by a diff, so what
// stays keeps playing (`soundstage run --watch`, SIGHUP, `/patch/load s:path s:diff`).
import AudioGraph
import Patches

/// What a reload changed (for the log line, `/patch/reload` and tests).
public struct PatchReloadSummary: Sendable, Equatable, CustomStringConvertible {
    /// Nodes attached because the patch gained them.
    public var added: [String] = []
    /// Nodes detached (they fade out) because the patch lost them.
    public var removed: [String] = []
    /// Nodes whose kind changed: the old one fades out and a new one comes in under the same name.
    public var replaced: [String] = []
    /// Parameters set on nodes that stayed, as `node.parameter` (smoothed ones glide).
    public var changedParameters: [String] = []
    /// Audio connections made and removed.
    public var connected: [Connection] = []
    public var disconnected: [Connection] = []
    /// Buffers added or replaced, and removed.
    public var buffersLoaded: [String] = []
    public var buffersRemoved: [String] = []
    /// Edits a reload cannot apply to a running engine (they take effect when `run` starts again).
    public var needsRestart: [String] = []
    /// Audio files that could not be read (what needed them goes without, as in a load).
    public var warnings: [PatchDiagnostic] = []
    /// Why the diff could not be applied and the graph was replaced whole instead (nil: it was a diff).
    public var replacedWhole: String?

    public init() {}

    /// True when the running graph was left exactly as it was.
    public var isEmpty: Bool {
        replacedWhole == nil && added.isEmpty && removed.isEmpty && replaced.isEmpty && changedParameters.isEmpty
            && connected.isEmpty
            && disconnected.isEmpty && buffersLoaded.isEmpty && buffersRemoved.isEmpty
    }

    public var description: String {
        var parts: [String] = []
        func list(_ label: String, _ items: [String]) {
            if !items.isEmpty { parts.append("\(label) \(items.joined(separator: ", "))") }
        }
        list("added", added)
        list("removed", removed)
        list("replaced", replaced)
        list("changed", changedParameters)
        if !connected.isEmpty { parts.append("\(connected.count) connection(s) made") }
        if !disconnected.isEmpty { parts.append("\(disconnected.count) connection(s) removed") }
        list("buffers loaded", buffersLoaded)
        list("buffers removed", buffersRemoved)
        if let replacedWhole { return "the graph was replaced whole (the diff could not be applied: \(replacedWhole))" }
        return parts.isEmpty ? "no change" : parts.joined(separator: "; ")
    }
}

extension PatchLoader {
    /// Parses the patch at `path` and brings `engine`'s graph to it by a diff, in one batch (one
    /// program swap, every parameter change on the same cycle):
    ///
    /// - a node whose name and kind stay keeps running (a player is not restarted); the parameters the
    ///   edit changed (against `baseline`, the patch as last loaded) are set as OSC sets them, so
    ///   smoothed ones glide over the engine's ramp time. A parameter the edit removed goes back to its
    ///   default. Without a baseline every written parameter that differs from the live value is set.
    /// - nodes the patch gained are attached; nodes it lost (anything but `main` and `output`,
    ///   including nodes made over OSC) are detached, and fade out as a detach over OSC does.
    /// - a node whose kind changed is detached and a new one attached under its name.
    /// - audio connections become the patch's (connections into mixers fade in and out).
    /// - buffers the edit added or changed are (re)loaded; ones it removed are removed.
    ///
    /// The patch is first checked completely, as `/patch/load` checks it (`prepare`): on any error
    /// nothing changes and every problem is thrown with its line and column.
    public static func reload(path: String, into engine: Engine, baseline: PatchDocument?) throws(PatchLoadError)
        -> (document: PatchDocument, summary: PatchReloadSummary)
    {
        let document: PatchDocument
        do {
            document = try PatchParser.parse(contentsOf: path, names: .engine)
        } catch {
            throw PatchLoadError(diagnostics: error.diagnostics)
        }
        return (document, try reload(document, into: engine, baseline: baseline))
    }

    /// `reload(path:into:baseline:)` for a parsed document.
    public static func reload(_ document: PatchDocument, into engine: Engine, baseline: PatchDocument?)
        throws(PatchLoadError) -> PatchReloadSummary
    {
        let scratch = try prepare(document, for: engine)
        var summary = PatchReloadSummary()
        summary.warnings = scratch.warnings
        summary.needsRestart = restartOnlyChanges(from: baseline, to: document, running: engine.configuration)
        do {
            try engine.batch { () throws(EngineError) in
                try applyDiff(document, scratch: scratch.engine, to: engine, baseline: baseline, into: &summary)
            }
        } catch {
            // The patch is valid (the scratch engine built it), but the running engine refused a step of
            // the diff. What the batch did so far is applied, so the graph is made the patch's the sure
            // way: replaced whole, with a crossfade, as `/patch/load` does.
            var whole = PatchReloadSummary()
            whole.warnings = try apply(document, to: engine)
            whole.needsRestart = summary.needsRestart
            whole.replacedWhole = "\(error)"
            return whole
        }
        return summary
    }

    /// The body of the reload's batch. Reads the live graph inside the batch (under the engine's lock),
    /// so an OSC edit can neither interleave nor be missed.
    private static func applyDiff(
        _ document: PatchDocument, scratch: Engine, to engine: Engine, baseline: PatchDocument?,
        into summary: inout PatchReloadSummary
    ) throws(EngineError) {
        let builtNodes = Dictionary(uniqueKeysWithValues: scratch.nodes().map { ($0.name, $0) })
        let liveNodes = Dictionary(uniqueKeysWithValues: engine.nodes().map { ($0.name, $0) })
        let wanted = Dictionary(document.nodes.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        let before = baseline?.withoutLocations()
        let after = document.withoutLocations()

        // Buffers first, so new and changed material is there for the nodes. A buffer whose audio
        // changed (its entry, or the file on disk) replaces the live one, which gives the players that
        // use it the new material (`Engine.addBuffer`); one whose samples are the same is kept.
        let liveBuffers = Dictionary(engine.buffers().map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        for buffer in scratch.buffers() {
            if let live = liveBuffers[buffer.name], live.hasSameAudio(as: buffer) { continue }
            try engine.addBuffer(buffer)
            summary.buffersLoaded.append(buffer.name)
        }

        // Nodes that go: lost by the patch, or changing kind.
        for live in liveNodes.values.sorted(by: { $0.name < $1.name }) where !isBuiltIn(live.name) {
            guard let node = wanted[live.name] else {
                try engine.detach(live.name)
                summary.removed.append(live.name)
                continue
            }
            if node.kind != live.kind.rawValue {
                try engine.detach(live.name)
                summary.replaced.append(live.name)
            }
        }

        // Nodes that come, and parameters of nodes that stay, in the patch's order.
        for node in document.nodes {
            guard let kind = NodeKind(rawValue: node.kind), let built = builtNodes[node.name] else { continue }
            let written = parameters(of: node, built: built, in: document)
            if let live = liveNodes[node.name], live.kind == kind {
                let old = before?.node(named: node.name).flatMap { $0.kind == node.kind ? $0 : nil }
                let changes = retuning(
                    live: live, built: built, written: written, old: old, new: after.node(named: node.name))
                // A parameter fixed at creation (an EQ's band count, a voice processor's channels) that
                // the edit changed: the node is made again, as when its kind changes.
                let specs = kind.parameters(bandCount: 16)
                let fixed = changes.contains { change in specs.contains { $0.name == change.key && $0.isCreationOnly } }
                if fixed && !isBuiltIn(node.name) {
                    try engine.detach(node.name)
                    try engine.attach(kind, name: node.name, parameters: written)
                    summary.replaced.append(node.name)
                    continue
                }
                for (key, value) in changes {
                    try engine.set(node.name, key, to: value)
                    summary.changedParameters.append("\(node.name).\(key)")
                }
            } else if !isBuiltIn(node.name) {
                try engine.attach(kind, name: node.name, parameters: written)
                if liveNodes[node.name] == nil { summary.added.append(node.name) }
            }
        }

        // Connections: the patch's, exactly (the scratch engine resolved their buses).
        let wantedConnections = scratch.connections()
        let wantedSet = Set(wantedConnections)
        for connection in engine.connections() where !wantedSet.contains(connection) {
            try engine.disconnect(
                "\(connection.source):\(connection.sourceBus)",
                from: "\(connection.destination):\(connection.destinationBus)")
            summary.disconnected.append(connection)
        }
        let present = Set(engine.connections())
        for connection in wantedConnections where !present.contains(connection) {
            try engine.connect(
                "\(connection.source):\(connection.sourceBus)",
                to: "\(connection.destination):\(connection.destinationBus)")
            summary.connected.append(connection)
        }

        // Buffers the edit removed (buffers made over OSC, which no patch declared, are left alone).
        let declaredNow = Set(after.buffers.map(\.name))
        let declaredBefore = Set((before?.buffers ?? []).map(\.name))
        for name in declaredBefore.sorted() where !declaredNow.contains(name) && liveBuffers[name] != nil {
            try engine.removeBuffer(name)
            summary.buffersRemoved.append(name)
        }
    }

    /// The parameters to set on a node that stays, in the patch's order: those the edit changed (or,
    /// without a baseline node, those that differ from the live value); a parameter the edit removed
    /// returns to its default. Values already live are left out.
    private static func retuning(
        live: NodeInfo, built: NodeInfo, written: [String: ParameterValue], old: PatchNode?, new: PatchNode?
    ) -> [(key: String, value: ParameterValue)] {
        var keys = new?.params.map(\.key) ?? []
        for param in old?.params ?? [] where !keys.contains(param.key) { keys.append(param.key) }
        var changes: [(key: String, value: ParameterValue)] = []
        for key in keys {
            let newValue = new?.parameter(key)?.value
            if let old, old.parameter(key)?.value == newValue { continue }
            guard let target = newValue == nil ? built.parameters[key] : written[key] else { continue }
            // (A player's `file` is resolved against the patch in `written`; live it may be as written.)
            if live.parameters[key] == target || live.parameters[key] == built.parameters[key] { continue }
            changes.append((key, target))
        }
        return changes
    }

    /// The node's written parameters as the scratch engine took them (coerced and checked), with a
    /// player's `file` resolved against the new patch.
    private static func parameters(of node: PatchNode, built: NodeInfo, in document: PatchDocument) -> [String:
        ParameterValue]
    {
        var parameters: [String: ParameterValue] = [:]
        for param in node.params {
            guard var value = built.parameters[param.key] else { continue }
            if param.key == "file", let file = value.stringValue, !file.isEmpty {
                value = .string(document.resolvedPath(forFile: file))
            }
            parameters[param.key] = value
        }
        return parameters
    }

    private static func isBuiltIn(_ name: String) -> Bool { name == "main" || name == "output" }

    /// Edits of the patch that a running engine cannot take (said, not refused).
    static func restartOnlyChanges(
        from baseline: PatchDocument?, to document: PatchDocument, running: EngineConfiguration
    ) -> [String] {
        var notes: [String] = []
        // Said when the edit changed them (a patch at 48 kHz on a 44.1 kHz server is not news each time).
        if let rate = document.engine.sampleRate, Double(rate) != running.sampleRate,
            baseline?.engine.sampleRate != rate
        {
            notes.append("engine.sampleRate \(rate) (running at \(Int(running.sampleRate)) Hz, the JACK server's rate)")
        }
        if let frames = document.engine.blockFrames, frames != running.blockFrames,
            baseline?.engine.blockFrames != frames
        {
            notes.append("engine.blockFrames \(frames) (running with \(running.blockFrames))")
        }
        guard let baseline = baseline?.withoutLocations() else { return notes }
        let after = document.withoutLocations()
        if baseline.recorders != after.recorders { notes.append("recorders") }
        if baseline.session != after.session { notes.append("session") }
        if baseline.jack.connectPhysical != after.jack.connectPhysical { notes.append("jack.connectPhysical") }
        return notes
    }
}

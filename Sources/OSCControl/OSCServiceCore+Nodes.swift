// OSC thread. /node/new, /node/free, /node/list and the per-node addresses: parameters (set and get),
// /params, and player transport and scheduling.
import AudioFiles
import AudioGraph

extension OSCServiceCore {
    /// `/node/new`'s arguments: the kind, the name and the initial parameters (file paths resolved inside
    /// the file roots).
    func nodeNewArguments(_ r: OSCRequest) throws(OSCFailure)
        -> (kind: NodeKind, name: String, parameters: [String: ParameterValue])
    {
        var a = OSCArguments(r)
        let kindName = try a.string("kind")
        let name = try a.string("name")
        guard let kind = NodeKind(rawValue: kindName) else {
            throw OSCFailure(
                .unknownKind,
                "unknown node kind '\(OSCText.sanitized(kindName))' (kinds: \(NodeKind.allNames))")
        }
        var parameters: [String: ParameterValue] = [:]
        while !a.isAtEnd {
            let key = try a.string("parameter name")
            let argument = try a.any("value of '\(key)'")
            guard let value = argument.parameterValue else {
                throw a.failure("the value of '\(OSCText.sanitized(key))' has the unsupported type \(argument.typeTag)")
            }
            guard parameters[key] == nil else {
                throw a.failure("parameter '\(OSCText.sanitized(key))' is given twice")
            }
            parameters[key] = value
        }
        // Files (a player's audio, an environment's SOFA set) are confined to the file roots.
        for (key, value) in parameters where kind.isFilePathParameter(key) {
            if case .string(let path) = value, !path.isEmpty { parameters[key] = .string(try resolve(path)) }
        }
        return (kind, name, parameters)
    }

    /// `/node/new s:kind s:name [s:key value]…`
    func nodeNew(_ r: OSCRequest) throws(OSCFailure) {
        let (kind, name, parameters) = try nodeNewArguments(r)
        if parameters.contains(where: { kind.isFilePathParameter($0.key) && $0.value.stringValue?.isEmpty == false }) {
            // Decoding the file would stall the OSC thread: attach on the worker.
            let engine = self.engine
            let client = r.client.detached
            let initial = parameters
            runJob {
                do throws(EngineError) {
                    try engine.attach(kind, name: name, parameters: initial)
                    return { core in
                        core.mirror.dirty = true
                        core.done(client, "/node/new", [.string(name)])
                    }
                } catch {
                    let failure = OSCFailure(error)
                    return { core in core.sendError(client, address: "/node/new", failure) }
                }
            }
            return
        }
        try engineCall { () throws(EngineError) in try engine.attach(kind, name: name, parameters: parameters) }
        mirror.dirty = true
        done(r.client, "/node/new", [.string(name)])
    }

    /// `/node/free`'s names.
    static func nodeFreeArguments(_ r: OSCRequest) throws(OSCFailure) -> [String] {
        var a = OSCArguments(r)
        var names = [try a.string("name")]
        while !a.isAtEnd { names.append(try a.string("name")) }
        return names
    }

    /// `/node/free s:name…` — one `/done /node/free s:name` per node freed.
    func nodeFree(_ r: OSCRequest) throws(OSCFailure) {
        let names = try Self.nodeFreeArguments(r)
        // All or nothing: one unknown or built-in name frees none of them.
        let playing = names.filter { isPlaying($0) }
        do throws(EngineError) {
            try engine.detach(names)
        } catch {
            throw OSCFailure(error)
        }
        mirror.dirty = true
        for name in names { done(r.client, "/node/free", [.string(name)]) }
        for name in playing { notifyPlayerStopped(name, sampleTime: engine.sampleTime) }
    }

    /// `/node/list` → `/node/info s:name s:kind i:channels i:active` per node, then `/reply s:/node/list`.
    func nodeList(_ r: OSCRequest) throws(OSCFailure) {
        try OSCArguments(r).end()
        for node in engine.nodes() {
            reply(
                r.client,
                OSCMessage(
                    "/node/info",
                    [
                        .string(node.name), .string(node.kind.rawValue), .int32(Int32(node.outputChannelCount)),
                        .int32(node.isActive ? 1 : 0)
                    ]))
        }
        reply(r.client, OSCMessage("/reply", [.string("/node/list")]))
    }

    /// `/node/kinds` → `/node/kinds s:kind…`: every kind `/node/new` makes on this engine, in `NodeKind`
    /// order (never `output`, which the engine has exactly one of; `input` only with capture channels).
    func nodeKinds(_ r: OSCRequest) throws(OSCFailure) {
        try OSCArguments(r).end()
        let hasCapture = engine.configuration.inputChannelCount > 0
        let kinds = NodeKind.creatableKinds.filter { $0 != .input || hasCapture }
        reply(r.client, OSCMessage(r.address, kinds.map { .string($0.rawValue) }))
    }

    /// `/node/<name>/…`
    func nodeAddress(_ r: OSCRequest, frame: Int64?) throws(OSCFailure) {
        let rest = r.address.dropFirst("/node/".count)
        guard let slash = rest.firstIndex(of: "/") else {
            throw OSCFailure(.unknownAddress, "no address '\(OSCText.sanitized(r.address))'")
        }
        let name = String(rest[..<slash])
        let tail = String(rest[rest.index(after: slash)...])
        guard !name.isEmpty, !tail.isEmpty else {
            throw OSCFailure(.unknownAddress, "no address '\(OSCText.sanitized(r.address))'")
        }
        if let route = Self.nodeRoutes[tail] {
            try route(self, r, name, frame)
        } else if tail.contains("/") {
            throw OSCFailure(.unknownAddress, "no address '\(OSCText.sanitized(r.address))'")
        } else {
            try parameter(r, node: name, parameter: tail, frame: frame)
        }
    }

    /// A handler of `/node/<name>/<tail>`: the core, the request, the node's name and the frame.
    typealias NodeRoute =
        @Sendable (OSCServiceCore, OSCRequest, _ node: String, _ frame: Int64?) throws(OSCFailure) -> Void

    /// The node commands and queries by tail; any other tail without a slash is a parameter. The table
    /// docs/OSC.md's `/node/<name>/…` rows are checked against.
    static let nodeRoutes: [String: NodeRoute] = [
        "params": { core, r, name, _ throws(OSCFailure) in try core.nodeParams(r, node: name) },
        "play": { core, r, name, frame throws(OSCFailure) in
            try core.transport(r, node: name, verb: "play", frame: frame)
        },
        "pause": { core, r, name, frame throws(OSCFailure) in
            try core.transport(r, node: name, verb: "pause", frame: frame)
        },
        "stop": { core, r, name, frame throws(OSCFailure) in
            try core.transport(r, node: name, verb: "stop", frame: frame)
        },
        "schedule/buffer": { core, r, name, frame throws(OSCFailure) in
            try core.scheduleBuffer(r, node: name, frame: frame)
        },
        "schedule/file": { core, r, name, _ throws(OSCFailure) in try core.scheduleFile(r, node: name) },
        "enqueue": { core, r, name, frame throws(OSCFailure) in try core.enqueue(r, node: name, frame: frame) },
        "prepare": { core, r, name, _ throws(OSCFailure) in
            try OSCArguments(r).end()
            let ready = try core.engineCall { () throws(EngineError) in try core.engine.prepareToPlay(name) }
            core.done(r.client, r.address, [.int32(ready ? 1 : 0)])
        },
        "fade": { core, r, name, frame throws(OSCFailure) in try core.fade(r, node: name, frame: frame) },
        "position": { core, r, name, frame throws(OSCFailure) in
            try core.vector(r, node: name, tail: "position", frame: frame)
        },
        "velocity": { core, r, name, frame throws(OSCFailure) in
            try core.vector(r, node: name, tail: "velocity", frame: frame)
        },
        "direction": { core, r, name, frame throws(OSCFailure) in
            try core.vector(r, node: name, tail: "direction", frame: frame)
        },
        "listener/position": { core, r, name, frame throws(OSCFailure) in
            try core.vector(r, node: name, tail: "listener/position", frame: frame)
        },
        "listener/orientation": { core, r, name, frame throws(OSCFailure) in
            try core.listenerOrientation(r, node: name, frame: frame)
        },
        "power": { core, r, name, _ throws(OSCFailure) in try core.power(r, node: name) },
        "lastRenderTime": { core, r, name, _ throws(OSCFailure) in try core.lastRenderTime(r, node: name) },
        "playerTime": { core, r, name, _ throws(OSCFailure) in try core.playerTime(r, node: name) },
        "reset": { core, r, name, _ throws(OSCFailure) in
            try OSCArguments(r).end()
            try core.engineCall { () throws(EngineError) in try core.engine.resetNode(name) }
            core.done(r.client, r.address)
        }
    ]

    /// `/node/<name>/<param> value` sets (no reply); without a value it replies on the same address.
    private func parameter(_ r: OSCRequest, node: String, parameter: String, frame: Int64?) throws(OSCFailure) {
        if r.arguments.isEmpty {
            let value = try engineCall { () throws(EngineError) in try engine.get(node, parameter) }
            reply(r.client, OSCMessage(r.address, [OSCArgument(value)]))
            return
        }
        let a = OSCArguments(r)
        guard r.arguments.count == 1 else {
            throw a.failure("takes one value to set the parameter, or none to read it")
        }
        guard let value = r.arguments[0].parameterValue else {
            throw OSCFailure(
                .wrongType,
                "\(node).\(OSCText.sanitized(parameter)) cannot take a value of OSC type "
                    + "\(r.arguments[0].typeTag)")
        }
        // A file the node reads: confined to the roots now, read on the worker. (On a kind without that
        // parameter the engine refuses it below, before any file is touched.)
        if case .string(let path) = value, !path.isEmpty, try kind(of: node).isFilePathParameter(parameter) {
            let resolved = try resolve(path)
            // A live engine may finish the file in the background and report a failure as an event.
            jobs.awaitingFiles[node] = (r.client.detached, r.address)
            let engine = self.engine
            let client = r.client.detached
            let address = r.address
            runJob {
                do throws(EngineError) {
                    try engine.set(node, parameter, to: .string(resolved))
                    return { _ in }
                } catch {
                    let failure = OSCFailure(error)
                    return { core in core.sendError(client, address: address, failure) }
                }
            }
            return
        }
        try engineCall { () throws(EngineError) in try engine.set(node, parameter, to: value, atSampleTime: frame) }
    }

    /// `/node/<name>/params` → `/node/<name>/param s:name s:type s:unit min max default value s:flags [s:choice…]`
    /// per parameter, then `/reply s:/node/<name>/params`.
    private func nodeParams(_ r: OSCRequest, node: String) throws(OSCFailure) {
        try OSCArguments(r).end()
        guard let info = engine.nodes().first(where: { $0.name == node }) else {
            throw OSCFailure(.unknownNode, "no node named '\(OSCText.sanitized(node))'")
        }
        for spec in info.kind.parameters(bandCount: info.parameters["bands"]?.intValue ?? NodeKind.defaultEQBandCount) {
            reply(
                r.client,
                OSCMessage(
                    "/node/\(node)/param",
                    [.string(spec.name), .string(spec.type.rawValue), .string(spec.unit)] + Self.range(of: spec)
                        + [
                            OSCArgument(spec.defaultValue),
                            OSCArgument(info.parameters[spec.name] ?? spec.defaultValue),
                            .string(Self.flags(of: spec))
                        ] + spec.choices.map { .string($0) }))
        }
        reply(r.client, OSCMessage("/reply", [.string(r.address)]))
    }

    /// A parameter's `min max` as `/params` sends them: in the parameter's own type (an int's 2147483647
    /// is not a float's 2147483648.0); a choice parameter's are the indexes setting it accepts,
    /// `i:0 i:count−1`; `N` for a side without a bound.
    static func range(of spec: ParameterSpec) -> [OSCArgument] {
        if !spec.choices.isEmpty { return [.int32(0), .int32(Int32(clamping: spec.choices.count - 1))] }
        func bound(_ value: Double?) -> OSCArgument {
            guard let value else { return .null }
            return spec.type == .int ? .int32(Int32(clamping: Int(value))) : .float(Float(value))
        }
        return [bound(spec.minimum), bound(spec.maximum)]
    }

    /// A parameter's flags as `/params` sends them, comma-separated: `smoothed`, `readonly`, `creation`
    /// (given only when the node is made), `file` (a path the engine reads) and `choice` (its values
    /// follow the flags).
    static func flags(of spec: ParameterSpec) -> String {
        var flags: [String] = []
        if spec.isSmoothed { flags.append("smoothed") }
        if spec.isReadOnly { flags.append("readonly") }
        if spec.isCreationOnly { flags.append("creation") }
        if spec.isFilePath { flags.append("file") }
        if !spec.choices.isEmpty { flags.append("choice") }
        return flags.joined(separator: ",")
    }

    /// `/node/<name>/play|pause|stop [t:time | h:sampleTime]`
    private func transport(_ r: OSCRequest, node: String, verb: String, frame: Int64?) throws(OSCFailure) {
        var a = OSCArguments(r)
        var time = frame
        if !a.isAtEnd {
            let argument = try a.any("time")
            switch argument {
            case .timetag(let tag):
                time = tag.isImmediate ? nil : sampleTime(for: tag, client: r.client, address: r.address)
            case .int32, .int64:
                guard let value = argument.integerValue, value >= 0 else {
                    throw a.failure("the engine sample time must be ≥ 0")
                }
                time = value
            case .float(let value) where value.rounded() == value && value >= 0 && value < 9e15:
                // Pd and many controllers send every number as a float: a whole one is a sample time.
                time = Int64(value)
            case .double(let value) where value.rounded() == value && value >= 0 && value < 9e15:
                time = Int64(value)
            default:
                throw a.failure(
                    "the time must be an OSC time tag (t) or an engine sample time (h or i, or a whole f ≥ 0)")
            }
        }
        try a.end()
        switch verb {
        case "play":
            try engineCall { () throws(EngineError) in try engine.play(node, atSampleTime: time) }
        case "pause":
            try engineCall { () throws(EngineError) in try engine.pause(node, atSampleTime: time) }
        default:
            let wasPlaying = isPlaying(node)
            try engineCall { () throws(EngineError) in try engine.stop(node, atSampleTime: time) }
            if wasPlaying { notifyPlayerStopped(node, sampleTime: time ?? engine.sampleTime) }
        }
        done(r.client, r.address)
    }

    /// `/node/<name>/fade f:volume f:seconds` — AVAudioPlayer.setVolume(_:fadeDuration:) on any source.
    private func fade(_ r: OSCRequest, node: String, frame: Int64?) throws(OSCFailure) {
        var a = OSCArguments(r)
        let volume = try a.double("volume")
        let seconds = try a.double("fade duration (s)")
        try a.end()
        try engineCall { () throws(EngineError) in
            try engine.fadeVolume(node, to: volume, over: seconds, atSampleTime: frame)
        }
        done(r.client, r.address, [.float(Float(volume)), .float(Float(seconds))])
    }

    /// `/node/<name>/position|velocity|direction f:x f:y f:z` (a 3D source) and
    /// `/node/<env>/listener/position f:x f:y f:z`: the three coordinates as one move. Without
    /// arguments it replies with the three values.
    private func vector(_ r: OSCRequest, node: String, tail: String, frame: Int64?) throws(OSCFailure) {
        let name = tail == "listener/position" ? "listener" : tail
        if r.arguments.isEmpty {
            var values: [OSCArgument] = []
            for axis in ["X", "Y", "Z"] {
                let value = try engineCall { () throws(EngineError) in try engine.get(node, name + axis) }
                values.append(OSCArgument(value))
            }
            reply(r.client, OSCMessage(r.address, values))
            return
        }
        var a = OSCArguments(r)
        let x = try a.double("x"), y = try a.double("y"), z = try a.double("z")
        try a.end()
        try engineCall { () throws(EngineError) in try engine.setVector(node, name, x, y, z, atSampleTime: frame) }
    }

    /// `/node/<env>/listener/orientation f:yaw f:pitch f:roll` (degrees) or
    /// `… f:forwardX f:forwardY f:forwardZ f:upX f:upY f:upZ` (OpenAL's AL_ORIENTATION).
    private func listenerOrientation(_ r: OSCRequest, node: String, frame: Int64?) throws(OSCFailure) {
        var a = OSCArguments(r)
        if r.arguments.isEmpty {
            var values: [OSCArgument] = []
            for key in ["listenerYaw", "listenerPitch", "listenerRoll"] {
                values.append(OSCArgument(try engineCall { () throws(EngineError) in try engine.get(node, key) }))
            }
            reply(r.client, OSCMessage(r.address, values))
            return
        }
        var numbers: [Double] = []
        while !a.isAtEnd { numbers.append(try a.double("angle or vector component")) }
        switch numbers.count {
        case 3:
            try engineCall { () throws(EngineError) in
                try engine.setListenerAngles(
                    node, yaw: numbers[0], pitch: numbers[1], roll: numbers[2], atSampleTime: frame)
            }
        case 6:
            try engineCall { () throws(EngineError) in
                try engine.setListenerOrientation(
                    node, forward: (numbers[0], numbers[1], numbers[2]),
                    up: (numbers[3], numbers[4], numbers[5]), atSampleTime: frame)
            }
        default:
            throw a.failure("takes yaw pitch roll (3 numbers, degrees) or forward and up vectors (6 numbers)")
        }
    }

    /// `/node/<name>/power` → `/node/<name>/power i:channels f:average_1…N f:peak_1…N` (dBFS since the
    /// previous request; AVAudioPlayer.updateMeters then averagePower/peakPower).
    private func power(_ r: OSCRequest, node: String) throws(OSCFailure) {
        try OSCArguments(r).end()
        let levels = try engineCall { () throws(EngineError) in try engine.audioPlayerPower(node) }
        reply(
            r.client,
            OSCMessage(
                r.address,
                [.int32(Int32(levels.count))] + levels.map { .float($0.average) }
                    + levels.map { .float($0.peak) }))
    }

    /// `/node/<name>/schedule/buffer s:buffer [s:options]` — the buffer becomes the player's material from
    /// its start ("loop" in the options loops it). Sample-accurate inside a timed bundle.
    private func scheduleBuffer(_ r: OSCRequest, node: String, frame: Int64?) throws(OSCFailure) {
        var a = OSCArguments(r)
        let buffer = try a.string("buffer name")
        let optionText = try a.optionalString("options") ?? ""
        try a.end()
        var loop = false
        for word in optionText.split(whereSeparator: { $0 == "," || $0 == " " || $0 == "|" }) {
            switch word.lowercased() {
            case "loop", "loops": loop = true
            default: throw a.failure("unknown option '\(OSCText.sanitized(String(word)))' (supported: loop)")
            }
        }
        guard try kind(of: node) == .player else {
            throw OSCFailure(.notAllowed, "'\(node)' is not a player")
        }
        try engineCall { () throws(EngineError) in
            try engine.batch { () throws(EngineError) in
                try engine.set(node, "start", to: .int(0), atSampleTime: frame)
                try engine.set(node, "frames", to: .int(0), atSampleTime: frame)
                try engine.set(node, "loop", to: .bool(loop), atSampleTime: frame)
                try engine.set(node, "buffer", to: .string(buffer), atSampleTime: frame)
            }
        }
        done(r.client, r.address, [.string(buffer)])
    }

    /// `/node/<name>/schedule/file s:path [h:startFrame] [h:frameCount]` — decoded on the worker, then
    /// the player's material (frames at the engine rate); `/done … s:path i:frames i:channels`.
    private func scheduleFile(_ r: OSCRequest, node: String) throws(OSCFailure) {
        var a = OSCArguments(r)
        let path = try a.string("path")
        let start = try a.optionalInteger("start frame")
        let count = try a.optionalInteger("frame count")
        try a.end()
        guard (start ?? 0) >= 0, (start ?? 0) <= Int64(Int32.max), (count ?? 1) >= 1, (count ?? 1) <= Int64(Int32.max)
        else {
            throw OSCFailure(.outOfRange, "start must be 0…\(Int32.max) and the frame count 1…\(Int32.max)")
        }
        guard try kind(of: node) == .player else {
            throw OSCFailure(.notAllowed, "'\(node)' is not a player")
        }
        let resolved = try resolve(path)
        let files = self.files
        let client = r.client.detached
        let address = r.address
        runJob {
            do throws(EngineError) {
                let (frames, channels) = try files.scheduleFile(
                    on: node, path: resolved, startFrame: start.map { Int($0) },
                    frameCount: count.map { Int($0) })
                return { core in
                    core.done(
                        client, address, [.string(path), .int32(Int32(clamping: frames)), .int32(Int32(channels))])
                }
            } catch {
                let failure = OSCFailure(error)
                return { core in core.sendError(client, address: address, failure) }
            }
        }
    }

    // MARK: Helpers

    /// The kind of an existing node.
    func kind(of node: String) throws(OSCFailure) -> NodeKind {
        guard let info = engine.nodes().first(where: { $0.name == node }) else {
            throw OSCFailure(.unknownNode, "no node named '\(OSCText.sanitized(node))'")
        }
        return info.kind
    }

    func isPlaying(_ node: String) -> Bool {
        (try? engine.get(node, "playing"))?.boolValue == true
    }

    /// The clock anchor to convert time tags with: the engine's latest, held steady while it agrees.
    func currentClockAnchor() -> OSCClockMapping.Anchor? {
        guard let latest = engine.clockAnchor().map(OSCClockMapping.Anchor.init) else { return nil }
        return scheduler.clockReference.update(with: latest)
    }

    /// `/node/<name>/lastRenderTime` → `/node/<name>/lastRenderTime h:sampleTime t:timetag`: when the last
    /// render cycle began (AVAudioNode.lastRenderTime: engine frame and wall-clock time), or `N N` before
    /// the engine has rendered.
    func lastRenderTime(_ r: OSCRequest, node: String) throws(OSCFailure) {
        try OSCArguments(r).end()
        _ = try kind(of: node)
        guard let last = engine.clockAnchor()?.sampleTime else {
            reply(r.client, OSCMessage(r.address, [.null, .null]))
            return
        }
        reply(r.client, OSCMessage(r.address, [.int64(last), .timetag(timetag(forSampleTime: last))]))
    }

    /// `/node/<name>/playerTime [h:sampleTime | t:timetag]` → `/node/<name>/playerTime h:sampleTime
    /// h:playerTime` (AVAudioPlayerNode.playerTime(forNodeTime:)): the player's timeline at that engine
    /// frame (default: the last render time), `N` for the player time when it is not playing.
    func playerTime(_ r: OSCRequest, node: String) throws(OSCFailure) {
        var a = OSCArguments(r)
        var at: Int64?
        if !a.isAtEnd {
            let argument = try a.any("node time")
            switch argument {
            case .timetag(let tag):
                guard let anchor = currentClockAnchor() else { break }
                let now = SystemClock.pairedNow()
                at = OSCClockMapping.sampleTime(
                    for: tag, wallNow: now.wall, monotonicNow: now.monotonicNanoseconds,
                    anchor: anchor)
            case .int32, .int64:
                guard let value = argument.integerValue, value >= 0 else {
                    throw a.failure("the sample time must be ≥ 0")
                }
                at = value
            default:
                throw a.failure("the node time must be an engine sample time (h or i) or an OSC time tag (t)")
            }
        }
        try a.end()
        guard try kind(of: node).isPlayer else {
            throw OSCFailure(.notAllowed, "'\(OSCText.sanitized(node))' is not a player or audioplayer")
        }
        let nodeTime = at ?? engine.clockAnchor()?.sampleTime ?? engine.sampleTime
        let time = try engineCall { () throws(EngineError) in try engine.playerTime(node, forSampleTime: nodeTime) }
        reply(r.client, OSCMessage(r.address, [.int64(nodeTime), time.map { .int64($0) } ?? .null]))
    }

    /// The wall-clock time tag of engine frame `sampleTime` through the clock anchor in use.
    func timetag(forSampleTime sampleTime: Int64) -> OSCTimetag {
        guard let anchor = currentClockAnchor() else { return .immediate }
        let now = SystemClock.pairedNow()
        return OSCClockMapping.timetag(
            forSampleTime: sampleTime, wallNow: now.wall, monotonicNow: now.monotonicNanoseconds,
            anchor: anchor)
    }

    /// The engine frame of a time tag given as an argument; a past tag is reported with /late.
    func sampleTime(for tag: OSCTimetag, client: ClientRef, address: String) -> Int64? {
        guard let anchor = currentClockAnchor() else { return nil }
        let now = SystemClock.pairedNow()
        let frame = OSCClockMapping.sampleTime(
            for: tag, wallNow: now.wall, monotonicNow: now.monotonicNanoseconds,
            anchor: anchor)
        let next = engine.sampleTime
        let late = max(-tag.seconds(since: now.wall), Double(next - frame) / anchor.sampleRate)
        if late > 0 {
            counters.lateBundles.add(1)
            if clients.mayReportError(client.key, now: SystemClock.monotonicSeconds()) {
                reply(client, OSCMessage("/late", [.string(address), .float(Float(late))]))
            }
        }
        return frame
    }
}

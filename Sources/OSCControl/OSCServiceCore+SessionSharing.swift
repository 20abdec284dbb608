// OSC thread. Sessions sharing one JACK server the way apps share a phone's audio: category, mode and
// options, activation, interruptions by other sessions, ducking and the rig's silent switch. Each session
// publishes its state as JACK metadata on its client and reads the others' when the server says metadata
// or clients changed. See docs/SESSION.md.
import AudioGraph
import Foundation

/// The session's settings at start (a patch's `session:` section).
public struct SessionStart: Sendable, Equatable {
    public var category: SessionCategory?
    public var mode: SessionMode?
    public var options = SessionOptions()
    public var duckLevel: Double?
    /// Activate the session at start.
    public var activates = false
    /// Listen to the other clients that play (`monitorOtherAudio`).
    public var monitorsOtherAudio = false

    public init(
        category: SessionCategory? = nil, mode: SessionMode? = nil, options: SessionOptions = SessionOptions(),
        duckLevel: Double? = nil, activates: Bool = false
    ) {
        self.category = category
        self.mode = mode
        self.options = options
        self.duckLevel = duckLevel
        self.activates = activates
    }
}

extension OSCServiceCore {
    /// How long ducking and un-ducking glide, and how long the silent switch takes to mute.
    static let duckFadeSeconds = 0.25
    static let muteFadeSeconds = 0.05

    /// Applies the patch's session settings and publishes the state (at start).
    func startSession(_ start: SessionStart) {
        session.published.category = SessionCategory.starting(
            start.category, hasInputs: engine.configuration.inputChannelCount > 0)
        applyCategoryPorts()
        if let mode = start.mode { session.published.mode = mode }
        session.published.options = start.options
        if let level = start.duckLevel { session.published.duckLevel = level }
        if start.activates { activateSession() }
        if start.monitorsOtherAudio, host?.setOtherAudioMonitoring(true) == nil { session.monitorsOtherAudio = true }
        publishSession()
    }

    /// Publishes the session's state and the now-playing information on our client, when they changed.
    func publishSession() {
        let properties = session.published.properties.merging(session.nowPlayingProperties) { a, _ in a }
        guard properties != session.lastPublished else { return }
        session.lastPublished = properties
        host?.publishProperties(properties, writingLast: SessionPeerState.keysWrittenLast)
    }

    /// Now (nanoseconds of the realtime clock): activations and the silent switch are ordered by it
    /// across the sessions of one machine.
    static func sessionClock() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return UInt64(now.tv_sec) &* 1_000_000_000 &+ UInt64(now.tv_nsec)
    }

    /// Activates the session: a later activation than every other, so the active sessions it does not
    /// mix with are interrupted (they see it in its metadata). Ends any interruption by another session
    /// without resuming (the players stay paused; the user decides).
    func activateSession() {
        for name in session.interruptingPeers.keys.sorted() {
            endInterruption(source: .peer(name), shouldResume: false)
        }
        session.interruptingPeers = [:]
        session.everActivated = true
        session.published.isActive = true
        session.published.notifiedOthers = false
        session.published.activation = max(Self.sessionClock(), session.published.activation + 1)
    }

    /// `/session/activate` → `/done`.
    func sessionActivate(_ r: OSCRequest) throws(OSCFailure) {
        try OSCArguments(r).end()
        activateSession()
        publishSession()
        done(r.client, r.address)
    }

    /// `/session/deactivate [i:notifyOthers]` → `/done`. With notifyOthers, the sessions this one
    /// interrupted end their interruption with shouldResume 1.
    func sessionDeactivate(_ r: OSCRequest) throws(OSCFailure) {
        var a = OSCArguments(r)
        let notify = a.isAtEnd ? false : try a.flag("notifyOthers")
        try a.end()
        // Deactivated, the session takes part in sharing the server (and reads `inactive`).
        session.everActivated = true
        session.published.isActive = false
        session.published.notifiedOthers = notify
        publishSession()
        done(r.client, r.address)
    }

    /// `/session/category [s]`: set → `/done` (the options are cleared, as a category change clears
    /// them on iOS; subscribers get a route change `categoryChange`); get → the category.
    func sessionCategory(_ r: OSCRequest) throws(OSCFailure) {
        var a = OSCArguments(r)
        if a.isAtEnd {
            reply(r.client, OSCMessage(r.address, [.string(session.published.category.rawValue)]))
            return
        }
        let text = try a.string("category")
        try a.end()
        guard let category = SessionCategory(rawValue: text) else {
            throw OSCFailure(
                .badArguments,
                "\(r.address): no category '\(OSCText.sanitized(text))' (categories: "
                    + SessionCategory.allCases.map(\.rawValue).joined(separator: ", ") + ")")
        }
        let changed = category != session.published.category
        let previous = (host?.route() ?? []).joined(separator: ",")
        session.published.category = category
        session.published.options = SessionOptions()
        let problems = applyCategoryPorts()
        publishSession()
        applySessionGain()
        if !problems.isEmpty {
            throw OSCFailure(.unsupported, "\(r.address): " + problems.joined(separator: "; "))
        }
        done(r.client, r.address)
        if changed {
            let current = (host?.route() ?? []).joined(separator: ",")
            notify(
                OSCMessage("/session/route_change", [.string("categoryChange"), .string(previous), .string(current)]))
        }
    }

    /// `/session/overrideOutputPort s:ports` (comma-separated JACK ports, or `none`) → `/done`: the outputs
    /// play to those ports only, or back to where they played (iOS's overrideOutputAudioPort); subscribers
    /// get `/session/route_change s:override`. `/error 61` naming a port that does not exist (nothing
    /// moves).
    func sessionOverrideOutputPort(_ r: OSCRequest) throws(OSCFailure) {
        var a = OSCArguments(r)
        let text = try a.string("ports or none")
        try a.end()
        guard let host else { throw OSCFailure(.unsupported, "\(r.address): this engine has no JACK host") }
        let ports = text == "none" || text.isEmpty ? nil : text.split(separator: ",").map(String.init)
        let previous = host.route().joined(separator: ",")
        let problems = host.overrideOutputs(ports)
        if !problems.isEmpty { throw OSCFailure(.badArguments, "\(r.address): " + problems.joined(separator: "; ")) }
        done(r.client, r.address)
        let current = host.route().joined(separator: ",")
        if current != previous {
            notify(OSCMessage("/session/route_change", [.string("override"), .string(previous), .string(current)]))
        }
    }

    /// Registers the main ports the category keeps and unregisters the others. Returns problems.
    @discardableResult
    func applyCategoryPorts() -> [String] {
        let ports = session.published.category.mainPorts
        return host?.setMainPorts(outputs: ports.outputs, inputs: ports.inputs) ?? []
    }

    /// `/session/mode [s]`: set → `/done` (chat modes turn the voice processors on, measurement turns
    /// them off); get → the mode.
    func sessionMode(_ r: OSCRequest) throws(OSCFailure) {
        var a = OSCArguments(r)
        if a.isAtEnd {
            reply(r.client, OSCMessage(r.address, [.string(session.published.mode.rawValue)]))
            return
        }
        let text = try a.string("mode")
        try a.end()
        guard let mode = SessionMode(rawValue: text) else {
            throw OSCFailure(
                .badArguments,
                "\(r.address): no mode '\(OSCText.sanitized(text))' (modes: "
                    + SessionMode.allCases.map(\.rawValue).joined(separator: ", ") + ")")
        }
        session.published.mode = mode
        applyModeToVoiceProcessors()
        publishSession()
        done(r.client, r.address)
    }

    /// Chat modes turn voice processing on: every voice processor is un-bypassed, and an input without
    /// voice processing is made again with it (it is fixed at creation), keeping its parameters and
    /// connections, in one program swap. Measurement bypasses every processor; other modes leave them.
    /// An input whose voice reaches main is left as it is: its processor would hear the engine's output,
    /// its own voice in it, and cancel the voice as an echo of itself (`VoiceSelfReference`); a rig that
    /// sends the microphone out through main has a voice processor of its own, or none.
    func applyModeToVoiceProcessors() {
        let mode = session.published.mode
        guard mode.processesVoice || mode == .measurement else { return }
        let connections = engine.connections()
        for node in engine.nodes() {
            let processes = node.kind == .voiceprocessor || node.parameters["voiceProcessing"] == .bool(true)
            if node.kind == .input && !processes && mode.processesVoice {
                if VoiceSelfReference.reachesOutput(from: node.name, connections: connections) {
                    options.sessionJournal?(
                        "session: mode \(mode.rawValue) leaves input '\(node.name)' without voice processing: "
                            + "its voice reaches main, which would be its own reference")
                    continue
                }
                try? rebuildWithVoiceProcessing(node)
            } else if processes {
                try? engine.set(node.name, "bypass", to: .bool(mode == .measurement))
            }
        }
    }

    /// Makes input `node` again with voice processing on (a creation-only parameter).
    private func rebuildWithVoiceProcessing(_ node: NodeInfo) throws(EngineError) {
        let specs = node.kind.parameters(bandCount: 0)
        var parameters: [String: ParameterValue] = [:]
        for (name, value) in node.parameters {
            guard let spec = specs.first(where: { $0.name == name }), !spec.isReadOnly else { continue }
            parameters[name] = value
        }
        parameters["voiceProcessing"] = .bool(true)
        parameters["bypass"] = .bool(false)
        let connections = engine.connections().filter { $0.source == node.name || $0.destination == node.name }
        try engine.batch { () throws(EngineError) in
            try engine.detach(node.name)
            try engine.attach(.input, name: node.name, parameters: parameters)
            for c in connections {
                try engine.connect("\(c.source):\(c.sourceBus)", to: "\(c.destination):\(c.destinationBus)")
            }
        }
    }

    /// `/session/mixWithOthers`, `/session/duckOthers`, `/session/interruptSpokenAudioAndMixWithOthers`
    /// `[i]`: set → `/done`, refused for a category that does not take the option; get → 0 or 1.
    func sessionOption(_ r: OSCRequest, _ option: WritableKeyPath<SessionOptions, Bool>, name: String)
        throws(OSCFailure)
    {
        var a = OSCArguments(r)
        if a.isAtEnd {
            reply(r.client, OSCMessage(r.address, [.int32(session.published.options[keyPath: option] ? 1 : 0)]))
            return
        }
        let on = try a.flag(name)
        try a.end()
        let category = session.published.category
        let allowed: [SessionCategory] =
            option == \SessionOptions.duckOthers
            ? [.ambient, .playback, .playAndRecord, .multiRoute] : [.playback, .playAndRecord, .multiRoute]
        if on && !allowed.contains(category) {
            throw OSCFailure(
                .notAllowed,
                "\(r.address): \(name) does not apply to the \(category.rawValue) category (it does to "
                    + allowed.map(\.rawValue).joined(separator: ", ") + ")")
        }
        session.published.options[keyPath: option] = on
        publishSession()
        done(r.client, r.address)
    }

    /// `/session/duckLevel [f:dB]` (−120…0; −15 by default): set → `/done`; get → the level.
    func sessionDuckLevel(_ r: OSCRequest) throws(OSCFailure) {
        var a = OSCArguments(r)
        if a.isAtEnd {
            reply(r.client, OSCMessage(r.address, [.float(Float(session.published.duckLevel))]))
            return
        }
        let level = try a.double("duck level")
        try a.end()
        guard level.isFinite, (-120...0).contains(level) else {
            throw OSCFailure(.badArguments, "\(r.address): a level of −120…0 dB, not \(level)")
        }
        session.published.duckLevel = level
        publishSession()
        done(r.client, r.address)
    }

    /// `/session/silentSwitch [i]`: set the rig's silent switch (every session on the server follows) →
    /// `/done`; get → 0 or 1.
    func sessionSilentSwitch(_ r: OSCRequest) throws(OSCFailure) {
        var a = OSCArguments(r)
        if a.isAtEnd {
            reply(r.client, OSCMessage(r.address, [.int32(session.published.silentSwitch ? 1 : 0)]))
            return
        }
        let on = try a.flag("silentSwitch")
        try a.end()
        let changed = on != session.published.silentSwitch
        session.published.silentSwitch = on
        session.published.silentSwitchStamp = max(Self.sessionClock(), session.published.silentSwitchStamp + 1)
        publishSession()
        applySessionGain()
        done(r.client, r.address)
        if changed { notify(OSCMessage("/session/silentSwitch", [.int32(on ? 1 : 0)])) }
    }

    /// The other sessions' states changed: interruptions begin or end, ducking and the silent switch
    /// follow them.
    func evaluateSessionPeers() {
        guard let host else { return }
        let me = host.status().clientName
        var peers: [String: SessionPeerState] = [:]
        for (name, properties) in host.clientProperties(withPrefix: SessionPeerState.keyPrefix) where name != me {
            if let state = SessionPeerState(properties: properties) { peers[name] = state }
        }
        // A session whose metadata vanished while its client is still open (jackd deleted the user's
        // metadata store when some server exited) keeps its last state until it publishes again.
        for (name, known) in session.knownPeers where peers[name] == nil && host.clientExists(name) {
            peers[name] = known
        }
        session.knownPeers = peers
        let verdict = SessionPolicy.decide(
            me: session.published, peers: peers, seen: session.seenActivations, current: session.interruptingPeers)
        session.seenActivations = SessionPolicy.seenActivations(after: peers, previous: session.seenActivations)
        for (name, activation) in verdict.interruptedBy.sorted(by: { $0.key < $1.key }) {
            session.interruptingPeers[name] = activation
            session.published.isActive = false
            beginInterruption(source: .peer(name))
        }
        for (name, peer) in peers where session.interruptingPeers[name] != nil && peer.isActive {
            session.interruptingPeers[name] = peer.activation
        }
        for (name, resume) in verdict.ended.sorted(by: { $0.key < $1.key }) {
            session.interruptingPeers[name] = nil
            endInterruption(source: .peer(name), shouldResume: resume)
            if resume && session.interruptingPeers.isEmpty {
                session.published.isActive = true
                session.published.notifiedOthers = false
                session.published.activation = max(Self.sessionClock(), session.published.activation + 1)
            }
        }
        if verdict.silentSwitchStamp > session.published.silentSwitchStamp {
            let silentChanged = verdict.silentSwitch != session.published.silentSwitch
            session.published.silentSwitch = verdict.silentSwitch
            session.published.silentSwitchStamp = verdict.silentSwitchStamp
            if silentChanged { notify(OSCMessage("/session/silentSwitch", [.int32(verdict.silentSwitch ? 1 : 0)])) }
        }
        session.duckGain = verdict.duckGain
        applySessionGain()
        publishSession()
    }

    /// Glides the output to what ducking and the silent switch ask for, when that changed.
    func applySessionGain() {
        let silenced = session.published.silentSwitch && session.published.category.isSilencedBySwitch
        let target = silenced ? 0 : session.duckGain
        guard target != session.gain else { return }
        let ducking = session.gain != 0 && target != 0
        if (try? engine.setSessionGain(
            Float(target), rampSeconds: ducking ? Self.duckFadeSeconds : Self.muteFadeSeconds))
            != nil
        {
            session.gain = target
            notify(OSCMessage("/session/gain", [.float(Float(20 * log10(max(target, 1e-6))))]))
        }
    }
}

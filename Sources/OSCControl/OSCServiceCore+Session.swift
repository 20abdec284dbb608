// OSC thread. The audio session as far as it goes today: interruptions (a rig's own, and the JACK
// server going away and coming back), suspending rendering, and route changes from JACK, each told to
// `/notify` subscribers. See docs/SESSION.md.
import AudioGraph
import Foundation

/// Where an interruption comes from.
enum InterruptionSource: Hashable {
    /// The JACK server went away (ends when it is back).
    case server
    /// `/session/interrupt begin` (ends with `/session/interrupt end`).
    case request
    /// Another session's activation (the client named); ends when it deactivates.
    case peer(String)
}

/// The session's settings and the interruptions under way (OSC thread).
struct SessionState {
    /// Pause every player when the outputs lose their last connection (headphones pulled).
    var pauseOnRouteLoss = false
    var interruptions: Set<InterruptionSource> = []
    /// nil: rendering; else suspended, rendering anyway or not.
    var suspendedRenderingAnyway: Bool?
    /// The node remote commands drive, and the now-playing information set for it.
    var nowPlaying: String?
    var nowPlayingInfo = NowPlayingInfo()
    /// The sample rate and period duration asked for (0: none).
    var preferredSampleRate = 0.0
    var preferredIOBufferDuration = 0.0
    /// What this session publishes to the others (category, mode, options, activation, silent switch).
    var published = SessionPeerState()
    /// Activated at least once: it takes part in interruptions (a session never activated plays as an
    /// engine without a session does, though it is ducked and silenced like any other).
    var everActivated = false
    /// Each other session's activation as last seen, and the ones interrupting this session now.
    var seenActivations: [String: UInt64] = [:]
    var interruptingPeers: [String: UInt64] = [:]
    /// The other sessions as last read.
    var knownPeers: [String: SessionPeerState] = [:]
    /// Listening to the other clients that play (opt-in), and what it concluded.
    var monitorsOtherAudio = false
    var otherAudio = OtherAudioDetector()
    /// The gain ducking and the silent switch put on the output now, and what other sessions' ducking
    /// asks for.
    var gain = 1.0
    var duckGain = 1.0
    /// The metadata of the now-playing information (published with the session's).
    var nowPlayingProperties: [String: String] = [:]
    var lastPublished: [String: String]?

    /// `active`, `interrupted` or `suspended` (`/status.reply`, `/session/state`). `serverLost`: the host
    /// already knows its server is gone, though the control loop has not yet posted the loss (which begins
    /// the `.server` interruption): the session is interrupted from that moment, so that `/status` never
    /// shows `server-lost` beside `active`.
    func name(serverLost: Bool) -> String {
        if suspendedRenderingAnyway != nil { return "suspended" }
        if !interruptions.isEmpty || serverLost { return "interrupted" }
        return everActivated && !published.isActive ? "inactive" : "active"
    }
}

extension OSCServiceCore {
    /// The session's state as `/session/state` and OSCQuery show it (`/status` uses the host state it
    /// replies with).
    var sessionName: String { session.name(serverLost: host?.status().state == "server-lost") }

    /// The parameters `/session/params` lists, with their values.
    var sessionParameters: [(String, OSCArgument)] {
        [
            ("category", .string(session.published.category.rawValue)),
            ("mode", .string(session.published.mode.rawValue)),
            ("mixWithOthers", .int32(session.published.options.mixWithOthers ? 1 : 0)),
            ("duckOthers", .int32(session.published.options.duckOthers ? 1 : 0)),
            (
                "interruptSpokenAudioAndMixWithOthers",
                .int32(session.published.options.interruptSpokenAudioAndMixWithOthers ? 1 : 0)
            ),
            ("duckLevel", .float(Float(session.published.duckLevel))),
            ("silentSwitch", .int32(session.published.silentSwitch ? 1 : 0)),
            ("isActive", .int32(session.published.isActive ? 1 : 0)),
            ("monitorOtherAudio", .int32(session.monitorsOtherAudio ? 1 : 0)),
            ("pauseOnRouteLoss", .int32(session.pauseOnRouteLoss ? 1 : 0)),
            ("preferredIOBufferDuration", .float(Float(session.preferredIOBufferDuration))),
            ("preferredSampleRate", .float(Float(session.preferredSampleRate)))
        ]
    }

    /// The server's rate and period as the host reports them (the engine's rate without a host).
    private var hostFormat: (rate: Double, period: Int) {
        let status = host?.status()
        return (Double(status?.sampleRate ?? Int(engine.configuration.sampleRate)), status?.bufferSize ?? 0)
    }

    /// `/session/preferredIOBufferDuration [f:seconds]`: set → asks JACK for the nearest power-of-two
    /// period (16…8192 frames) and answers `/done /session/preferredIOBufferDuration f:secondsInForce`;
    /// get → `/session/preferredIOBufferDuration f:secondsInForce`.
    func sessionPreferredIOBufferDuration(_ r: OSCRequest) throws(OSCFailure) {
        var a = OSCArguments(r)
        let format = hostFormat
        if a.isAtEnd {
            reply(r.client, OSCMessage(r.address, [.float(Float(Double(format.period) / format.rate))]))
            return
        }
        let seconds = try a.double("seconds")
        try a.end()
        guard seconds > 0, seconds <= 1 else {
            throw OSCFailure(
                .badArguments, "\(r.address): the duration must be above 0 and at most 1 s, not \(seconds)")
        }
        guard let host else { throw OSCFailure(.unsupported, "this engine has no JACK host to ask") }
        let frames = Self.powerOfTwoPeriod(seconds: seconds, rate: format.rate)
        let got: Int
        do { got = try host.requestBufferSize(frames: frames) } catch { throw OSCFailure(.unsupported, error.message) }
        session.preferredIOBufferDuration = seconds
        done(r.client, r.address, [.float(Float(Double(got) / format.rate))])
    }

    /// The power of two of 16…8192 frames nearest to `seconds` (in log terms).
    static func powerOfTwoPeriod(seconds: Double, rate: Double) -> Int {
        let exponent = (log2(max(seconds * rate, 1))).rounded()
        return 1 << Int(min(max(exponent, 4), 13))
    }

    /// `/session/preferredSampleRate [f:hz]`: set → `/done` when the server runs at that rate, else
    /// `/error 69` naming the mismatch (a JACK client cannot change the server's rate); the preference is
    /// kept either way. Get → `/session/preferredSampleRate f:rateInForce`.
    func sessionPreferredSampleRate(_ r: OSCRequest) throws(OSCFailure) {
        var a = OSCArguments(r)
        let rate = hostFormat.rate
        if a.isAtEnd {
            reply(r.client, OSCMessage(r.address, [.float(Float(rate))]))
            return
        }
        let preferred = try a.double("sample rate")
        try a.end()
        guard (8_000...384_000).contains(preferred) else {
            throw OSCFailure(.badArguments, "\(r.address): a sample rate of 8000…384000 Hz, not \(preferred)")
        }
        session.preferredSampleRate = preferred
        guard abs(preferred - rate) < 0.5 else {
            throw OSCFailure(
                .unsupported,
                "the JACK server runs at \(Int(rate)) Hz, not \(Int(preferred)) Hz; a client cannot change the "
                    + "server's rate (restart jackd with -r \(Int(preferred)))")
        }
        done(r.client, r.address)
    }

    /// `/session/params` → `/session/params s:name v:value …`.
    func sessionParams(_ r: OSCRequest) throws(OSCFailure) {
        try OSCArguments(r).end()
        reply(r.client, OSCMessage("/session/params", sessionParameters.flatMap { [.string($0.0), $0.1] }))
    }

    /// `/session/pauseOnRouteLoss [i]`: set (→ `/done`), or get (→ the same address with the value).
    func sessionPauseOnRouteLoss(_ r: OSCRequest) throws(OSCFailure) {
        var a = OSCArguments(r)
        if a.isAtEnd {
            reply(r.client, OSCMessage(r.address, [.int32(session.pauseOnRouteLoss ? 1 : 0)]))
            return
        }
        let on = try a.flag("pauseOnRouteLoss")
        try a.end()
        session.pauseOnRouteLoss = on
        done(r.client, r.address)
    }

    /// `/session/interrupt s:begin|end [i:shouldResume]` → `/done`.
    func sessionInterrupt(_ r: OSCRequest) throws(OSCFailure) {
        var a = OSCArguments(r)
        let what = try a.string("begin or end")
        switch what {
        case "begin":
            try a.end()
            beginInterruption(source: .request)
        case "end":
            let shouldResume = a.isAtEnd ? true : try a.flag("shouldResume")
            try a.end()
            guard session.interruptions.contains(.request) else {
                throw OSCFailure(.badArguments, "\(r.address): no interruption began with /session/interrupt begin")
            }
            endInterruption(source: .request, shouldResume: shouldResume)
        default:
            throw OSCFailure(.badArguments, "\(r.address): 'begin' or 'end', not '\(OSCText.sanitized(what))'")
        }
        done(r.client, r.address)
    }

    /// `/session/suspend [i:renderAnyway]` → `/done`.
    func sessionSuspend(_ r: OSCRequest) throws(OSCFailure) {
        var a = OSCArguments(r)
        let renderAnyway = a.isAtEnd ? false : try a.flag("renderAnyway")
        try a.end()
        guard let host else { throw OSCFailure(.unsupported, "this engine has no host to suspend") }
        do { try host.suspend(renderAnyway: renderAnyway) } catch { throw OSCFailure(.unsupported, error.message) }
        session.suspendedRenderingAnyway = renderAnyway
        notify(OSCMessage("/session/suspension", [.string("began"), .int32(renderAnyway ? 1 : 0)]))
        done(r.client, r.address)
    }

    /// `/session/wakeup` → `/done`.
    func sessionWakeUp(_ r: OSCRequest) throws(OSCFailure) {
        try OSCArguments(r).end()
        guard let host else { throw OSCFailure(.unsupported, "this engine has no host to wake up") }
        do { try host.wakeUp() } catch { throw OSCFailure(.unsupported, error.message) }
        if session.suspendedRenderingAnyway != nil { notify(OSCMessage("/session/suspension", [.string("ended")])) }
        session.suspendedRenderingAnyway = nil
        done(r.client, r.address)
    }

    /// `/session/route` → `/session/route s:currentRoute` (connected ports, comma-separated).
    func sessionRoute(_ r: OSCRequest) throws(OSCFailure) {
        try OSCArguments(r).end()
        reply(r.client, OSCMessage(r.address, [.string((host?.route() ?? []).joined(separator: ","))]))
    }

    /// `/session/state` → `/session/state s:active|interrupted|suspended`.
    func sessionStateRequest(_ r: OSCRequest) throws(OSCFailure) {
        try OSCArguments(r).end()
        reply(r.client, OSCMessage(r.address, [.string(sessionName)]))
    }

    /// An interruption from `source` began: the first one pauses the players (the engine remembers
    /// them) and tells subscribers `/session/interruption s:began`.
    func beginInterruption(source: InterruptionSource) {
        let first = session.interruptions.isEmpty
        guard session.interruptions.insert(source).inserted else { return }
        engine.beginInterruption()
        if first { notify(OSCMessage("/session/interruption", [.string("began")])) }
    }

    /// The interruption from `source` ended; when none is left, the players the interruptions paused
    /// resume (with `shouldResume`, those whose `resumeAfterInterruption` is true) and subscribers get
    /// `/session/interruption s:ended i:shouldResume`.
    func endInterruption(source: InterruptionSource, shouldResume: Bool) {
        guard session.interruptions.remove(source) != nil, session.interruptions.isEmpty else { return }
        engine.endInterruption(shouldResume: shouldResume)
        notify(OSCMessage("/session/interruption", [.string("ended"), .int32(shouldResume ? 1 : 0)]))
    }

    /// JACK reported a route change: tells subscribers, and with `pauseOnRouteLoss` pauses the players
    /// when the outputs lost their last connection.
    func routeChanged(reason: String, previous: [String], current: [String], outputsLostLastConnection: Bool) {
        notify(
            OSCMessage(
                "/session/route_change",
                [
                    .string(reason), .string(previous.joined(separator: ",")),
                    .string(current.joined(separator: ","))
                ]))
        if outputsLostLastConnection && session.pauseOnRouteLoss {
            for node in engine.nodes() where node.kind == .player || node.kind == .audioplayer {
                if (try? engine.get(node.name, "playing"))?.boolValue == true { try? engine.pause(node.name) }
            }
        }
    }
}

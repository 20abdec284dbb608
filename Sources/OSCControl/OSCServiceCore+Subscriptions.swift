// OSC thread. /notify, /renew, /meters; leases; notifications of graph changes, players, xruns and the
// JACK server; meter bundles; keeping liblo's node addresses in step with the engine's nodes.
import AudioDSP
import AudioGraph
import Foundation

/// A client that asked for notifications (`/notify 1`), until its lease runs out.
/// Where a subscriber's traffic goes: an OSC address (UDP or TCP), or a WebSocket of the web server.
enum SubscriberAddress {
    case lo(LoAddress)
    case web(WebClient)

    /// What identifies the subscriber (`/notify` with the same URL is the same subscription).
    var url: String {
        switch self {
        case .lo(let address): return address.url
        case .web(let client): return "ws://\(client.key)"
        }
    }
}

struct Subscription {
    let id: Int32
    let address: SubscriberAddress
    /// CLOCK_MONOTONIC seconds.
    var expires: Double
    var meters: MeterFeed?
}

/// Meter traffic for one subscriber.
struct MeterFeed {
    /// Seconds between bundles.
    var interval: Double
    /// Nodes to meter; nil for every node.
    var nodes: [String]?
    var nextDue: Double
    /// Readings since the last bundle: per node, per channel.
    var peaks: [String: [Float]] = [:]
    var powers: [String: [Double]] = [:]
    var counts: [String: Int] = [:]

    mutating func accumulate(_ node: String, _ levels: [ChannelLevel]) {
        var peak = peaks[node] ?? Array(repeating: -160, count: levels.count)
        var power = powers[node] ?? Array(repeating: 0, count: levels.count)
        guard peak.count == levels.count else {
            peaks[node] = nil
            powers[node] = nil
            counts[node] = nil
            return accumulate(node, levels)
        }
        for (c, level) in levels.enumerated() {
            peak[c] = max(peak[c], level.peakDecibels)
            power[c] += pow(10, Double(level.rmsDecibels) / 10)
        }
        peaks[node] = peak
        powers[node] = power
        counts[node, default: 0] += 1
    }

    /// One `/meter` message per node read since the last call (sorted by name), then a fresh interval.
    mutating func take() -> [OSCMessage] {
        let messages = peaks.keys.sorted().map { node -> OSCMessage in
            let n = Double(max(1, counts[node] ?? 1))
            let rms = (powers[node] ?? []).map { p -> Float in p > 1e-16 ? max(-160, Float(10 * log10(p / n))) : -160 }
            return OSCMeterPacking.message(node: node, peakDecibels: peaks[node] ?? [], rmsDecibels: rms)
        }
        peaks = [:]
        powers = [:]
        counts = [:]
        return messages
    }
}

extension OSCServiceCore {
    var meterSubscriptions: [Int32] { subscriptions.byID.compactMap { $0.value.meters == nil ? nil : $0.key } }

    /// The subscription a request speaks for: the one for `url`, the one its sender registered a reply
    /// URL with, or the one at the sender's own address.
    func subscriptionID(for client: ClientRef, url: String?) -> Int32? {
        if let url {
            let normalized = LoAddress.url(url)?.url ?? url
            return subscriptions.byID.first { $0.value.address.url == normalized }?.key
        }
        if let id = subscriptions.replyRoutes[client.key], subscriptions.byID[id] != nil { return id }
        switch client.target {
        case .owned(let own): return subscriptions.byID.first { $0.value.address.url == own.url }?.key
        case .web(let web):
            let own = SubscriberAddress.web(web).url
            return subscriptions.byID.first { $0.value.address.url == own }?.key
        case .borrowedTCP, .unreachable: return nil
        }
    }

    /// `/notify i:1|0 [s:url]` → `/done /notify i:id f:leaseSeconds` (`i:0` when unsubscribing).
    func notifyRequest(_ r: OSCRequest) throws(OSCFailure) {
        var a = OSCArguments(r)
        let on = try a.flag("1 (subscribe) or 0 (unsubscribe)")
        let url = try a.optionalString("reply URL")
        try a.end()
        let now = SystemClock.monotonicSeconds()
        guard on else {
            if let id = subscriptionID(for: r.client, url: url) { removeSubscription(id) }
            done(r.client, "/notify", [.int32(0)])
            return
        }
        let address: SubscriberAddress
        if url != nil, case .web = r.client.target {
            // A page (even a read-only one) must not turn the engine into a UDP reflector.
            throw a.failure(
                "a WebSocket client's notifications come back on its socket; a reply URL is not taken from it")
        }
        if let url {
            guard let parsed = LoAddress.url(url) else {
                throw a.failure(
                    "'\(OSCText.sanitized(url))' is not an osc.udp:// or osc.tcp:// URL with a host that "
                        + "resolves and a port in 1…65535; replies keep going to the sender")
            }
            address = .lo(parsed)
        } else if case .owned(let own) = r.client.target {
            address = .lo(own)
        } else if case .web(let web) = r.client.target {
            address = .web(web)
        } else {
            throw a.failure("a TCP client must give a reply URL (s:osc.udp://host:port/ or osc.tcp://host:port/)")
        }
        let id: Int32
        if let existing = subscriptions.byID.first(where: { $0.value.address.url == address.url })?.key {
            id = existing
            subscriptions.byID[id]?.expires = now + options.leaseDuration
        } else {
            id = subscriptions.nextID
            subscriptions.nextID += 1
            subscriptions.byID[id] = Subscription(id: id, address: address, expires: now + options.leaseDuration)
        }
        if url != nil { subscriptions.replyRoutes[r.client.key] = id }
        done(r.client, "/notify", [.int32(id), .float(Float(options.leaseDuration))])
    }

    /// `/renew [s:url]` → `/done /renew f:leaseSeconds`
    func renew(_ r: OSCRequest) throws(OSCFailure) {
        var a = OSCArguments(r)
        let url = try a.optionalString("reply URL")
        try a.end()
        guard let id = subscriptionID(for: r.client, url: url) else {
            throw OSCFailure(.notSubscribed, "no active subscription for this client; send /notify 1 first")
        }
        subscriptions.byID[id]?.expires = SystemClock.monotonicSeconds() + options.leaseDuration
        done(r.client, "/renew", [.float(Float(options.leaseDuration))])
    }

    /// `/meters i:intervalMilliseconds [s:url] [s:node…]` → `/done /meters i:interval s:node…` (0 turns
    /// meters off; no node names: every node). The URL (`osc.udp://…`) names the subscription, for senders
    /// such as oscsend whose source port changes.
    func meters(_ r: OSCRequest) throws(OSCFailure) {
        var a = OSCArguments(r)
        let interval = try a.integer("interval in milliseconds")
        var nodes: [String] = []
        var url: String?
        while !a.isAtEnd {
            let text = try a.string("node name")
            if nodes.isEmpty && url == nil && text.hasPrefix("osc.") { url = text } else { nodes.append(text) }
        }
        guard let id = subscriptionID(for: r.client, url: url) else {
            throw OSCFailure(.notSubscribed, "meters belong to a subscription; send /notify 1 first")
        }
        if interval == 0 {
            subscriptions.byID[id]?.meters = nil
            updateMetering()
            done(r.client, "/meters", [.int32(0)])
            return
        }
        guard interval >= options.minimumMeterInterval, interval <= 60_000 else {
            throw OSCFailure(
                .outOfRange, "the meter interval must be 0 (off) or \(options.minimumMeterInterval)…60000 ms")
        }
        let existing = Set(engine.nodes().map(\.name))
        if let missing = nodes.first(where: { !existing.contains($0) }) {
            throw OSCFailure(.unknownNode, "no node named '\(OSCText.sanitized(missing))'")
        }
        let now = SystemClock.monotonicSeconds()
        let seconds = Double(interval) / 1000
        subscriptions.byID[id]?.meters = MeterFeed(
            interval: seconds, nodes: nodes.isEmpty ? nil : nodes, nextDue: now + seconds)
        updateMetering()
        subscriptions.nextMeterTick = min(subscriptions.nextMeterTick, now)
        done(r.client, "/meters", [.int32(Int32(interval))] + nodes.map { .string($0) })
    }

    func removeSubscription(_ id: Int32) {
        guard let removed = subscriptions.byID.removeValue(forKey: id) else { return }
        subscriptions.replyRoutes = subscriptions.replyRoutes.filter { $0.value != id }
        if removed.meters != nil { updateMetering() }
    }

    func expireLeases(now: Double) {
        for (id, subscription) in subscriptions.byID where subscription.expires < now { removeSubscription(id) }
    }

    /// Sends `message` to every subscriber.
    func notify(_ message: OSCMessage) {
        if let journal = options.sessionJournal,
            message.address.hasPrefix("/session/") || message.address.hasPrefix("/engine/services_")
        {
            journal("session: \(message)")
        }
        for subscription in subscriptions.byID.values { send(message, to: subscription.address) }
    }

    /// Sends messages as one bundle to a subscriber.
    func sendBundle(_ messages: [OSCMessage], timetag: OSCTimetag, to address: SubscriberAddress) {
        switch address {
        case .lo(let lo): endpoint.sendBundle(messages, timetag: timetag, to: lo.raw)
        case .web(let client): client.send(.binary(OSCPacket.bundle(timetag, messages.map { .message($0) }).encoded()))
        }
    }

    /// Sends one message to a subscriber.
    func send(_ message: OSCMessage, to address: SubscriberAddress) {
        switch address {
        case .lo(let lo): endpoint.send(message, to: lo.raw)
        case .web(let client): client.send(.binary(OSCPacket.message(message).encoded()))
        }
    }

    // MARK: Meters

    /// Turns engine metering on for exactly the nodes some subscriber wants.
    func updateMetering() {
        var wanted = Set<String>()
        for subscription in subscriptions.byID.values {
            guard let feed = subscription.meters else { continue }
            wanted.formUnion(feed.nodes ?? Array(mirror.nodes.keys))
        }
        for node in wanted.subtracting(subscriptions.meteredNodes) {
            if (try? engine.setMetering(node, enabled: true)) != nil { subscriptions.meteredNodes.insert(node) }
        }
        for node in subscriptions.meteredNodes.subtracting(wanted) {
            _ = try? engine.setMetering(node, enabled: false)
            subscriptions.meteredNodes.remove(node)
        }
    }

    /// Reads the engine's meters, folds them into each feed, and sends the feeds that are due: one
    /// bundle per tick, split so every datagram stays under 4 KB.
    func meterTick(now: Double) {
        let readings = engine.readMeters()
        let voices = engine.voiceAnalysis()
        var shortest = 1.0
        for id in meterSubscriptions {
            guard var subscription = subscriptions.byID[id], var feed = subscription.meters else { continue }
            for node in feed.nodes ?? Array(readings.keys) {
                if let levels = readings[node] { feed.accumulate(node, levels) }
            }
            if now >= feed.nextDue {
                let tag = OSCTimetag.now()
                // Voice processors add their figures (the meter feed names them like other nodes).
                let voiceMessages = voices.sorted { $0.key < $1.key }
                    .filter { feed.nodes?.contains($0.key) ?? true }
                    .map { OSCMeterPacking.voiceMessage(node: $0.key, $0.value) }
                for group in OSCMeterPacking.bundles(feed.take() + voiceMessages) {
                    sendBundle(group, timetag: tag, to: subscription.address)
                }
                feed.nextDue += feed.interval
                if feed.nextDue < now { feed.nextDue = now + feed.interval }
            }
            shortest = min(shortest, feed.interval)
            subscription.meters = feed
            subscriptions.byID[id] = subscription
        }
        subscriptions.nextMeterTick = now + shortest
    }

    // MARK: Graph mirror

    /// Compares the engine's nodes and connections with the last scan: registers node addresses with
    /// liblo (so patterns fan out over them) and notifies subscribers of what changed.
    func scanGraph() {
        let nodes = engine.nodes()
        let initial = !mirror.scanned
        var current: [String: NodeKind] = [:]
        for node in nodes { current[node.name] = node.kind }
        var nodesChanged = false
        for (name, kind) in mirror.nodes.sorted(by: { $0.key < $1.key }) where current[name] != kind {
            unregisterNodeMethods(name)
            subscriptions.meteredNodes.remove(name)
            nodesChanged = true
            if !initial {
                notify(OSCMessage("/node/removed", [.string(name)]))
                announceWebPath("PATH_REMOVED", "/node/\(name)")
            }
        }
        for node in nodes where mirror.nodes[node.name] != node.kind {
            registerNodeMethods(node.name, kind: node.kind)
            nodesChanged = true
            if !initial {
                notify(OSCMessage("/node/added", [.string(node.name), .string(node.kind.rawValue)]))
                announceWebPath("PATH_ADDED", "/node/\(node.name)")
            }
        }
        mirror.nodes = current
        let connections = Set(engine.connections())
        if !initial && !subscriptions.byID.isEmpty {
            func endpoints(_ c: Connection) -> [OSCArgument] {
                [.string("\(c.source):\(c.sourceBus)"), .string("\(c.destination):\(c.destinationBus)")]
            }
            for c in mirror.connections.subtracting(connections).sorted(by: { $0.description < $1.description }) {
                notify(OSCMessage("/graph/disconnected", endpoints(c)))
            }
            for c in connections.subtracting(mirror.connections).sorted(by: { $0.description < $1.description }) {
                notify(OSCMessage("/graph/connected", endpoints(c)))
            }
        }
        mirror.connections = connections
        mirror.scanned = true
        mirror.dirty = false
        mirror.nextScan = SystemClock.monotonicSeconds() + options.graphScanInterval
        if nodesChanged && !meterSubscriptions.isEmpty { updateMetering() }
    }

    /// The addresses liblo knows for a node (for pattern dispatch).
    static func nodeMethodPaths(_ name: String, kind: NodeKind) -> [String] {
        var tails = kind.parameters.map(\.name) + ["params", "lastRenderTime"]
        if kind == .player {
            tails += ["play", "pause", "stop", "schedule/buffer", "schedule/file", "enqueue", "playerTime"]
        }
        if kind == .audioplayer { tails += ["play", "pause", "stop", "prepare", "power", "playerTime"] }
        if kind.hasMixingSettings { tails += ["fade"] }
        if kind.is3DSource { tails += ["position", "velocity", "direction"] }
        if kind == .environment { tails += ["listener/position", "listener/orientation"] }
        if kind.isEffect { tails += ["reset"] }
        return tails.map { "/node/\(name)/\($0)" }
    }

    /// The node's addresses, which a pattern is matched against (`receiveGeneric`). Kept here rather
    /// than as liblo methods: liblo keeps methods in a list it walks to add, remove and dispatch, so
    /// thousands of nodes (30-odd addresses each) made every load and every packet take seconds.
    private func registerNodeMethods(_ name: String, kind: NodeKind) {
        mirror.paths[name] = Self.nodeMethodPaths(name, kind: kind)
    }

    private func unregisterNodeMethods(_ name: String) {
        mirror.paths[name] = nil
    }

    // MARK: Events

    /// `/player/finished`: playback reached its end by itself (AVAudioPlayer's
    /// audioPlayerDidFinishPlaying). `successfully` is false only for a decoding error that ends playback.
    func notifyPlayerFinished(_ node: String, successfully: Bool, sampleTime: Int64) {
        guard !subscriptions.byID.isEmpty else { return }
        notify(OSCMessage("/player/finished", [.string(node), .int32(successfully ? 1 : 0), .int64(sampleTime)]))
    }

    /// `/player/stopped`: a playing player was stopped or freed by a request (AVAudioPlayer reports no
    /// finish for a stop; this is our own notification).
    func notifyPlayerStopped(_ node: String, sampleTime: Int64) {
        guard !subscriptions.byID.isEmpty else { return }
        notify(OSCMessage("/player/stopped", [.string(node), .int64(sampleTime)]))
    }

    func handleEngineEvent(_ event: EngineEvent) {
        // Recorders learn of tap overflows (lost frames) whether or not anyone subscribed.
        for recorder in recorders.values { recorder.handle(event) }
        // A file set that failed in the background: its requester hears it as well as subscribers.
        if case .environmentProblem(let node, let message) = event,
            let asker = jobs.awaitingFiles.removeValue(forKey: node)
        {
            sendError(asker.client, address: asker.address, OSCFailure(.fileError, OSCText.sanitized(message)))
        }
        guard !subscriptions.byID.isEmpty else { return }
        handleScheduleEvent(event)
        switch event {
        case .audioPlayerFinished(let node, let successfully):
            notifyPlayerFinished(node, successfully: successfully, sampleTime: engine.sampleTime)
        case .audioPlayerDecodeError(let node, let message):
            notify(OSCMessage("/player/decode_error", [.string(node), .string(OSCText.sanitized(message))]))
        case .environmentProblem(let node, let message):
            notify(OSCMessage("/environment/problem", [.string(node), .string(OSCText.sanitized(message))]))
        case .voiceActivity(let node, let started):
            notify(OSCMessage("/voice/activity", [.string(node), .string(started ? "started" : "ended")]))
        default:
            break
        }
        if case .playerFinished(let node, let time) = event {
            notifyPlayerFinished(node, successfully: true, sampleTime: time)
            let buffer = (try? engine.get(node, "buffer"))?.stringValue ?? ""
            let file = (try? engine.get(node, "file"))?.stringValue ?? ""
            notify(
                OSCMessage("/buffer/consumed", [.string(node), .string(buffer.isEmpty ? file : buffer), .int64(time)]))
        }
    }

    func handleHostEvent(_ event: OSCHostEvent) {
        switch event {
        case .xrun(let count, let delay):
            subscriptions.pendingXrun = (count, delay)
            flushXrun(now: SystemClock.monotonicSeconds())
        case .serverLost(let reason):
            notify(OSCMessage("/engine/services_lost", [.string(reason)]))
            beginInterruption(source: .server)
        case .servicesReset(let client, let rate, let frames):
            notify(
                OSCMessage(
                    "/engine/services_reset",
                    [.string(client), .int32(Int32(clamping: rate)), .int32(Int32(clamping: frames))]))
            endInterruption(source: .server, shouldResume: true)
        case .routeChanged(let reason, let previous, let current, let lostLast):
            routeChanged(reason: reason, previous: previous, current: current, outputsLostLastConnection: lostLast)
        case .transport(let rolling, let seconds):
            transportChanged(rolling: rolling, locatedSeconds: seconds)
        case .configurationChanged(let rate, let frames):
            notify(OSCMessage("/engine/config", [.int32(Int32(clamping: rate)), .int32(Int32(clamping: frames))]))
        case .patchReloaded(let path):
            mirror.dirty = true
            notify(OSCMessage("/patch/reload", [.string(path)]))
        case .patchReloadFailed(let path, let message):
            notify(OSCMessage("/patch/reload_failed", [.string(path), .string(Self.limit(message, bytes: 1200))]))
        case .sessionPeersChanged:
            evaluateSessionPeers()
        }
    }

    /// `/engine/xrun i:total f:delayMicroseconds`, at most 10 per second (later ones are folded in).
    func flushXrun(now: Double) {
        guard let xrun = subscriptions.pendingXrun, now - subscriptions.lastXrunSent >= 0.1 else { return }
        subscriptions.pendingXrun = nil
        subscriptions.lastXrunSent = now
        notify(OSCMessage("/engine/xrun", [.int32(Int32(clamping: xrun.count)), .float(Float(xrun.delay))]))
    }
}

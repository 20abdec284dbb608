// OSC thread. The service's state and main loop: receiving (UDP screened by us, TCP by liblo), liblo
// dispatch into dispatch.collected requests, timers (held bundles, meters, leases, /sync, graph scans).
// Thread contract: created by `OSCService.start()` on the caller's thread; after that only the OSC
// thread touches it, except `inbox`, `counters` and `stopRequested`, which are thread-safe.
import AudioGraph
import CLibLo
import COSCSocket
import Dispatch
import Glibc
import Locking
import SoundstageKit
import Synchronization

/// Work other threads hand to the OSC thread.
enum InboxItem: @unchecked Sendable {
    // @unchecked: handed from other threads to the OSC thread, which owns it from then on.
    case engineEvent(EngineEvent)
    case hostEvent(OSCHostEvent)
    /// A recorder made over OSC reported something (from its own threads).
    case recorderEvent(name: String, RecorderEvent)
    /// A recorder made elsewhere, put under OSC control.
    case adoptRecorder(name: String, Recorder)
    /// A worker job finished; `complete` runs on the OSC thread.
    case jobFinished(sequence: Int, complete: (OSCServiceCore) -> Void)
    /// The web server's WebSockets and OSCQuery requests.
    case web(WebInboxItem)
}

/// A thread-safe list of inbox items.
final class Inbox: Sendable {
    private let state = Locked<(items: [InboxItem], closed: Bool)>(([], false))
    func post(_ item: InboxItem) { _ = postIfOpen(item) }
    /// Posts unless the service stopped (then the item is dropped and false returned).
    func postIfOpen(_ item: InboxItem) -> Bool {
        state.withLock { state in
            guard !state.closed else { return false }
            state.items.append(item)
            return true
        }
    }
    func drain() -> [InboxItem] {
        state.withLock { state in
            defer { state.items = [] }; return state.items
        }
    }
    /// Refuses every later post; returns what was left undelivered.
    func close() -> [InboxItem] {
        state.withLock { state in
            state.closed = true
            defer { state.items = [] }; return state.items
        }
    }
}

/// Counters readable from any thread.
final class OSCCounters: Sendable {
    let packets = AtomicCounter()
    let messages = AtomicCounter()
    let malformed = AtomicCounter()
    let oversized = AtomicCounter()
    let errorsSent = AtomicCounter()
    let errorsSuppressed = AtomicCounter()
    let lateBundles = AtomicCounter()
    /// UDP datagrams the kernel dropped because the receive queue was full (SO_RXQ_OVFL).
    let droppedDatagrams = AtomicCounter()
}

/// One request: a message as dispatched (a pattern message becomes one request per matching node
/// address), with its sender and time tag.
struct OSCRequest {
    var address: String
    var arguments: [OSCArgument]
    var timetag: OSCTimetag
    var client: ClientRef
    /// Set for requests expanded from a pattern (their failures are summarized, never one per match).
    var patternID: Int?
    var patternAddress: String?
}

/// What a dispatch produced, in order.
enum Collected {
    case request(OSCRequest)
    case failure(ClientRef, address: String, OSCFailure)
}

/// A pattern message being fanned out by liblo.
struct PatternContext {
    let id: Int
    let address: String
    let arguments: [OSCArgument]
    let timetag: OSCTimetag
    let client: ClientRef
    var matches = 0

    /// The pattern's last part (the parameter or command) is a wildcard (`*`, `?`, `[…]`; liblo's `*` also
    /// matches `/`, so `/*` is one): it chooses nodes *and* what to do to them. Such a pattern only
    /// queries: without arguments its command matches (play, stop, reset…) are left out, and with
    /// arguments it is refused. Naming the parameter or command (`/node/*/volume`, `/node/{a,b}/stop`)
    /// lifts both limits.
    var wildcardsItsTarget: Bool {
        let last = address.split(separator: "/", omittingEmptySubsequences: false).last ?? ""
        return last.contains { "*?[]".contains($0) }
    }

    /// Node-address tails that change state when sent without arguments.
    static let commands: Set<String> = [
        "play", "pause", "stop", "prepare", "reset", "schedule/buffer", "schedule/file",
        "enqueue", "fade"
    ]

    /// True when `path` (a node address this pattern matched) runs a command.
    static func isCommand(_ path: String) -> Bool {
        let rest = path.dropFirst("/node/".count)
        guard let slash = rest.firstIndex(of: "/") else { return false }
        return commands.contains(String(rest[rest.index(after: slash)...]))
    }
}

final class OSCServiceCore: @unchecked Sendable {
    // @unchecked: owned by the OSC thread; the worker's jobs hand their completions back to it.
    let engine: Engine
    let host: OSCHost?
    let options: OSCServiceOptions
    /// Files and patches, confined to the roots (blocking calls run on `worker`).
    let files: EngineFiles
    let endpoint: LoEndpoint
    let inbox = Inbox()
    let counters: OSCCounters
    let stopRequested = Atomic<Bool>(false)
    let worker = DispatchQueue(label: "soundstage.osc.worker")

    var clients: ClientTable
    /// Recorders made with `/recorder/new`, by name (OSC thread).
    var recorders: [String: Recorder] = [:]
    /// What liblo's callbacks collect between a receive and `finishDispatch`.
    var dispatch = DispatchCollector()
    /// Future bundles held until their release time, and the clock they are converted with.
    var scheduler = BundleScheduler()
    /// Worker jobs in flight and the `/sync`s waiting for them.
    var jobs = JobLedger()
    /// `/buffer/load`s in flight on the worker, by buffer name: a `/buffer/free` of such a name waits
    /// for them, so the two apply in the order sent.
    var bufferLoadsInFlight: [String: Int] = [:]
    /// The graph as OSC clients were last told it (node addresses registered with liblo).
    var mirror = GraphMirror()
    /// Notification subscribers, their meter feeds and reply routes.
    var subscriptions = SubscriptionTable()
    /// The audio session: its settings and the interruptions under way.
    var session = SessionState()
    /// The web server's WebSockets: what each listens to (OSCQuery LISTEN).
    var web = WebState()
    var nextPoll = 0.0
    var nextLeaseCheck = 0.0
    var nextPropertyCheck = 0.0
    var nextOtherAudioCheck = 0.0
    /// The kernel's running count of dropped UDP datagrams, as last reported.
    var kernelDropCount: UInt32 = 0
    // Receive buffer: one datagram plus one byte to detect oversized ones.
    let receiveCapacity: Int
    let receiveBuffer: UnsafeMutableRawPointer

    init(engine: Engine, host: OSCHost?, options: OSCServiceOptions, counters: OSCCounters) throws(OSCServiceError) {
        session.pauseOnRouteLoss = options.pauseOnRouteLoss
        session.nowPlaying = options.nowPlaying
        self.engine = engine
        self.host = host
        self.options = options
        self.counters = counters
        files = EngineFiles(engine: engine, policy: FileAccessPolicy(roots: options.fileRoots))
        endpoint = try LoEndpoint(
            host: options.host, port: options.port, enablesTCP: options.enablesTCP,
            maxPacketSize: max(64, options.maxPacketSize))
        clients = ClientTable(burst: max(1, options.errorBurst), rate: max(0.01, options.errorsPerSecond))
        receiveCapacity = max(64, options.maxPacketSize) + 1
        receiveBuffer = .allocate(byteCount: receiveCapacity, alignment: 16)
        let userData = Unmanaged.passUnretained(self).toOpaque()
        endpoint.installHandlers(
            generic: genericHandler, bundleStart: bundleStartHandler,
            bundleEnd: bundleEndHandler, userData: userData)
        startSession(options.sessionStart)
    }

    deinit {
        receiveBuffer.deallocate()
    }

    var userData: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }

    // MARK: Main loop

    /// Runs until `stopRequested`.
    func run() {
        scanGraph()
        while !stopRequested.load(ordering: .acquiring) {
            let (udpReady, tcpReady) = endpoint.wait(timeoutMilliseconds: loopTimeout())
            if udpReady { receiveUDP() }
            if tcpReady { receiveTCP() }
            drainInbox()
            runTimers()
        }
        // Deliver what was posted just before the stop (a "server lost" notification, say); jobs still
        // on the worker finish, and their replies are dropped with the sockets.
        drainInbox()
        worker.sync {}
    }

    /// Milliseconds until the next timer, at most 5.
    private func loopTimeout() -> Int32 {
        let now = SystemClock.monotonicSeconds()
        var next = now + 0.005
        if let first = scheduler.held.first { next = min(next, first.release) }
        if !meterSubscriptions.isEmpty { next = min(next, subscriptions.nextMeterTick) }
        if options.pollsEngine { next = min(next, nextPoll) }
        return Int32(max(0, min(5, ((next - now) * 1000).rounded(.up))))
    }

    private func runTimers() {
        let now = SystemClock.monotonicSeconds()
        if options.pollsEngine && now >= nextPoll {
            engine.poll()
            nextPoll = now + 0.01
            drainInbox()
        }
        releaseDueBundles(now: now)
        if !meterSubscriptions.isEmpty && now >= subscriptions.nextMeterTick { meterTick(now: now) }
        if now >= nextLeaseCheck {
            expireLeases(now: now)
            nextLeaseCheck = now + 0.05
        }
        if session.monitorsOtherAudio && now >= nextOtherAudioCheck {
            followOtherAudio(now: now)
            nextOtherAudioCheck = now + 0.01
        }
        if now >= nextPropertyCheck {
            // jackd keeps metadata per user and deletes it whenever any server of the user exits
            // cleanly: what we published may be gone without a word.
            if host?.refreshProperties() == true { evaluateSessionPeers() }
            nextPropertyCheck = now + 0.5
        }
        if mirror.dirty || now >= mirror.nextScan { scanGraph() }
        if !web.listens.isEmpty && now >= web.nextListenCheck { sendListenedValues(now: now) }
        checkSyncs(now: now)
        flushXrun(now: now)
    }

    private func drainInbox() {
        for item in inbox.drain() {
            switch item {
            case .engineEvent(let event): handleEngineEvent(event)
            case .hostEvent(let event): handleHostEvent(event)
            case .recorderEvent(let name, let event): handleRecorderEvent(name, event)
            case .adoptRecorder(let name, let recorder): recorders[name] = recorder
            case .jobFinished(let sequence, let complete):
                complete(self)
                jobs.completed = max(jobs.completed, sequence)
                jobs.completedAt = SystemClock.monotonicSeconds()
            case .web(let item): handleWeb(item)
            }
        }
        if mirror.dirty { scanGraph() }
    }

    // MARK: Receiving

    /// Reads every waiting datagram (up to a bound, so timers still run under a flood). Each is checked
    /// for size and OSC validity before liblo dispatches it, so bad packets get an /error.
    private func receiveUDP() {
        var host = [CChar](repeating: 0, count: 64)
        for _ in 0..<1024 {
            var port: Int32 = 0
            var dropped = kernelDropCount
            let n = loshim_recv_datagram(
                endpoint.udpSocket, receiveBuffer, receiveCapacity, &host, host.count, &port,
                &dropped)
            if n == -Int(EAGAIN) { return }
            if n < 0 { continue }
            counters.packets.add(1)
            let now = SystemClock.monotonicSeconds()
            let hostText = host.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
            guard let client = clients.udpClient(host: hostText, port: Int(port), now: now) else { continue }
            if dropped != kernelDropCount {
                // The kernel's count is cumulative and wraps at 2^32.
                let lost = Int(dropped &- kernelDropCount)
                kernelDropCount = dropped
                counters.droppedDatagrams.add(lost)
                // The senders of the lost datagrams are unknown; the one whose datagram arrived next is
                // most likely the one flooding (errors are rate-limited per client).
                sendError(
                    client, address: "",
                    OSCFailure(
                        .busy,
                        "\(lost) datagrams were dropped before this one: they arrived faster than Soundstage reads them "
                            + "and the receive queue was full (send less at once, use TCP, or wait for /synced); "
                            + "/status counts every drop"))
            }
            guard screened(UnsafeRawBufferPointer(start: receiveBuffer, count: n), from: client) != nil else {
                continue
            }
            dispatch.udpClient = client
            _ = lo_server_dispatch_data(endpoint.udp, receiveBuffer, n)
            dispatch.udpClient = nil
            finishDispatch(client: client)
        }
    }

    /// The packet when it is within the size limit and valid OSC; otherwise nil, counted, and the sender
    /// told with `/error` (UDP datagrams and WebSocket frames alike).
    func screened(_ bytes: UnsafeRawBufferPointer, from client: ClientRef) -> OSCPacket? {
        guard bytes.count <= options.maxPacketSize else {
            counters.oversized.add(1)
            sendError(
                client, address: "",
                OSCFailure(
                    .packetTooLarge,
                    "packet of \(bytes.count) bytes exceeds the maximum of \(options.maxPacketSize) bytes"))
            return nil
        }
        do throws(OSCDecodeError) {
            return try OSCPacket.decode(bytes)
        } catch {
            counters.malformed.add(1)
            sendError(client, address: "", OSCFailure(.malformedPacket, "malformed packet: \(error.message)"))
            return nil
        }
    }

    /// Lets liblo read and dispatch TCP frames (one packet per call).
    private func receiveTCP() {
        guard let tcp = endpoint.tcp else { return }
        for _ in 0..<256 {
            let n = lo_server_recv_noblock(tcp, 0)
            finishDispatch(client: nil)
            if n <= 0 { return }
            counters.packets.add(1)
        }
    }

    /// Runs what the last dispatch dispatch.collected. A bundle liblo abandoned half-way (a malformed TCP frame:
    /// liblo then never calls the end handler) is dropped.
    func finishDispatch(client: ClientRef?) {
        finalizePattern()
        let items = dispatch.collected
        dispatch.collected = []
        let wasBundle = dispatch.isBundle
        dispatch.isBundle = false
        if dispatch.bundleDepth != 0 {
            dispatch.bundleDepth = 0
            counters.malformed.add(1)
            if let sender = client ?? firstClient(items) {
                sendError(sender, address: "", OSCFailure(.malformedPacket, "malformed bundle; nothing applied"))
            }
            return
        }
        guard !items.isEmpty else { return }
        execute(items, isBundle: wasBundle)
        // Node addresses must be registered before the next packet is dispatched.
        if mirror.dirty { scanGraph() }
    }

    private func firstClient(_ items: [Collected]) -> ClientRef? {
        for item in items {
            switch item {
            case .request(let r): return r.client
            case .failure(let c, _, _): return c
            }
        }
        return nil
    }

    // MARK: Dispatch callbacks (inside lo_server_dispatch_data / lo_server_recv)

    /// The sender of a message being dispatched.
    func client(of message: lo_message?) -> ClientRef? {
        if let udpClient = dispatch.udpClient { return udpClient }
        guard let message, let source = lo_message_get_source(message) else { return nil }
        let host = lo_address_get_hostname(source).map { String(cString: $0) } ?? "?"
        let port = lo_address_get_port(source).map { String(cString: $0) } ?? "?"
        let key = "tcp:\(host):\(port)"
        clients.touchTCP(key: key, now: SystemClock.monotonicSeconds())
        return ClientRef(key: key, target: .borrowedTCP(lo_address: source))
    }

    /// Every message reaches this first (the generic method is first in liblo's list). A literal address
    /// becomes a request and stops liblo's search; a pattern starts a fan-out that node methods collect.
    func receiveGeneric(
        path: UnsafePointer<CChar>?, types: UnsafePointer<CChar>?,
        argv: UnsafeMutablePointer<UnsafeMutablePointer<lo_arg>?>?, argc: Int32,
        message: lo_message?
    ) -> Int32 {
        finalizePattern()
        counters.messages.add(1)
        guard let path, let client = client(of: message) else { return 0 }
        let address = String(cString: path)
        let tag =
            message.map { lo_message_get_timestamp($0) }.map { OSCTimetag(seconds: $0.sec, fraction: $0.frac) }
            ?? .immediate
        guard let arguments = LoValues.arguments(types: types, argv: argv, argc: argc) else {
            dispatch.collected.append(
                .failure(client, address: address, OSCFailure(.badArguments, "unsupported argument type")))
            return 0
        }
        if OSCText.isPattern(address) {
            dispatch.pattern = PatternContext(
                id: dispatch.nextPatternID, address: address, arguments: arguments, timetag: tag,
                client: client)
            dispatch.nextPatternID += 1
            // Every node address the pattern matches, nodes in name order, each node's in table order.
            for name in mirror.paths.keys.sorted() {
                for path in mirror.paths[name] ?? [] where lo_pattern_match(path, address) != 0 {
                    _ = receiveNodeMethod(path: path)
                }
            }
        } else {
            dispatch.collected.append(
                .request(OSCRequest(address: address, arguments: arguments, timetag: tag, client: client)))
        }
        // 0 stops liblo's search (the only other methods are the bundle handlers).
        return 0
    }

    /// A node address matched a pattern: one request per match.
    func receiveNodeMethod(path address: String) -> Int32 {
        guard var context = dispatch.pattern else { return 0 }
        if context.wildcardsItsTarget {
            // Refused whole when it carries values (finalizePattern says so); without, queries only.
            if !context.arguments.isEmpty || PatternContext.isCommand(address) { return 0 }
        }
        context.matches += 1
        dispatch.pattern = context
        dispatch.collected.append(
            .request(
                OSCRequest(
                    address: address, arguments: context.arguments, timetag: context.timetag,
                    client: context.client, patternID: context.id, patternAddress: context.address)))
        return 0
    }

    /// Closes the pattern being fanned out; a pattern that matched nothing gets one /error.
    func finalizePattern() {
        guard let context = dispatch.pattern else { return }
        dispatch.pattern = nil
        if context.wildcardsItsTarget && !context.arguments.isEmpty {
            dispatch.collected.append(
                .failure(
                    context.client, address: context.address,
                    OSCFailure(
                        .badArguments,
                        "the pattern '\(OSCText.sanitized(context.address))' sets values but does not name what it sets: "
                            + "wildcards choose nodes, the parameter or command must be spelled out (/node/*/volume); nothing was set"
                    )))
            return
        }
        if context.matches == 0 {
            dispatch.collected.append(
                .failure(
                    context.client, address: context.address,
                    OSCFailure(
                        .unknownAddress, "the pattern '\(OSCText.sanitized(context.address))' matches no node address"))
            )
        }
    }

    func bundleStarted() {
        finalizePattern()
        dispatch.bundleDepth += 1
        dispatch.isBundle = true
    }

    func bundleEnded() {
        finalizePattern()
        dispatch.bundleDepth -= 1
    }

    // MARK: Replies

    /// Sends `message` to the client's registered reply URL, or back to the sender.
    func reply(_ client: ClientRef, _ message: OSCMessage) {
        if let id = subscriptions.replyRoutes[client.key], let subscription = subscriptions.byID[id] {
            send(message, to: subscription.address)
            return
        }
        switch client.target {
        case .owned(let address): endpoint.send(message, to: address.raw)
        case .borrowedTCP(let address): endpoint.send(message, to: address)
        case .unreachable: break
        case .web(let web): web.send(.binary(OSCPacket.message(message).encoded()))
        }
    }

    /// `/error s:address i:code s:message`, rate-limited per client.
    func sendError(_ client: ClientRef, address: String, _ failure: OSCFailure) {
        guard clients.mayReportError(client.key, now: SystemClock.monotonicSeconds()) else {
            counters.errorsSuppressed.add(1)
            return
        }
        counters.errorsSent.add(1)
        reply(client, OSCMessage("/error", [.string(address), .int32(failure.code.rawValue), .string(failure.message)]))
    }

    /// `/done address args…`.
    func done(_ client: ClientRef, _ address: String, _ arguments: [OSCArgument] = []) {
        reply(client, OSCMessage("/done", [.string(address)] + arguments))
    }

    // MARK: Worker jobs

    /// Runs `work` on the worker queue (blocking work: decoding, patch files); its result runs on the
    /// OSC thread. Jobs run one at a time, in order (scsynth's sequenced commands).
    func runJob(_ work: @escaping @Sendable () -> (OSCServiceCore) -> Void) {
        jobs.issued += 1
        let sequence = jobs.issued
        let inbox = self.inbox
        worker.async {
            let complete = work()
            inbox.post(.jobFinished(sequence: sequence, complete: complete))
        }
    }
}

// MARK: C callbacks (liblo calls them on the OSC thread, inside a dispatch)

private let genericHandler: LoMethodHandler = { path, types, argv, argc, message, userData in
    guard let userData else { return 0 }
    let core = Unmanaged<OSCServiceCore>.fromOpaque(userData).takeUnretainedValue()
    return core.receiveGeneric(path: path, types: types, argv: argv, argc: argc, message: message)
}

private let bundleStartHandler: lo_bundle_start_handler = { _, userData in
    guard let userData else { return 0 }
    Unmanaged<OSCServiceCore>.fromOpaque(userData).takeUnretainedValue().bundleStarted()
    return 0
}

private let bundleEndHandler: lo_bundle_end_handler = { userData in
    guard let userData else { return 0 }
    Unmanaged<OSCServiceCore>.fromOpaque(userData).takeUnretainedValue().bundleEnded()
    return 0
}

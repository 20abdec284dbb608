// Control side. The JACK client that drives a RenderEngine: opens, registers ports and callbacks,
// activates, connects, and closes. The process callback itself lives in JackRenderContext.swift.
// Threads: public methods from any thread (serialized by a lock); events on the host's event thread.
import AudioGraph
import CJack
import Glibc
import Locking
import Synchronization

/// Runs a `RenderEngine` as a JACK client with ports `out_1…out_N` and `in_1…in_M`.
///
/// Threads:
/// - JACK's process thread calls `RenderEngine.render` once per period (nothing else: no allocation,
///   locks, ARC or IPC);
/// - libjack's notification thread records xruns, period and rate changes and server shutdown, and
///   wakes the host's event thread through a pipe;
/// - the host's event thread delivers `JackHostEvent`s to `onEvent` and, when the
///   server dies, closes the client (which must not happen inside the shutdown callback).
///
/// The host never starts a server: it opens with `JackNoStartServer` (use `JackServerLauncher` for
/// that). `stop()` is idempotent and runs on deinit.
public final class JackHost: Sendable {
    public let configuration: JackHostConfiguration
    /// The engine rendered by the process callback. Its control side (`Engine.poll()`) is the embedding
    /// layer's job.
    public let renderEngine: RenderEngine
    let core = JackHostCore()

    /// Control side. Nothing is opened until `start()`.
    public init(
        configuration: JackHostConfiguration = JackHostConfiguration(), renderEngine: RenderEngine,
        onEvent: (@Sendable (JackHostEvent) -> Void)? = nil
    ) {
        self.configuration = configuration
        self.renderEngine = renderEngine
        core.handler.withLock { $0 = onEvent.map { Callback($0) } }
        core.lossHook.withLock { $0 = Callback { [weak self] _ in self?.beginReconnecting() } }
    }

    deinit {
        stop()
    }

    /// Receives events on the host's event thread (never a JACK thread). The handler may call `stop()`
    /// or `start()`; it must not block for long (events queue behind it).
    public var onEvent: (@Sendable (JackHostEvent) -> Void)? {
        get { core.handler.withLock { $0 }?.call }
        set { core.handler.withLock { $0 = newValue.map { Callback($0) } } }
    }

    /// Test hook: `hook` runs once, on JACK's process thread, at the start of the first cycle after the
    /// next `start()` (for example one that calls `ss_track_current_thread`). It must be RT-safe itself.
    public func setRenderThreadStartHook(_ hook: (@convention(c) () -> Void)?) {
        core.state.withLock { $0.startHook = hook }
    }

    // MARK: Start and stop

    /// Control side; blocks for the IPC with jackd (typically a few ms, up to seconds on a loaded
    /// server). Opens the client (never starting a server), registers ports and callbacks, activates,
    /// then makes the configured connections; a failed connection is reported, not thrown.
    public func start() throws(JackHostError) -> JackHostStartReport {
        reapFinishedSession()
        let startHook = core.state.withLock { $0.startHook }
        let result: Result<JackHostStartReport, JackHostError> = core.portWork.withLock { _ in
            core.state.withLock { state in
                if state.session != nil { return .failure(.alreadyRunning) }
                switch open(
                    startHook: startHook, inserts: state.insertLayout, properties: state.clientProperties,
                    propertiesWrittenLast: state.propertiesWrittenLast,
                    monitorsOtherAudio: state.monitorsOtherAudio)
                {
                case .failure(let error):
                    return .failure(error)
                case .success(let (report, session)):
                    state.session = session
                    return .success(report)
                }
            }
        }
        return try result.get()
    }

    /// Control side. Deactivates and closes the client, then waits for the event thread to finish.
    /// Idempotent; safe after the server died and from inside `onEvent`.
    public func stop() {
        // Relaxed: a request the reconnect thread polls; it also finds the session gone under the lock.
        core.reconnectCancelled.store(true, ordering: .relaxed)
        // A lost client being closed by the event thread: its callbacks may still read the tables freed
        // below. Waited for (a few ms normally); should libjack never return, the tables are kept.
        for _ in 0..<1000 where core.closingLostClient.load(ordering: .acquiring) { usleep(5_000) }
        let closed = !core.closingLostClient.load(ordering: .acquiring)
        let threads: (event: pthread_t?, reconnect: pthread_t?)? = core.portWork.withLock { _ in
            core.state.withLock { state in
                guard var session = state.session else { return nil }
                if let client = session.client {
                    // The server was lost and the event thread has not taken the client yet: as there,
                    // libjack's notification thread must be gone before the close (`JackHostCore`).
                    // Acquire: pairs with the shutdown callbacks' release.
                    if core.serverLostFlag.load(ordering: .acquiring) { core.waitForNotificationThreadToEnd() }
                    JackRequests.serialized {
                        _ = jack_deactivate(client)
                        _ = jack_client_close(client)
                    }
                    session.client = nil
                }
                if closed { releaseInserts() }
                state.session = nil
                guard session.isServerLost else {
                    close(session.wakeFD)
                    return (session.eventThread, session.reconnectThread)
                }
                // After a loss the event thread closes the lost client and the pipe and frees its
                // context by itself: it is let go rather than waited for.
                if let thread = session.eventThread { _ = pthread_detach(thread) }
                return (nil, session.reconnectThread)
            }
        }
        if let thread = threads?.reconnect { Self.finish(thread) }
        if let thread = threads?.event { Self.finish(thread) }
    }

    /// Control side, after the client is closed (no callback runs): frees the insert table.
    private func releaseInserts() {
        core.latency.reset()
        core.freeRetiredInsertTables(all: true)
        if let old = core.insertTable.exchange(nil, ordering: .acquiringAndReleasing) {
            JackInsertTable.destroy(old.assumingMemoryBound(to: JackInsertTable.self))
        }
    }

    /// After a server loss the session stays (names stay readable) until `stop()` or the next `start()`.
    private func reapFinishedSession() {
        let isLost = core.state.withLock { $0.session?.isServerLost ?? false }
        if isLost { stop() }
    }

    /// Joins `thread`, or detaches it when called on that thread (a handler calling `stop()`).
    private static func finish(_ thread: pthread_t) {
        if pthread_equal(thread, pthread_self()) != 0 {
            _ = pthread_detach(thread)
        } else {
            _ = pthread_join(thread, nil)
        }
    }

    /// Opens and activates a client. Called with the state lock held; on failure nothing stays open.
    /// `clientName`: the name to ask for instead of the configuration's (the name a lost client had).
    /// `properties`: the metadata to set on the client once it is active (`propertiesWrittenLast` last).
    /// `makesConfiguredConnections`: false for a return after a loss, whose connections are the ones the
    /// ports had (`JackConnectionMemory`), not the configuration's: one removed or moved since the start
    /// (a reload, `/graph/disconnect`) stays as it was left.
    func open(
        startHook: (@convention(c) () -> Void)?, inserts: HostInsertLayout?, properties: [String: String] = [:],
        propertiesWrittenLast: [String] = [], clientName: String? = nil, monitorsOtherAudio: Bool = false,
        makesConfiguredConnections: Bool = true
    )
        -> Result<(JackHostStartReport, JackSession), JackHostError>
    {
        let config = configuration
        if let problem = Self.validate(config) { return .failure(.invalidConfiguration(problem)) }
        let serverName = config.resolvedServerName

        // No client of ours is open (a start needs none; a reopen follows a closed one): a latency table
        // a cancelled callback may have held is free now.
        core.latency.reset()
        var status = jack_status_t(rawValue: 0)
        let options = jack_options_t(rawValue: JackNoStartServer.rawValue)
        guard let client = Self.openClient(clientName ?? config.clientName, options, &status, serverName) else {
            let bits = status.rawValue
            if bits & JackServerFailed.rawValue != 0 || bits & JackServerError.rawValue != 0 {
                return .failure(.serverNotRunning(server: serverName, status: bits))
            }
            return .failure(.openFailed(server: serverName, status: bits))
        }
        var fds: [Int32] = [-1, -1]
        if pipe(&fds) != 0 {
            let code = errno
            _ = jack_client_close(client)
            return .failure(.systemResourceFailed(what: "event pipe", errno: code))
        }
        // Writers (callbacks) never block; the event thread's reads do. Neither end leaks into children.
        _ = fcntl(fds[1], F_SETFL, fcntl(fds[1], F_GETFL) | O_NONBLOCK)
        _ = fcntl(fds[0], F_SETFD, FD_CLOEXEC)
        _ = fcntl(fds[1], F_SETFD, FD_CLOEXEC)
        let context = JackRenderContext.make(
            engine: renderEngine, core: core, client: client, outputCount: config.outputChannelCount,
            inputCount: config.inputChannelCount, wakeFD: fds[1], startHook: startHook)
        // Until the event thread owns the context, failures undo everything here.
        func fail(_ error: JackHostError) -> Result<(JackHostStartReport, JackSession), JackHostError> {
            _ = jack_client_close(client)
            releaseInserts()
            JackRenderContext.destroy(context)
            close(fds[0])
            close(fds[1])
            return .failure(error)
        }

        let actualName = String(cString: jack_get_client_name(client))
        // Known before the callbacks are set, so their first (synchronous) calls announce nothing.
        // Relaxed: the event thread starts later (pthread_create orders it).
        core.sampleRateValue.store(Int(jack_get_sample_rate(client)), ordering: .relaxed)
        core.bufferSizeValue.store(Int(jack_get_buffer_size(client)), ordering: .relaxed)
        core.serverLostFlag.store(false, ordering: .relaxed)
        core.shutdownRecorded.store(false, ordering: .relaxed)
        core.notificationThreadID.store(0, ordering: .relaxed)
        core.shutdownByInfoCallback.store(false, ordering: .relaxed)
        core.latencyRequests.store(0, ordering: .relaxed)

        let arg = UnsafeMutableRawPointer(context)
        if jack_set_process_callback(client, jackProcessCallback, arg) != 0 {
            return fail(.callbackRegistrationFailed(callback: "process"))
        }
        if jack_set_buffer_size_callback(client, jackBufferSizeCallback, arg) != 0 {
            return fail(.callbackRegistrationFailed(callback: "buffer-size"))
        }
        if jack_set_sample_rate_callback(client, jackSampleRateCallback, arg) != 0 {
            return fail(.callbackRegistrationFailed(callback: "sample-rate"))
        }
        if jack_set_xrun_callback(client, jackXRunCallback, arg) != 0 {
            return fail(.callbackRegistrationFailed(callback: "xrun"))
        }
        if jack_set_latency_callback(client, jackLatencyCallback, arg) != 0 {
            return fail(.callbackRegistrationFailed(callback: "latency"))
        }
        if jack_set_port_connect_callback(client, jackPortConnectCallback, arg) != 0 {
            return fail(.callbackRegistrationFailed(callback: "port-connect"))
        }
        if jack_set_port_registration_callback(client, jackPortRegistrationCallback, arg) != 0 {
            return fail(.callbackRegistrationFailed(callback: "port-registration"))
        }
        // Other sessions' state lives in metadata; a server without metadata support just never calls.
        _ = jack_set_property_change_callback(client, jackPropertyChangeCallback, arg)
        _ = jack_set_client_registration_callback(client, jackClientRegistrationCallback, arg)
        jack_on_info_shutdown(client, jackInfoShutdownCallback, arg)
        jack_on_shutdown(client, jackShutdownCallback, arg)

        var outputNames: [String] = []
        var inputNames: [String] = []
        let portFlags = [UInt(JackPortIsOutput.rawValue), UInt(JackPortIsInput.rawValue)]
        // Only the sets the session's category keeps (`setMainPorts`); the others' slots stay empty.
        let main = JackMainPorts(bits: core.mainPortBits.load(ordering: .acquiring))
        for (direction, count) in [config.outputChannelCount, config.inputChannelCount].enumerated() {
            if direction == 0 ? !main.outputs : !main.inputs { continue }
            for i in 0..<count {
                let shortName = (direction == 0 ? "out_" : "in_") + String(i + 1)
                guard
                    let (port, fullName) = JackPorts.register(
                        client: client, shortName: shortName, flags: portFlags[direction])
                else { return fail(.portRegistrationFailed(port: shortName)) }
                if direction == 0 {
                    context.pointee.outputPorts[i] = port
                    outputNames.append(fullName)
                } else {
                    context.pointee.inputPorts[i] = port
                    inputNames.append(fullName)
                }
            }
        }

        core.latency.modify { ports in
            ports = JackLatencyPorts()
            for i in 0..<config.outputChannelCount {
                if let p = context.pointee.outputPorts[i] { ports.mainOutputs.append(p) }
            }
            for i in 0..<config.inputChannelCount {
                if let p = context.pointee.inputPorts[i] { ports.mainInputs.append(p) }
            }
        }
        // The other-audio monitor (the old port, if any, went with the old client).
        core.monitorPort.store(nil, ordering: .releasing)
        if monitorsOtherAudio && registerMonitorPort(client: client) == nil {
            return fail(.portRegistrationFailed(port: Self.otherAudioPortName))
        }
        // Inserts exposed before this start (no cycle runs yet).
        var insertPorts: [String: JackInsertPorts] = [:]
        if let inserts { _ = applyInserts(inserts, client: client, ports: &insertPorts, isActive: false) }

        let thread: pthread_t
        switch JackHostCore.startEventThread(core: core, readFD: fds[0], context: context) {
        case .failure(let error): return fail(error)
        case .success(let t): thread = t
        }
        // From here the event thread owns the context and the read end; closing the write end stops it.
        // Relaxed: jack_activate's IPC orders it before the first cycle.
        core.startHookPending.store(startHook != nil, ordering: .relaxed)
        let code = JackRequests.serialized { jack_activate(client) }
        if code != 0 {
            _ = jack_client_close(client)
            releaseInserts()
            // EOF ends the event thread, which frees the context. Detached, not joined: its exit path
            // takes the state lock, which we hold.
            close(fds[1])
            _ = pthread_detach(thread)
            return .failure(.activationFailed(code: code))
        }

        let session = JackSession(
            client: client, context: context, wakeFD: fds[1], eventThread: thread, actualClientName: actualName,
            serverName: serverName, outputPortNames: outputNames, inputPortNames: inputNames, insertPorts: insertPorts)
        let connections = makesConfiguredConnections ? makeConnections(client: client, session: session) : []
        seedRoute(client: client, session: session, context: context)
        core.followOtherAudio(client: client)
        if !properties.isEmpty {
            Self.applyProperties(properties, removing: [], last: propertiesWrittenLast, client: client)
        }
        let report = JackHostStartReport(
            requestedClientName: clientName ?? config.clientName, actualClientName: actualName, serverName: serverName,
            sampleRate: core.sampleRateValue.load(ordering: .relaxed),
            bufferSize: core.bufferSizeValue.load(ordering: .relaxed),
            outputPorts: outputNames, inputPorts: inputNames, connections: connections)
        return .success((report, session))
    }

    /// The route as the client opens it (announced changes are the ones after this).
    private func seedRoute(
        client: OpaquePointer, session: JackSession, context: UnsafeMutablePointer<JackRenderContext>
    ) {
        let edges = JackConnectionMemory.snapshot(
            client: client, ports: core.ownPorts(context: context, session: session))
        let physical = JackPorts.ports(
            client: client, pattern: nil, type: nil, flags: UInt(JackPortIsPhysical.rawValue))
        core.route.withLock { watch in
            watch = JackRouteWatch()
            _ = watch.observe(
                edges: edges, mainOutputs: Set(session.outputPortNames), mainInputs: Set(session.inputPortNames))
            _ = watch.observe(physicalPorts: Set(physical))
        }
    }

    /// The ports our main outputs and inputs are connected to, sorted (as the last route change said).
    public var route: [String] { core.route.withLock { $0.route } }

    /// Suspends rendering (Wwise's Suspend): the outputs play silence; with `renderAnyway` the engine
    /// goes on rendering (its time advances, players move on), otherwise nothing is rendered (time
    /// stands still; requests still apply). Any thread.
    public func suspend(renderAnyway: Bool) {
        // Relaxed: a mode the process callback reads each cycle.
        core.suspendMode.store(renderAnyway ? 2 : 1, ordering: .relaxed)
    }

    /// The rate the engine renders at, once it has taken the server's (0, the default: no check). While
    /// the server runs at another rate (it came back at a new one, and the control side has not yet
    /// rebuilt the engine at it), every cycle renders nothing and plays silence, as `suspend` without
    /// rendering: nothing plays or is recorded at the wrong speed. Any thread.
    public func setEngineSampleRate(_ rate: Int) {
        // Relaxed: a value the process callback reads each cycle.
        core.engineSampleRate.store(max(0, rate), ordering: .relaxed)
    }

    /// Whether cycles are silent because the engine renders at another rate than the server's.
    public var isWaitingForEngineRate: Bool {
        // Relaxed: a status.
        let rate = core.engineSampleRate.load(ordering: .relaxed)
        return isRunning && rate != 0 && rate != core.sampleRateValue.load(ordering: .relaxed)
    }

    /// Ends a suspension (Wwise's WakeupFromSuspend). Any thread.
    public func wakeUp() { core.suspendMode.store(0, ordering: .relaxed) }

    /// True while suspended.
    public var isSuspended: Bool { core.suspendMode.load(ordering: .relaxed) != 0 }

    /// Control side. Asks the server for periods of `frames` (`jack_set_buffer_size`, which changes the
    /// period of every client) and returns the period in force once the server has answered (up to a
    /// second), or nil when the host is not running. The server may refuse a size its backend cannot
    /// run; the period then stays what it was.
    public func requestBufferSize(frames: Int) -> Int? {
        let asked: Bool? = withClient { client in
            JackRequests.serialized { jack_set_buffer_size(client, jack_nframes_t(clamping: frames)) } == 0
        }
        guard let asked else { return nil }
        if asked {
            for _ in 0..<100 where core.bufferSizeValue.load(ordering: .relaxed) != frames { usleep(10_000) }
        }
        return core.bufferSizeValue.load(ordering: .relaxed)
    }

    /// Physical outputs first (when configured), then the configured pairs.
    func makeConnections(client: OpaquePointer, session: JackSession) -> [JackConnectionResult] {
        var results: [JackConnectionResult] = []
        if configuration.connectPhysicalOutputs {
            let physical = JackPorts.physicalPorts(client: client, direction: .playback)
            if physical.isEmpty && !session.outputPortNames.isEmpty {
                results.append(
                    JackConnectionResult(
                        source: session.outputPortNames[0], destination: "(physical playback)",
                        outcome: .failed("the server has no physical playback ports")))
            }
            let outputs = session.outputPortNames
            let pairs: [(String, String)] =
                outputs.count == 1
                ? physical.prefix(2).map { (outputs[0], $0) }
                : zip(outputs, physical).map { ($0, $1) }
            for (source, destination) in pairs {
                results.append(JackPorts.connect(client: client, source, destination))
            }
        }
        for pair in configuration.connections {
            let source = resolve(pair.from, clientName: session.actualClientName)
            let destination = resolve(pair.to, clientName: session.actualClientName)
            results.append(JackPorts.connect(client: client, source, destination))
        }
        return results
    }

    /// A name without ':' is one of our own ports.
    private func resolve(_ port: String, clientName: String) -> String {
        port.contains(":") ? port : clientName + ":" + port
    }

    /// Why `name` cannot be a JACK client name (empty, too long for libjack, or holding ':'), or nil.
    /// jack2's `jack_client_name_size()` counts the terminating NUL, and its client open refuses a name
    /// of that size less one too ("too long to be used as a JACK client name"): 63 bytes at most.
    public static func clientNameProblem(_ name: String) -> String? {
        let maxName = Int(jack_client_name_size()) - 2
        if name.isEmpty { return "the client name is empty" }
        if name.utf8.count > maxName { return "the client name '\(name)' is longer than \(maxName) bytes" }
        if name.contains(":") { return "the client name must not contain ':'" }
        return nil
    }

    private static func validate(_ config: JackHostConfiguration) -> String? {
        if let problem = clientNameProblem(config.clientName) { return problem }
        let range = 0...JackHostConfiguration.maximumChannelCount
        if !range.contains(config.outputChannelCount) {
            return "outputChannelCount \(config.outputChannelCount) is outside \(range)"
        }
        if !range.contains(config.inputChannelCount) {
            return "inputChannelCount \(config.inputChannelCount) is outside \(range)"
        }
        return nil
    }

    // MARK: State (any thread)

    /// True while the client is open and active (false after `stop()` and after the server died).
    public var isRunning: Bool { core.state.withLock { $0.session?.client != nil } }

    /// True after the server died, until `stop()` or the next `start()`.
    public var isServerLost: Bool { core.state.withLock { $0.session?.isServerLost ?? false } }

    /// Connections of our ports the host will make when both ports exist: all of them while the server
    /// is lost, afterwards those whose other port has not come (back) yet. With the live connections,
    /// what a saved session should hold.
    public var pendingConnections: [JackEdge] {
        core.connectionMemory.withLock { Array($0.pending) }
    }

    /// The server's sample rate in Hz, as last reported (0 before the first start).
    public var sampleRate: Int { core.sampleRateValue.load(ordering: .relaxed) }

    /// The server's period in frames, as last reported (0 before the first start).
    public var bufferSize: Int { core.bufferSizeValue.load(ordering: .relaxed) }

    /// Xruns reported since the host was created. Expect some without realtime scheduling.
    public var xrunCount: Int { core.xrunCounter.load(ordering: .relaxed) }

    /// Frames from the main outputs to where they are heard: the largest playback latency JACK reports
    /// downstream of `out_1…out_N` (0 while they are unconnected). Follows graph and latency changes;
    /// feed it to `Engine.setOutputLatency` so `dataPlayedBack` fires when the audio has left the output.
    public var playbackLatencyFrames: Int { core.playbackLatencyValue.load(ordering: .relaxed) }

    /// Process cycles run since the host was created (goes up while audio flows).
    public var processCycleCount: Int { core.cycleCounter.load(ordering: .relaxed) }

    /// `jack_cpu_load`: the server's DSP load in percent (all clients), 0 when not running.
    public var cpuLoad: Double {
        core.state.withLock { state in
            guard let client = state.session?.client else { return 0 }
            return Double(jack_cpu_load(client))
        }
    }

    /// The client's name as JACK knows it (nil when no session exists). Kept after a server loss until
    /// `stop()`.
    public var actualClientName: String? { core.state.withLock { $0.session?.actualClientName } }

    /// The server this host uses (or would use): the session's, else the configuration's resolved name.
    public var serverName: String {
        core.state.withLock { $0.session?.serverName } ?? configuration.resolvedServerName
    }

    /// Full names of our playback ports (empty when no session exists).
    public var outputPortNames: [String] { core.state.withLock { $0.session?.outputPortNames ?? [] } }

    /// Full names of our capture ports (empty when no session exists).
    public var inputPortNames: [String] { core.state.withLock { $0.session?.inputPortNames ?? [] } }

    // MARK: Ports (control side; wrap JackPorts on our client)

    /// Physical playback ports of the server (empty when not running).
    public func physicalPlaybackPorts() -> [String] {
        withClient { JackPorts.physicalPorts(client: $0, direction: .playback) } ?? []
    }

    /// Physical capture ports of the server (empty when not running).
    public func physicalCapturePorts() -> [String] {
        withClient { JackPorts.physicalPorts(client: $0, direction: .capture) } ?? []
    }

    /// Connects two ports, in either order; names without ':' are our own ports (`out_1`). Insert ports
    /// requested before the call exist by then.
    /// The lock is held only to ask jackd and then for each look at the graph, not while the connection
    /// waits for the next cycle to show it: other threads (the OSC thread's status and metadata checks)
    /// get through meanwhile.
    public func connect(_ source: String, to destination: String) -> JackConnectionResult {
        if let waiting = requestWhileServerLost(source, destination, connect: true) { return waiting }
        awaitInsertRequests()
        let notRunning = JackConnectionResult(
            source: source, destination: destination, outcome: .failed("the JACK host is not running"))
        let step = withClientAndName { client, name in
            JackPorts.requestConnection(
                client: client, resolve(source, clientName: name), resolve(destination, clientName: name))
        }
        switch step {
        case nil:
            return notRunning
        case .answered(let result):
            return result
        case .awaiting(let request):
            for _ in 0..<JackPorts.pollLimit {
                switch withClient({ JackPorts.isConnected(client: $0, request.source, request.destination) }) {
                case nil: return notRunning
                case true: return request.result
                case false: usleep(5_000)
                }
            }
            return request.ignored
        }
    }

    /// Disconnects two ports, in either order; names without ':' are our own ports.
    public func disconnect(_ source: String, from destination: String) -> JackConnectionResult {
        if let waiting = requestWhileServerLost(source, destination, connect: false) { return waiting }
        awaitInsertRequests()
        return withClientAndName { client, name in
            let (a, b) = (resolve(source, clientName: name), resolve(destination, clientName: name))
            // A connection asked away is not made again when its port appears.
            core.connectionMemory.withLock { memory in
                memory.pending.remove(JackEdge(source: a, destination: b))
                memory.pending.remove(JackEdge(source: b, destination: a))
            }
            return JackPorts.disconnect(client: client, a, b)
        }
            ?? JackConnectionResult(
                source: source, destination: destination, outcome: .failed("the JACK host is not running"))
    }

    /// Full names of the ports connected to `port` (ours when it has no ':').
    public func connections(of port: String) -> [String] {
        awaitInsertRequests()
        return withClientAndName { client, name in
            JackPorts.connections(client: client, port: resolve(port, clientName: name))
        } ?? []
    }

    /// While the server is away (and the host comes back, `reconnectsAfterServerLoss`), a connection asked
    /// for waits with those the loss left to make again,
    /// and a removal takes it (either way round) from them; nil when the server is not away. A removal
    /// of a connection that was not waiting fails, as it would with the server there.
    private func requestWhileServerLost(_ source: String, _ destination: String, connect: Bool)
        -> JackConnectionResult?
    {
        // A host that does not come back by itself has nothing to carry them out at.
        guard configuration.reconnectsAfterServerLoss else { return nil }
        return core.state.withLock { state in
            guard let session = state.session, session.isServerLost else { return nil }
            let a = resolve(source, clientName: session.actualClientName)
            let b = resolve(destination, clientName: session.actualClientName)
            let found = core.connectionMemory.withLock { memory -> Bool in
                if connect {
                    memory.pending.insert(JackEdge(source: a, destination: b))
                    return true
                }
                // The loss's own bookkeeping (what the ports had, moved to `pending` by the event
                // thread) may not have run yet: the connection is taken from every list.
                var found = false
                for edge in [JackEdge(source: a, destination: b), JackEdge(source: b, destination: a)] {
                    if memory.pending.remove(edge) != nil { found = true }
                    if memory.observed.remove(edge) != nil { found = true }
                    if memory.recentlyRemoved.removeValue(forKey: edge) != nil { found = true }
                }
                return found
            }
            return JackConnectionResult(
                source: a, destination: b,
                outcome: found ? .waitingForServer : .failed("not connected (the server is away)"))
        }
    }

    private func withClient<T>(_ body: (OpaquePointer) -> T) -> T? {
        withClientAndName { client, _ in body(client) }
    }

    /// Runs `body` under the state lock, so the client cannot be closed meanwhile.
    func withClientAndName<T>(_ body: (OpaquePointer, String) -> T) -> T? {
        core.state.withLock { state in
            guard let session = state.session, let client = session.client else { return nil }
            return body(client, session.actualClientName)
        }
    }
}

extension JackHost {
    /// Opens a client. PipeWire's libjack renames a client whose name is taken ("soundstage-48") without
    /// a JackNameNotUnique status, and its port names and `jack_get_client_name` keep the name asked for;
    /// so when the server knows the client under another name, the client is opened again under that
    /// name, and every name this process gives is the one the graph shows.
    static func openClient(
        _ name: String, _ options: jack_options_t, _ status: inout jack_status_t, _ server: String
    ) -> OpaquePointer? {
        guard let client = jackshim_client_open(name, options, &status, server) else { return nil }
        guard JackLibraryKind.current == .pipeWire, let uuid = jack_client_get_uuid(client) else { return client }
        defer { jack_free(uuid) }
        guard let text = JackRequests.serialized({ jack_get_client_name_by_uuid(client, uuid) }) else { return client }
        let real = String(cString: text)
        jack_free(text)
        guard real != name, !real.isEmpty else { return client }
        _ = jack_client_close(client)
        return jackshim_client_open(real, options, &status, server)
    }
}

// Control side. `soundstage run`: load a patch and play it through JACK until interrupted.
import ArgumentParser
import AudioGraph
import Dispatch
import Foundation
import JackHost
import Locking
import OSCControl
import SoundstageKit
import Synchronization

struct RunCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Play a patch through JACK (starting a JACK server when none runs) until Ctrl-C.",
        discussion: """
            Under the New Session Manager (NSM_URL set) Soundstage announces itself as 'Soundstage' with \
            :switch:dirty:message:, waits for the session to open, uses the session's folder (patch.yaml, \
            copies of the files it plays, recordings) and the client id as its JACK name, saves on \
            /nsm/client/save and quits on SIGTERM. See docs/NSM.md.
            """)

    @Argument(
        help:
            "Patch file. Optional under the New Session Manager (NSM_URL set): the session's patch.yaml wins, and a new session starts from this patch or an empty graph (docs/NSM.md)."
    )
    var patch: String?

    @Option(name: .long, help: "JACK client name (under NSM the session manager's client id is used).")
    var name: String = "soundstage"

    @Option(name: .long, help: "JACK server name (default: $JACK_DEFAULT_SERVER or 'default').")
    var server: String?

    @Flag(name: .long, help: "Connect the outputs to the physical playback ports.")
    var connect = false

    @Option(
        name: .long, parsing: .unconditional, help: "Stop after this many seconds (default: run until SIGINT/SIGTERM).")
    var duration: Double?

    @Flag(name: .long, help: "Never start a JACK server; fail when none runs.")
    var noStartServer = false

    @Option(
        name: .long, parsing: .unconditional,
        help:
            "OSC port, UDP and TCP (default 57130; 0 picks a free port; under NSM a taken default gives way to a free port; see docs/OSC.md)."
    )
    var oscPort: Int?

    @Option(
        name: .long, help: "Address the OSC server binds (127.0.0.1: this machine only; 0.0.0.0 or :: for the network)."
    )
    var oscHost: String = "127.0.0.1"

    @Option(
        name: .long, parsing: .unconditional,
        help:
            "OSCQuery and web view port, HTTP and WebSocket (default 57131; 0 turns it off; a taken default gives way to a free port; see docs/WEB_VIEW.md)."
    )
    var httpPort: Int?

    @Option(
        name: .long,
        help: "Address the web server binds (127.0.0.1: this machine only; 0.0.0.0 or :: for the network)."
    )
    var httpHost: String = "127.0.0.1"

    @Flag(
        name: .long,
        help: "Serve OSCQuery and the web view read-only: nothing sent through them changes the engine."
    )
    var httpReadOnly = false

    @Option(
        name: .long,
        help:
            "A further name the web server answers requests for (repeatable): besides IP addresses, localhost and this machine's name; other names are refused, as a DNS rebinding page would use one."
    )
    var httpAllowHost: [String] = []

    @Option(
        name: .long,
        help:
            "Folder OSC clients may read and write (repeatable; default: the patch's folder and the working directory)."
    )
    var fileRoot: [String] = []

    @Flag(
        name: .long,
        help:
            "Reload the patch when its file changes, as a diff: what stays keeps playing (SIGHUP reloads with or without it)."
    )
    var watch = false

    @OptionGroup var quiet: QuietOption

    func validate() throws {
        if let duration {
            guard duration.isFinite, duration > 0 else { throw ValidationError("--duration must be > 0") }
        }
        if let problem = JackHost.clientNameProblem(name) { throw ValidationError("--name: \(problem)") }
        guard (0...65535).contains(oscPort ?? 0) else { throw ValidationError("--osc-port must be 0…65535") }
        guard (0...65535).contains(httpPort ?? 0) else { throw ValidationError("--http-port must be 0…65535") }
        for allowed in httpAllowHost
        where allowed.isEmpty || allowed.contains(where: { ":/[]@".contains($0) || $0.isWhitespace }) {
            throw ValidationError(
                "--http-allow-host '\(allowed)' is not a host name (a name alone: no port, no scheme)")
        }
        for root in fileRoot {
            var isFolder: ObjCBool = false
            guard FileManager.default.fileExists(atPath: root, isDirectory: &isFolder), isFolder.boolValue else {
                throw ValidationError("--file-root '\(root)' is not a folder")
            }
        }
    }

    func run() throws {
        quiet.apply()
        // SIGHUP reloads the patch once the engine plays (PatchReloader); until then it must not end run.
        signal(SIGHUP, SIG_IGN)
        // Under the New Session Manager (NSM_URL set) the session decides the patch and the JACK name.
        if let url = ProcessInfo.processInfo.environment["NSM_URL"], !url.isEmpty {
            if try runManaged(url: url) { return }
        }
        guard let patch else {
            printError("no patch given (a patch is optional only under a session manager: NSM_URL)")
            throw ExitCode(1)
        }
        // 1. Validate the whole patch before touching JACK: nothing half-started on error.
        let patchStamp = FileStamp(path: patch)
        let loaded = try loadPatch(patch, rate: nil)
        let ownServer = try ensureServer(rate: Int(loaded.engine.configuration.sampleRate))
        defer { ownServer?.stop() }
        let roots = fileRoot.isEmpty ? FileAccessPolicy.defaults(patchPath: patch).roots : fileRoot
        _ = try play(
            loaded, patchPath: patch, patchStamp: patchStamp, clientName: name, roots: roots, ownServer: ownServer,
            signals: nil, managed: nil)
    }

    /// 2. A server: use the running one, or start one and say so (and start it again if it dies).
    func ensureServer(rate: Int) throws -> ServerKeeper? {
        let serverName = JackHostConfiguration.resolveServerName(server)
        guard !JackServerLauncher.isServerRunning(name: serverName) else { return nil }
        if noStartServer {
            printError("no JACK server named '\(serverName)' is running (and --no-start-server was given)")
            throw ExitCode(1)
        }
        try playThroughPipeWireIfItRuns(serverName: serverName)
        do {
            let process = try JackServerLauncher.start(name: server, sampleRate: rate)
            if let socket = JackLibraryKind.pipeWireSocket(environment: ProcessInfo.processInfo.environment) {
                printError(
                    "PipeWire runs here (\(socket)) and cannot see the jackd just started for '\(serverName)'; "
                        + "with a sound card they would fight over it. To play through PipeWire: pw-jack soundstage run …"
                )
            }
            say(
                "No JACK server '\(serverName)' was running: started jackd (\(process.backend) backend, \(rate) Hz), "
                    + "pid \(process.pid); it stops when soundstage stops (killed outright, soundstage leaves it "
                    + "running, and the next run uses it).")
            return ServerKeeper(process, name: server, sampleRate: rate)
        } catch {
            printError("could not start a JACK server: \(error)")
            throw ExitCode(1)
        }
    }

    /// How `play` ended.
    enum PlayOutcome {
        /// A signal, the duration or /quit.
        case stopped
        /// The session manager opened another session (`:switch:`), ready to play.
        case switched(ManagedSession.Prepared)
    }

    /// Plays `first` through JACK as `clientName` until a signal, the duration, /quit or (managed) a
    /// switch to another session. `patchPath` is reloaded when the server runs at another rate, and on
    /// SIGHUP or (`--watch`) when it changes; `patchStamp` is the file as it was when `first` was read
    /// (nil: as it is now). Without `signals`, SIGINT and SIGTERM are caught from the control loop on
    /// (before it they end the program).
    func play(
        _ first: LoadedPatch, patchPath: String, patchStamp: FileStamp? = nil, clientName: String, roots: [String],
        ownServer: ServerKeeper?, signals: SignalWatcher?, managed: ManagedSession?
    ) throws -> PlayOutcome {
        let patchStamp = patchStamp ?? FileStamp(path: patchPath)
        var loaded = first
        // 3. The host; if the server runs at another rate, rebuild the patch at that rate once.
        let events = EventInbox()
        var host = makeHost(loaded, clientName: clientName, events: events)
        var report = try start(host)
        if report.sampleRate != Int(loaded.engine.configuration.sampleRate) {
            say("JACK runs at \(report.sampleRate) Hz: reloading the patch at that rate.")
            host.stop()
            loaded = try loadPatch(patchPath, rate: Double(report.sampleRate))
            host = makeHost(loaded, clientName: clientName, events: events)
            report = try start(host)
        }
        defer { host.stop() }
        // From here on, a server that comes back at another rate is silent until the engine has its rate.
        host.setEngineSampleRate(Int(loaded.engine.configuration.sampleRate))

        if report.wasRenamed {
            say(
                "The client name '\(report.requestedClientName)' was taken: JACK named this client '\(report.actualClientName)'."
            )
        }
        say(
            "JACK client '\(report.actualClientName)' on server '\(report.serverName)': \(report.sampleRate) Hz, "
                + "\(report.bufferSize)-frame periods")
        let insertPorts = host.insertPortNames.sorted { $0.key < $1.key }.flatMap { $0.value.inputs + $0.value.outputs }
        say("ports: " + (report.outputPorts + report.inputPorts + insertPorts).joined(separator: ", "))
        for c in report.connections { say("connection: \(c)") }
        // Whether the render thread got real-time scheduling, on stderr (a service must know; docs/SERVICE.md).
        // A real-time server whose client was refused it is an error, printed even with --quiet.
        if let realtime = host.realtimeStatus {
            let refused = realtime.serverIsRealtime && !realtime.isRealtime
            (refused ? printError : chatter)("real-time scheduling: \(realtime)")
        }
        say(loaded.summary())

        // Live from here on: an HRTF set first needed now loads on a worker, so no request waits for it.
        loaded.engine.setLoadsHRTFSetsInBackground(true)
        // And a time-pitch node (or an audioplayer with enableRate) takes a stretcher built ahead.
        loaded.engine.keepTimePitchSpares()
        // OSC control: one thread owning the liblo servers; it only calls Engine methods.
        let oscHostAdapter = JackOSCHost(host)
        let osc = try startOSC(loaded, host: oscHostAdapter, roots: roots, managed: managed != nil)
        defer { osc.stop() }
        // The patch's recorders start now, under OSC control like those made with /recorder/new.
        let (recorders, recorderProblems) = loaded.startRecorders()
        for problem in recorderProblems { printError(problem) }
        for (name, recorder) in recorders.sorted(by: { $0.key < $1.key }) {
            say("recorder \(name): \(recorder.node) → \(recorder.path)\(recorder.isRecording ? " (recording)" : "")")
        }
        osc.adopt(recorders: recorders)
        // Files are complete before the program exits (stop waits for the disk).
        defer { for recorder in recorders.values { recorder.stop() } }
        // Hot reload: SIGHUP always, the file's changes with --watch; applied on the reloader's queue.
        let reloader = PatchReloader(
            path: patchPath, engine: loaded.engine, host: host, osc: osc, loaded: loaded.document, stamp: patchStamp)
        reloader.reloadOnHangup()
        if watch {
            reloader.watch()
            say("watching \(patchPath): a change reloads it (a patch with errors is refused whole).")
        }
        defer { reloader.stop() }
        managed?.opened(loaded, host: oscHostAdapter)
        say(duration.map { "playing for \($0) s…" } ?? "playing; press Ctrl-C to stop.")

        // 4. Control loop: housekeeping every 10 ms until a signal, the duration or /quit (a lost server is
        // waited for).
        let stopSignal = signals ?? SignalWatcher()
        let deadline = duration.map { Date().addingTimeInterval($0) }
        var outputLatency = -1
        var heapTrim = HeapTrimmer()
        var transport = TransportFollower()
        var outcome = PlayOutcome.stopped
        var announced = AnnouncedConfiguration(rate: host.sampleRate, frames: host.bufferSize)
        while true {
            // dataPlayedBack completions wait for JACK's playback latency, which follows the connections.
            if host.playbackLatencyFrames != outputLatency {
                outputLatency = host.playbackLatencyFrames
                loaded.engine.setOutputLatency(frames: outputLatency)
            }
            loaded.engine.poll()
            for event in events.drain() {
                switch event {
                case .serverLost(let reason):
                    osc.post(.serverLost(reason: reason))
                    printError(
                        "JACK server lost: \(reason). Keeping the graph; waiting for server '\(host.serverName)' to come back."
                    )
                    ownServer?.serverLost()
                case .serverReturned(let back):
                    let made = back.restored.filter(\.isConnected).count
                    say(
                        "JACK server back after \(back.attempts) attempt(s): client '\(back.start.actualClientName)', "
                            + "\(back.start.sampleRate) Hz, \(back.start.bufferSize)-frame periods; "
                            + "\(made) of \(back.restored.count) connection(s) restored"
                            + (back.waiting.isEmpty ? "" : ", \(back.waiting.count) waiting for their ports"))
                    for failed in back.restored where !failed.isConnected { printError("connection: \(failed)") }
                    osc.post(
                        .servicesReset(
                            clientName: back.start.actualClientName, sampleRate: back.start.sampleRate,
                            bufferSize: back.start.bufferSize))
                case .peersChanged:
                    osc.post(.sessionPeersChanged)
                case .routeChanged(let change):
                    // Printed on stderr by the session journal, with every other session event.
                    osc.post(
                        .routeChanged(
                            reason: change.reason.rawValue, previous: change.previousRoute,
                            current: change.currentRoute,
                            outputsLostLastConnection: change.outputsLostLastConnection))
                case .sampleRateChanged(let rate):
                    say("JACK sample rate changed to \(rate) Hz: rebuilding buffers at that rate.")
                    for problem in loaded.changeSampleRate(to: Double(rate)) { printError(problem) }
                    loaded.engine.keepTimePitchSpares()
                    host.setEngineSampleRate(rate)
                    announced.post(rate: rate, frames: host.bufferSize, to: osc)
                case .bufferSizeChanged(let frames):
                    say("JACK period is now \(frames) frames.")
                    announced.post(rate: host.sampleRate, frames: frames, to: osc)
                case .xrun(let count, let delay):
                    osc.post(.xrun(count: count, delayedMicroseconds: delay))
                }
            }
            if let managed, let next = managed.service(loaded, host: oscHostAdapter) {
                say("The session manager opened another session: switching to \(next.folder.path).")
                outcome = .switched(next)
                break
            }
            if oscHostAdapter.quitRequested {
                say("/quit received over OSC: stopping.")
                break
            }
            if let signal = stopSignal.received {
                say("\(signal) received: stopping.")
                break
            }
            if let deadline, Date() >= deadline { break }
            heapTrim.tick()
            if let position = host.transportPosition(),
                let change = transport.follow(position, sampleRate: Double(host.sampleRate), period: host.bufferSize)
            {
                osc.post(.transport(rolling: change.rolling, locatedSeconds: change.locatedSeconds))
            }
            usleep(10_000)
        }
        say(
            JackLibraryKind.current.countsXruns
                ? "xruns: \(host.xrunCount)" : "xruns: not counted (PipeWire's libjack never reports them)")
        reloader.stop()
        osc.stop()
        host.stop()
        return outcome
    }

    /// Starts OSC control on the requested port. Under a session manager without `--osc-port`, a taken
    /// default port gives way to a free one (several Soundstage clients in one session).
    private func startOSC(_ loaded: LoadedPatch, host: JackOSCHost, roots: [String], managed: Bool) throws
        -> OSCService
    {
        func service(port: Int) -> OSCService {
            var options = OSCServiceOptions(
                port: port, host: oscHost, fileRoots: roots, programName: "soundstage",
                version: Soundstage.version, pauseOnRouteLoss: loaded.document.session.pauseOnRouteLoss ?? false,
                nowPlaying: loaded.document.session.nowPlaying, sessionStart: SessionStart(loaded.document.session),
                quitRefusal: managed
                    ? "under a session manager Soundstage quits on SIGTERM, which the manager sends" : nil,
                sessionJournal: { printError($0) })
            if httpPort != 0 {
                options.web = WebServerOptions(
                    port: httpPort ?? WebServerOptions.defaultPort, host: httpHost,
                    fallsBackToFreePort: httpPort == nil,
                    isReadOnly: httpReadOnly, allowedHostNames: httpAllowHost)
            }
            return OSCService(engine: loaded.engine, host: host, options: options)
        }
        var osc = service(port: oscPort ?? OSCServiceOptions.defaultPort)
        do {
            let port: Int
            do {
                port = try osc.start()
            } catch  where managed && oscPort == nil {
                say("OSC port \(OSCServiceOptions.defaultPort) is taken: using a free port.")
                osc = service(port: 0)
                port = try osc.start()
            }
            say("OSC: udp and tcp on \(oscHost):\(port) (file roots: \(roots.joined(separator: ", ")))")
            if let httpPort = osc.httpPort {
                let shown = httpHost.contains(":") ? "[\(httpHost)]" : httpHost
                say(
                    "web view: http://\(shown):\(httpPort)/view (OSCQuery at /\(httpReadOnly ? ", read-only" : ""))")
            }
        } catch {
            printError("could not start OSC control: \(error)")
            throw ExitCode(1)
        }
        return osc
    }

    func loadPatch(_ path: String, rate: Double?) throws -> LoadedPatch {
        do {
            // A missing or unreadable audio file is a warning: the rest of the patch plays.
            let loaded = try PatchLoader.load(
                path: path, overrides: .init(sampleRate: rate, toleratesFileProblems: true))
            for warning in loaded.warnings { printError(warning.description) }
            return loaded
        } catch {
            printError(error.description)
            throw ExitCode(1)
        }
    }

    private func makeHost(_ loaded: LoadedPatch, clientName: String, events: EventInbox) -> JackHost {
        let config = loaded.engine.configuration
        let hostConfig = JackHostConfiguration(
            clientName: clientName, serverName: server, outputChannelCount: config.outputChannelCount,
            inputChannelCount: config.inputChannelCount, connectPhysicalOutputs: connect || loaded.connectPhysical,
            connections: loaded.jackConnections, reconnectsAfterServerLoss: true)
        let host = JackHost(configuration: hostConfig, renderEngine: loaded.engine.renderEngine) { events.post($0) }
        // The session's category decides which main ports exist from the start.
        let category = SessionCategory.starting(
            SessionStart(loaded.document.session).category, hasInputs: config.inputChannelCount > 0)
        host.setMainPorts(JackMainPorts(outputs: category.mainPorts.outputs, inputs: category.mainPorts.inputs))
        // Effects with `insert: true` get ports now (before connections are made) and whenever it changes.
        host.setInserts(loaded.engine.hostInsertLayout)
        // Later changes go to the host's port thread: the thread that edited the graph (OSC's) never
        // waits for jackd.
        loaded.engine.setHostInsertObserver { [host] layout in
            host.requestInserts(layout) { problems in for problem in problems { printError(problem) } }
        }
        return host
    }

    private func start(_ host: JackHost) throws -> JackHostStartReport {
        do {
            return try host.start()
        } catch {
            printError("could not start the JACK client: \(error)")
            throw ExitCode(1)
        }
    }
}

/// The JACK host as OSC sees it: status, port connections of our client, and /quit.
final class JackOSCHost: OSCHost, Sendable {
    let host: JackHost
    private let quitFlag = Atomic<Bool>(false)

    init(_ host: JackHost) { self.host = host }

    func status() -> OSCHostStatus {
        OSCHostStatus(
            state: host.isServerLost ? "server-lost" : host.isRunning ? "running" : "stopped",
            sampleRate: host.sampleRate, bufferSize: host.bufferSize, dspLoad: host.cpuLoad,
            // -1: this server cannot count them (PipeWire's libjack never calls the xrun callback).
            xrunCount: JackLibraryKind.current.countsXruns ? host.xrunCount : -1, serverName: host.serverName,
            clientName: host.actualClientName ?? "")
    }

    func connect(_ source: String, to destination: String) throws(OSCHostError) {
        let result = host.connect(source, to: destination)
        if case .failed(let reason) = result.outcome { throw OSCHostError(reason) }
    }

    func disconnect(_ source: String, from destination: String) throws(OSCHostError) {
        let result = host.disconnect(source, from: destination)
        if case .failed(let reason) = result.outcome { throw OSCHostError(reason) }
    }

    func listConnections() -> [(source: String, destination: String)] {
        var edges: [(source: String, destination: String)] = []
        for port in host.outputPortNames {
            for other in host.connections(of: port) { edges.append((port, other)) }
        }
        for port in host.inputPortNames {
            for other in host.connections(of: port) { edges.append((other, port)) }
        }
        for (_, ports) in host.insertPortNames.sorted(by: { $0.key < $1.key }) {
            for port in ports.outputs {
                for other in host.connections(of: port) { edges.append((port, other)) }
            }
            for port in ports.inputs {
                for other in host.connections(of: port) { edges.append((other, port)) }
            }
        }
        return edges
    }

    func savedConnections() -> [(source: String, destination: String)] {
        var seen: Set<JackEdge> = []
        var edges: [(source: String, destination: String)] = []
        let live = listConnections().map { JackEdge(source: $0.source, destination: $0.destination) }
        for edge in live
            + host.pendingConnections.sorted(by: { ($0.source, $0.destination) < ($1.source, $1.destination) })
        where seen.insert(edge).inserted {
            edges.append((edge.source, edge.destination))
        }
        return edges
    }

    func suspend(renderAnyway: Bool) throws(OSCHostError) { host.suspend(renderAnyway: renderAnyway) }

    func wakeUp() throws(OSCHostError) { host.wakeUp() }

    func route() -> [String] { host.route }

    func publishProperties(_ properties: [String: String], writingLast last: [String]) {
        host.setClientProperties(properties, writingLast: last)
    }

    func realtime() -> (state: String, policy: String, priority: Int) {
        guard let status = host.realtimeStatus else { return ("unknown", "unknown", 0) }
        return (status.word, status.policy, status.priority)
    }

    func clientProperties(withPrefix prefix: String) -> [String: [String: String]] {
        host.clientProperties(withPrefix: prefix)
    }

    func setMainPorts(outputs: Bool, inputs: Bool) -> [String] {
        host.setMainPorts(JackMainPorts(outputs: outputs, inputs: inputs))
    }

    func refreshProperties() -> Bool { host.refreshClientProperties() }

    func clientExists(_ name: String) -> Bool { host.clientExists(name) }

    func setOtherAudioMonitoring(_ on: Bool) -> String? { host.setOtherAudioMonitoring(on) }

    func takeOtherAudioPeak() -> Float { host.takeOtherAudioPeak() }

    func overrideOutputs(_ ports: [String]?) -> [String] { host.overrideMainOutputs(ports) }

    func requestBufferSize(frames: Int) throws(OSCHostError) -> Int {
        guard let got = host.requestBufferSize(frames: frames) else {
            throw OSCHostError("the JACK host is not running")
        }
        return got
    }

    /// The main loop checks `quitRequested` and leaves (Relaxed: a flag polled every 10 ms).
    func quit() { quitFlag.store(true, ordering: .relaxed) }

    var quitRequested: Bool { quitFlag.load(ordering: .relaxed) }
}

/// Host events, handed from the host's event thread to the control loop.
final class EventInbox: Sendable {
    private let events = Locked<[JackHostEvent]>([])
    func post(_ event: JackHostEvent) { events.withLock { $0.append(event) } }
    func drain() -> [JackHostEvent] {
        events.withLock { e in
            defer { e = [] }; return e
        }
    }
}

/// Records SIGINT/SIGTERM instead of dying, so the control loop can shut down cleanly.
final class SignalWatcher {
    private let sources: [DispatchSourceSignal]
    private let name = Arc()

    final class Arc: Sendable { let value = Locked<String?>(nil) }

    init() {
        var sources: [DispatchSourceSignal] = []
        for number in [SIGINT, SIGTERM] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            sources.append(source)
        }
        self.sources = sources
        for (source, label) in zip(sources, ["SIGINT", "SIGTERM"]) {
            source.setEventHandler { [name] in name.value.withLock { $0 = label } }
            source.resume()
        }
    }

    var received: String? { name.value.withLock { $0 } }
}

// OSC thread. The address space: which handler serves which address (table in docs/OSC.md), and the
// engine-level addresses (/ping /status /version /quit /sync).
import AudioFiles
import AudioGraph

extension OSCServiceCore {
    /// A handler of an address served by exact match.
    typealias Route = @Sendable (OSCServiceCore, OSCRequest, _ frame: Int64?) throws(OSCFailure) -> Void

    /// The addresses served by exact match: the table docs/OSC.md's address rows are checked against.
    /// `/node/<name>/…` is `nodeRoutes` (and parameters), `/recorder/<name>/…` is `recorderRoutes`.
    static let routes: [String: Route] = [
        "/ping": { core, r, _ in core.reply(r.client, OSCMessage("/pong", r.arguments)) },
        "/status": { core, r, _ throws(OSCFailure) in try core.status(r) },
        "/status/memory": { core, r, _ throws(OSCFailure) in try core.statusMemory(r) },
        "/status/realtime": { core, r, _ throws(OSCFailure) in try core.statusRealtime(r) },
        "/version": { core, r, _ throws(OSCFailure) in try core.version(r) },
        "/quit": { core, r, _ throws(OSCFailure) in try core.quit(r) },
        "/sync": { core, r, _ throws(OSCFailure) in try core.sync(r) },
        "/sched/list": { core, r, _ throws(OSCFailure) in try core.schedList(r) },
        "/sched/cancel": { core, r, _ throws(OSCFailure) in try core.schedCancel(r) },
        "/clearSched": { core, r, _ throws(OSCFailure) in try core.clearSched(r) },
        "/node/new": { core, r, _ throws(OSCFailure) in try core.nodeNew(r) },
        "/node/free": { core, r, _ throws(OSCFailure) in try core.nodeFree(r) },
        "/node/list": { core, r, _ throws(OSCFailure) in try core.nodeList(r) },
        "/node/kinds": { core, r, _ throws(OSCFailure) in try core.nodeKinds(r) },
        "/graph/connect": { core, r, _ throws(OSCFailure) in try core.graphEdit(r, connect: true) },
        "/graph/disconnect": { core, r, _ throws(OSCFailure) in try core.graphEdit(r, connect: false) },
        "/graph/list": { core, r, _ throws(OSCFailure) in try core.graphList(r) },
        "/buffer/load": { core, r, _ throws(OSCFailure) in try core.bufferLoad(r) },
        "/buffer/free": { core, r, _ throws(OSCFailure) in try core.bufferFree(r) },
        "/buffer/list": { core, r, _ throws(OSCFailure) in try core.bufferList(r) },
        "/patch/load": { core, r, _ throws(OSCFailure) in try core.patchLoad(r) },
        "/patch/save": { core, r, _ throws(OSCFailure) in try core.patchSave(r) },
        "/notify": { core, r, _ throws(OSCFailure) in try core.notifyRequest(r) },
        "/renew": { core, r, _ throws(OSCFailure) in try core.renew(r) },
        "/meters": { core, r, _ throws(OSCFailure) in try core.meters(r) },
        "/sound/play": { core, r, _ throws(OSCFailure) in try core.soundPlay(r) },
        "/recorder/new": { core, r, _ throws(OSCFailure) in try core.recorderNew(r) },
        "/recorder/list": { core, r, _ throws(OSCFailure) in try core.recorderList(r) },
        "/session/params": { core, r, _ throws(OSCFailure) in try core.sessionParams(r) },
        "/session/pauseOnRouteLoss": { core, r, _ throws(OSCFailure) in try core.sessionPauseOnRouteLoss(r) },
        "/session/preferredIOBufferDuration": { core, r, _ throws(OSCFailure) in
            try core.sessionPreferredIOBufferDuration(r)
        },
        "/session/preferredSampleRate": { core, r, _ throws(OSCFailure) in try core.sessionPreferredSampleRate(r) },
        "/session/interrupt": { core, r, _ throws(OSCFailure) in try core.sessionInterrupt(r) },
        "/session/suspend": { core, r, _ throws(OSCFailure) in try core.sessionSuspend(r) },
        "/session/wakeup": { core, r, _ throws(OSCFailure) in try core.sessionWakeUp(r) },
        "/session/route": { core, r, _ throws(OSCFailure) in try core.sessionRoute(r) },
        "/session/state": { core, r, _ throws(OSCFailure) in try core.sessionStateRequest(r) },
        "/session/nowPlaying": { core, r, _ throws(OSCFailure) in try core.sessionNowPlaying(r) },
        "/session/nowPlayingInfo": { core, r, _ throws(OSCFailure) in try core.sessionNowPlayingInfo(r) },
        "/session/remote": { core, r, _ throws(OSCFailure) in try core.sessionRemote(r) },
        "/session/activate": { core, r, _ throws(OSCFailure) in try core.sessionActivate(r) },
        "/session/deactivate": { core, r, _ throws(OSCFailure) in try core.sessionDeactivate(r) },
        "/session/category": { core, r, _ throws(OSCFailure) in try core.sessionCategory(r) },
        "/session/mode": { core, r, _ throws(OSCFailure) in try core.sessionMode(r) },
        "/session/mixWithOthers": { core, r, _ throws(OSCFailure) in
            try core.sessionOption(r, \.mixWithOthers, name: "mixWithOthers")
        },
        "/session/duckOthers": { core, r, _ throws(OSCFailure) in
            try core.sessionOption(r, \.duckOthers, name: "duckOthers")
        },
        "/session/interruptSpokenAudioAndMixWithOthers": { core, r, _ throws(OSCFailure) in
            try core.sessionOption(
                r, \.interruptSpokenAudioAndMixWithOthers, name: "interruptSpokenAudioAndMixWithOthers")
        },
        "/session/duckLevel": { core, r, _ throws(OSCFailure) in try core.sessionDuckLevel(r) },
        "/session/silentSwitch": { core, r, _ throws(OSCFailure) in try core.sessionSilentSwitch(r) },
        "/session/overrideOutputPort": { core, r, _ throws(OSCFailure) in try core.sessionOverrideOutputPort(r) },
        "/session/monitorOtherAudio": { core, r, _ throws(OSCFailure) in try core.sessionMonitorOtherAudio(r) },
        "/session/otherAudioPlaying": { core, r, _ throws(OSCFailure) in try core.sessionOtherAudioPlaying(r) }
    ]

    /// Serves one request. `frame` is the engine sample time from the bundle's time tag (nil: next cycle).
    func route(_ r: OSCRequest, frame: Int64?) throws(OSCFailure) {
        if let route = Self.routes[r.address] {
            try route(self, r, frame)
        } else if r.address.hasPrefix("/node/") {
            try nodeAddress(r, frame: frame)
        } else if r.address.hasPrefix("/recorder/") {
            try recorderAddress(r)
        } else {
            throw OSCFailure(.unknownAddress, "no address '\(OSCText.sanitized(r.address))'")
        }
    }

    /// Runs an engine call, turning its error into an OSC failure with the engine's code.
    func engineCall<T>(_ body: () throws(EngineError) -> T) throws(OSCFailure) -> T {
        do {
            return try body()
        } catch {
            throw OSCFailure(error)
        }
    }

    /// A client path confined to the file roots.
    func resolve(_ path: String) throws(OSCFailure) -> String {
        do {
            return try files.resolve(path)
        } catch {
            throw OSCFailure(.fileOutsideRoots, error.message)
        }
    }

    /// A client path to write (a patch, a recording), confined to the file roots and naming a regular
    /// file or none yet; with `allowsFIFO` a FIFO too (whose writer waits a bounded time for a reader,
    /// `FIFOReader`). A device, or a FIFO for a recording, is refused: without a reader the write would
    /// wait, and every file request of every client waits behind it on the one worker.
    func resolveForWriting(_ path: String, allowsFIFO: Bool = false) throws(OSCFailure) -> String {
        let resolved = try resolve(path)
        if let kind = FileKind.nonRegularDescription(path: resolved), !(allowsFIFO && kind == "a FIFO") {
            throw OSCFailure(
                .fileError,
                "'\(OSCText.sanitized(path))' is \(kind): over OSC only regular files are written (a FIFO or "
                    + "device waits for its reader, and every file request would wait with it)")
        }
        return resolved
    }

    // MARK: Engine

    private func status(_ r: OSCRequest) throws(OSCFailure) {
        try OSCArguments(r).end()
        let s =
            host?.status()
            ?? OSCHostStatus(
                state: "offline", sampleRate: Int(engine.configuration.sampleRate), bufferSize: 0, dspLoad: 0,
                xrunCount: 0, serverName: "", clientName: "")
        reply(
            r.client,
            OSCMessage(
                "/status.reply",
                [
                    .string(s.state), .int32(Int32(clamping: s.sampleRate)), .int32(Int32(clamping: s.bufferSize)),
                    .float(Float(s.dspLoad)), .int32(Int32(clamping: s.xrunCount)),
                    .int32(Int32(clamping: engine.nodes().count)),
                    .string(s.serverName), .string(s.clientName),
                    .int32(Int32(clamping: counters.droppedDatagrams.value)),
                    .string(session.name(serverLost: s.state == "server-lost"))
                ]))
    }

    /// `/status/realtime` → `/status/realtime.reply s:state s:policy i:priority` (`offline` without a host).
    private func statusRealtime(_ r: OSCRequest) throws(OSCFailure) {
        try OSCArguments(r).end()
        let rt = host?.realtime() ?? (state: "offline", policy: "none", priority: 0)
        reply(
            r.client,
            OSCMessage(
                "/status/realtime.reply", [.string(rt.state), .string(rt.policy), .int32(Int32(clamping: rt.priority))])
        )
    }

    private func statusMemory(_ r: OSCRequest) throws(OSCFailure) {
        try OSCArguments(r).end()
        let m = ProcessMemory.current()
        reply(
            r.client,
            OSCMessage(
                "/status/memory.reply",
                [
                    .int64(m.residentBytes), .int64(m.heapInUseBytes), .int64(m.heapFreeBytes),
                    .int64(m.heapMappedBytes),
                    .int32(Int32(clamping: engine.nodes().count))
                ]))
    }

    private func version(_ r: OSCRequest) throws(OSCFailure) {
        try OSCArguments(r).end()
        let parts = options.version.split(separator: ".").map { Int32($0.prefix { $0.isNumber }) ?? 0 }
        func part(_ i: Int) -> Int32 { i < parts.count ? parts[i] : 0 }
        reply(
            r.client,
            OSCMessage(
                "/version.reply",
                [
                    .string(options.programName), .int32(part(0)), .int32(part(1)), .int32(part(2)),
                    .string(OSCService.apiVersion)
                ]))
    }

    private func quit(_ r: OSCRequest) throws(OSCFailure) {
        try OSCArguments(r).end()
        guard let host else { throw OSCFailure(.unsupported, "this engine has no host to quit") }
        if let refusal = options.quitRefusal { throw OSCFailure(.unsupported, refusal) }
        done(r.client, "/quit")
        host.quit()
    }

    private func sync(_ r: OSCRequest) throws(OSCFailure) {
        var a = OSCArguments(r)
        let id = a.isAtEnd ? .int32(0) : try a.any("id")
        try a.end()
        jobs.pendingSyncs.append(
            PendingSync(
                client: r.client.detached, argument: id, jobs: jobs.issued,
                commands: engine.renderEngine.commands.producedCount,
                received: SystemClock.monotonicSeconds()))
    }
}

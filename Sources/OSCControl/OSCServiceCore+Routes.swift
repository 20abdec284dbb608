// OSC thread. The address space: which handler serves which address (table in docs/OSC.md), and the
// engine-level addresses (/ping /status /version /quit /sync).
import AudioGraph

extension OSCServiceCore {
    /// Serves one request. `frame` is the engine sample time from the bundle's time tag (nil: next cycle).
    func route(_ r: OSCRequest, frame: Int64?) throws(OSCFailure) {
        switch r.address {
        case "/ping": reply(r.client, OSCMessage("/pong", r.arguments))
        case "/status": try status(r)
        case "/status/memory": try statusMemory(r)
        case "/version": try version(r)
        case "/quit": try quit(r)
        case "/sync": try sync(r)
        case "/node/new": try nodeNew(r)
        case "/node/free": try nodeFree(r)
        case "/node/list": try nodeList(r)
        case "/graph/connect": try graphEdit(r, connect: true)
        case "/graph/disconnect": try graphEdit(r, connect: false)
        case "/graph/list": try graphList(r)
        case "/buffer/load": try bufferLoad(r)
        case "/buffer/free": try bufferFree(r)
        case "/buffer/list": try bufferList(r)
        case "/patch/load": try patchLoad(r)
        case "/patch/save": try patchSave(r)
        case "/notify": try notifyRequest(r)
        case "/renew": try renew(r)
        case "/meters": try meters(r)
        case "/sound/play": try soundPlay(r)
        case "/recorder/new": try recorderNew(r)
        case "/recorder/list": try recorderList(r)
        default:
            if r.address.hasPrefix("/node/") {
                try nodeAddress(r, frame: frame)
            } else if r.address.hasPrefix("/recorder/") {
                try recorderAddress(r)
            } else {
                throw OSCFailure(.unknownAddress, "no address '\(OSCText.sanitized(r.address))'")
            }
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

    // MARK: Engine

    private func status(_ r: OSCRequest) throws(OSCFailure) {
        try OSCArguments(r).end()
        let s = host?.status() ?? OSCHostStatus(
            state: "offline", sampleRate: Int(engine.configuration.sampleRate), bufferSize: 0, dspLoad: 0,
            xrunCount: 0, serverName: "", clientName: "")
        reply(r.client, OSCMessage("/status.reply", [
            .string(s.state), .int32(Int32(clamping: s.sampleRate)), .int32(Int32(clamping: s.bufferSize)),
            .float(Float(s.dspLoad)), .int32(Int32(clamping: s.xrunCount)), .int32(Int32(clamping: engine.nodes().count)),
            .string(s.serverName), .string(s.clientName), .int32(Int32(clamping: counters.droppedDatagrams.value)),
        ]))
    }

    private func statusMemory(_ r: OSCRequest) throws(OSCFailure) {
        try OSCArguments(r).end()
        let m = ProcessMemory.current()
        reply(r.client, OSCMessage("/status/memory.reply", [
            .int64(m.residentBytes), .int64(m.heapInUseBytes), .int64(m.heapFreeBytes), .int64(m.heapMappedBytes),
            .int32(Int32(clamping: engine.nodes().count)),
        ]))
    }

    private func version(_ r: OSCRequest) throws(OSCFailure) {
        try OSCArguments(r).end()
        let parts = options.version.split(separator: ".").map { Int32($0.prefix { $0.isNumber }) ?? 0 }
        func part(_ i: Int) -> Int32 { i < parts.count ? parts[i] : 0 }
        reply(r.client, OSCMessage("/version.reply", [
            .string(options.programName), .int32(part(0)), .int32(part(1)), .int32(part(2)), .string(OSCService.apiVersion),
        ]))
    }

    private func quit(_ r: OSCRequest) throws(OSCFailure) {
        try OSCArguments(r).end()
        guard let host else { throw OSCFailure(.unsupported, "this engine has no host to quit") }
        done(r.client, "/quit")
        host.quit()
    }

    private func sync(_ r: OSCRequest) throws(OSCFailure) {
        var a = OSCArguments(r)
        let id = a.isAtEnd ? .int32(0) : try a.any("id")
        try a.end()
        pendingSyncs.append(PendingSync(
            client: r.client.detached, argument: id, jobs: jobsIssued, commands: engine.renderEngine.commands.producedCount,
            received: SystemClock.monotonicSeconds()))
    }
}

// OSC thread. The future bundles the service holds, seen and withdrawn: /sched/list, /sched/cancel and
// /clearSched (scsynth's name).
import AudioGraph

extension OSCServiceCore {
    /// Waiting bundles `/sched/list` sends when not told how many: about 7 datagrams of 4 KB, which any
    /// client's socket buffer takes at once (all 4096 at once are about 110, more than a default Linux
    /// UDP buffer of 208 KB holds while a slow client reads).
    static let schedListPage = 256

    /// `/sched/list [i:offset [i:count]]` → `/sched/info i:id t:timetag f:secondsAhead i:messages
    /// s:firstAddress s:sender` per held bundle from `offset` (default 0), at most `count` (default 256), in
    /// the order they will run, packed into bundles of at most 4 KB; then `/reply s:/sched/list i:offset
    /// i:listed i:waiting`.
    func schedList(_ r: OSCRequest) throws(OSCFailure) {
        var a = OSCArguments(r)
        let offset = try a.optionalInteger("offset") ?? 0
        let count = try a.optionalInteger("count") ?? Int64(Self.schedListPage)
        try a.end()
        guard offset >= 0, offset <= Int64(Int32.max) else {
            throw a.failure("the offset must be 0…\(Int32.max), not \(offset)")
        }
        guard count >= 1, count <= Int64(options.maxScheduledBundles) else {
            throw a.failure("the count must be 1…\(options.maxScheduledBundles), not \(count)")
        }
        let now = SystemClock.pairedNow().wall
        let start = min(Int(offset), scheduler.held.count)
        let page = scheduler.held[start..<min(start + Int(count), scheduler.held.count)]
        let infos = page.map { bundle in
            let first = bundle.requests[0]
            return OSCMessage(
                "/sched/info",
                [
                    .int32(bundle.id), .timetag(bundle.timetag), .float(Float(bundle.timetag.seconds(since: now))),
                    .int32(Int32(clamping: bundle.requests.count)), .string(first.patternAddress ?? first.address),
                    .string(first.client.key)
                ])
        }
        for group in OSCMeterPacking.bundles(infos) { replyBundle(r.client, group) }
        reply(
            r.client,
            OSCMessage(
                "/reply",
                [
                    .string(r.address), .int32(Int32(offset)), .int32(Int32(infos.count)),
                    .int32(Int32(clamping: scheduler.held.count))
                ]))
    }

    /// `/sched/cancel i:id…` → `/done /sched/cancel i:id…`. All or nothing: an id that is not waiting
    /// (already handed to the engine, cancelled, or never given) cancels none of them.
    func schedCancel(_ r: OSCRequest) throws(OSCFailure) {
        var a = OSCArguments(r)
        var ids: [Int32] = []
        repeat {
            let id = try a.integer("bundle id")
            guard let narrow = Int32(exactly: id), narrow >= 1 else {
                throw a.failure("bundle ids are 1…\(Int32.max), not \(id)")
            }
            guard !ids.contains(narrow) else { throw a.failure("bundle \(id) is given twice") }
            ids.append(narrow)
        } while !a.isAtEnd
        let waiting = Set(scheduler.held.map(\.id))
        for id in ids where !waiting.contains(id) {
            let reason =
                id >= 1 && id < scheduler.nextID
                ? "is no longer waiting: it was handed to the engine "
                    + "\(Int((options.schedulingLookahead * 1000).rounded())) ms before its time tag, or cancelled"
                : "was never scheduled"
            throw OSCFailure(.unknownBundle, "future bundle \(id) \(reason); nothing was cancelled")
        }
        let cancelled = Set(ids)
        scheduler.held.removeAll { cancelled.contains($0.id) }
        done(r.client, r.address, ids.map { .int32($0) })
    }

    /// `/clearSched` → `/done /clearSched i:cancelled`: every held bundle, whoever sent it.
    func clearSched(_ r: OSCRequest) throws(OSCFailure) {
        try OSCArguments(r).end()
        let count = scheduler.held.count
        scheduler.held.removeAll()
        done(r.client, r.address, [.int32(Int32(clamping: count))])
    }

    /// Sends messages to a client as one bundle, by the same route as `reply`.
    private func replyBundle(_ client: ClientRef, _ messages: [OSCMessage]) {
        if let id = subscriptions.replyRoutes[client.key], let subscription = subscriptions.byID[id] {
            sendBundle(messages, timetag: .immediate, to: subscription.address)
            return
        }
        switch client.target {
        case .owned(let address): endpoint.sendBundle(messages, timetag: .immediate, to: address.raw)
        case .borrowedTCP(let address): endpoint.sendBundle(messages, timetag: .immediate, to: address)
        case .unreachable: break
        case .web(let web): sendBundle(messages, timetag: .immediate, to: .web(web))
        }
    }
}

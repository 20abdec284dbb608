// OSC thread. The future bundles the service holds, seen and withdrawn: /sched/list, /sched/cancel and
// /clearSched (scsynth's name).
import AudioGraph

extension OSCServiceCore {
    /// `/sched/list` → `/sched/info i:id t:timetag f:secondsAhead i:messages s:firstAddress s:sender` per
    /// held bundle in release order, packed into bundles of at most 4 KB, then `/reply s:/sched/list`.
    func schedList(_ r: OSCRequest) throws(OSCFailure) {
        try OSCArguments(r).end()
        let now = SystemClock.pairedNow().wall
        let infos = scheduler.held.map { bundle in
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
        reply(r.client, OSCMessage("/reply", [.string(r.address)]))
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
        for id in ids where !scheduler.held.contains(where: { $0.id == id }) {
            let reason =
                id >= 1 && id < scheduler.nextID
                ? "is no longer waiting: it was handed to the engine "
                    + "\(Int((options.schedulingLookahead * 1000).rounded())) ms before its time tag, or cancelled"
                : "was never scheduled"
            throw OSCFailure(.unknownBundle, "future bundle \(id) \(reason); nothing was cancelled")
        }
        scheduler.held.removeAll { ids.contains($0.id) }
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
            endpoint.sendBundle(messages, timetag: .immediate, to: subscription.address.raw)
            return
        }
        switch client.target {
        case .owned(let address): endpoint.sendBundle(messages, timetag: .immediate, to: address.raw)
        case .borrowedTCP(let address): endpoint.sendBundle(messages, timetag: .immediate, to: address)
        case .unreachable: break
        }
    }
}

// OSC thread. Running collected requests: atomic bundles, time tags → sample frames, held future
// bundles, /late, summarized pattern failures, /sync.
import AudioGraph

/// A future bundle waiting for its release time (its time tag minus the scheduling lookahead).
struct HeldBundle {
    /// The number `/sched/list` shows and `/sched/cancel` takes (1, 2, 3… in arrival order).
    let id: Int32
    /// The earliest time tag in the bundle (the one its sample times are converted from).
    let timetag: OSCTimetag
    /// CLOCK_MONOTONIC seconds.
    let release: Double
    let requests: [OSCRequest]
}

/// A `/sync` waiting for earlier work to take effect.
struct PendingSync {
    let client: ClientRef
    let argument: OSCArgument
    /// Worker jobs issued before it.
    let jobs: Int
    /// Engine commands sent before it.
    let commands: Int
    let received: Double
    /// Engine sample time seen once everything above was done; /synced goes out after the render
    /// thread has passed it (so a program published before /sync is installed too).
    var renderedMark: Int64?
}

extension OSCServiceCore {
    /// Runs a packet's requests: a plain message at once (the next render cycle); a bundle atomically,
    /// at once or at its time tag.
    func execute(_ items: [Collected], isBundle: Bool) {
        var requests: [OSCRequest] = []
        for item in items {
            switch item {
            case .request(let r): requests.append(r)
            case .failure(let client, let address, let failure): sendError(client, address: address, failure)
            }
        }
        guard !requests.isEmpty else { return }
        let tags = requests.map(\.timetag).filter { !$0.isImmediate }
        guard isBundle, let earliest = tags.min() else {
            run(requests, frames: nil, isBundle: isBundle)
            return
        }
        let now = SystemClock.pairedNow()
        let ahead = earliest.seconds(since: now.wall)
        if ahead > options.schedulingHorizon {
            sendError(
                requests[0].client, address: requests[0].address,
                OSCFailure(
                    .badTimetag,
                    "the bundle's time tag is \((ahead * 10).rounded(.up) / 10) s ahead; the limit is "
                        + "\(options.schedulingHorizon) s"))
            return
        }
        if ahead > options.schedulingLookahead {
            guard scheduler.held.count < options.maxScheduledBundles else {
                sendError(
                    requests[0].client, address: requests[0].address,
                    OSCFailure(
                        .scheduleFull,
                        "\(scheduler.held.count) future bundles are already waiting; this one was dropped"))
                return
            }
            let release = Double(now.monotonicNanoseconds) / 1e9 + ahead - options.schedulingLookahead
            let detached = requests.map { request -> OSCRequest in
                var copy = request
                copy.client = request.client.detached
                return copy
            }
            let bundle = HeldBundle(
                id: scheduler.takeID(), timetag: earliest, release: release, requests: detached)
            // In time tag order, equal tags in arrival order (their release times, read from the clocks at
            // arrival, may differ by the clocks' jitter).
            let index = scheduler.held.firstIndex { $0.timetag > earliest } ?? scheduler.held.endIndex
            scheduler.held.insert(bundle, at: index)
            return
        }
        runTimed(requests, now: now)
    }

    /// Hands held bundles whose release time has come to the engine.
    func releaseDueBundles(now: Double) {
        while let first = scheduler.held.first, first.release <= now {
            scheduler.held.removeFirst()
            runTimed(first.requests, now: SystemClock.pairedNow())
        }
    }

    /// Runs a bundle with sample times from its time tags; a late bundle runs at once and its sender
    /// gets `/late s:address f:seconds`.
    func runTimed(_ requests: [OSCRequest], now: (wall: OSCTimetag, monotonicNanoseconds: Int64)) {
        guard let anchor = currentClockAnchor() else {
            // Nothing rendered yet: there is no clock to schedule against; apply at the first cycle.
            run(requests, frames: nil, isBundle: true)
            return
        }
        let frames = OSCClockMapping.sampleTimes(
            for: requests.map(\.timetag), wallNow: now.wall, monotonicNow: now.monotonicNanoseconds, anchor: anchor)
        let earliestFrame = frames.compactMap({ $0 }).min()
        var lateOnArrival = 0.0
        if let earliestTag = requests.map(\.timetag).filter({ !$0.isImmediate }).min(), let earliestFrame {
            lateOnArrival = -earliestTag.seconds(since: now.wall)
            let next = engine.sampleTime
            if earliestFrame < next {
                lateOnArrival = max(lateOnArrival, Double(next - earliestFrame) / anchor.sampleRate)
            }
        }
        // A bundle refused whole applied neither late nor on time: its sender hears only the /error.
        guard run(requests, frames: frames, isBundle: true) else { return }
        if lateOnArrival > 0 {
            reportLate(requests, seconds: lateOnArrival)
        } else if let earliestFrame {
            // The engine may have been busy (another thread's batch, a patch being swapped in): if the
            // render thread passed the bundle's frame before the bundle reached it, it applied late. One
            // period may pass between handing the commands over and reading the clock, hence the margin.
            let overdue = Double(engine.sampleTime - earliestFrame) / anchor.sampleRate
            if overdue > Self.lateMargin { reportLate(requests, seconds: overdue) }
        }
    }

    /// Seconds past its frame after which a bundle that has been handed over counts as late (more than a
    /// JACK period at usual settings).
    static let lateMargin = 0.01

    private func reportLate(_ requests: [OSCRequest], seconds late: Double) {
        counters.lateBundles.add(1)
        let first = requests[0]
        if clients.mayReportError(first.client.key, now: SystemClock.monotonicSeconds()) {
            let address = first.patternAddress ?? first.address
            reply(first.client, OSCMessage("/late", [.string(address), .float(Float(late))]))
        }
    }

    /// Runs requests in order; more than one (a bundle, or a pattern's matches) in one engine batch so
    /// their changes reach the render thread in the same cycle. Failures are reported afterwards; a
    /// pattern's failures as one /error. A bundle is checked whole first: when a message would fail a
    /// check `EditPlan` can make, nothing in it applies and that message gets the one /error. Returns
    /// whether anything applied.
    @discardableResult
    func run(_ requests: [OSCRequest], frames: [Int64?]?, isBundle: Bool = false) -> Bool {
        if isBundle && requests.count > 1, let refused = firstFailure(inBundle: requests) {
            let request = refused.request
            sendError(
                request.client, address: request.patternAddress ?? request.address,
                OSCFailure(refused.failure.code, "nothing in the bundle was applied: \(refused.failure.message)"))
            return false
        }
        var failures: [(request: OSCRequest, failure: OSCFailure)] = []
        func perform(_ index: Int) {
            do throws(OSCFailure) {
                try route(requests[index], frame: frames?[index] ?? nil)
            } catch {
                failures.append((requests[index], error))
            }
        }
        if requests.count == 1 {
            perform(0)
        } else {
            do throws(EngineError) {
                try engine.batch { () throws(EngineError) in
                    for index in requests.indices { perform(index) }
                }
            } catch {
                sendError(
                    requests[0].client, address: requests[0].patternAddress ?? requests[0].address, OSCFailure(error))
                report(failures, of: requests)
                return false
            }
        }
        report(failures, of: requests)
        return failures.count < requests.count
    }

    private func report(_ failures: [(request: OSCRequest, failure: OSCFailure)], of requests: [OSCRequest]) {
        guard !failures.isEmpty else { return }
        var byPattern: [Int: [(request: OSCRequest, failure: OSCFailure)]] = [:]
        var order: [Int] = []
        for item in failures {
            guard let id = item.request.patternID else {
                sendError(item.request.client, address: item.request.address, item.failure)
                continue
            }
            if byPattern[id] == nil { order.append(id) }
            byPattern[id, default: []].append(item)
        }
        for id in order {
            let list = byPattern[id]!
            let total = requests.filter { $0.patternID == id }.count
            let first = list[0]
            let pattern = first.request.patternAddress ?? first.request.address
            let message =
                list.count == 1 && total == 1
                ? first.failure.message
                : "\(list.count) of \(total) matches of '\(OSCText.sanitized(pattern))' failed; first: "
                    + "\(first.request.address): \(first.failure.message)"
            sendError(first.request.client, address: pattern, OSCFailure(first.failure.code, message))
        }
    }

    // MARK: /sync

    func checkSyncs(now: Double) {
        guard !jobs.pendingSyncs.isEmpty else { return }
        let consumed = engine.renderEngine.commands.consumedCount
        let rendered = engine.sampleTime
        var remaining: [PendingSync] = []
        for var sync in jobs.pendingSyncs {
            if let mark = sync.renderedMark {
                if rendered > mark {
                    reply(sync.client, OSCMessage("/synced", [sync.argument]))
                    continue
                }
            } else if jobs.completed >= sync.jobs && consumed >= sync.commands {
                sync.renderedMark = rendered
            }
            // The timeout counts from when the jobs before it finished (a long load is not a stall).
            let since = jobs.completed >= sync.jobs ? max(sync.received, jobs.completedAt) : now
            if now - since > options.syncTimeout {
                sendError(
                    sync.client, address: "/sync",
                    OSCFailure(
                        .notRendering,
                        "the engine rendered nothing for \(options.syncTimeout) s; earlier commands have not taken effect"
                    ))
                continue
            }
            remaining.append(sync)
        }
        jobs.pendingSyncs = remaining
    }
}

// Control side plus the host's event thread. State shared by `JackHost`, the libjack callbacks (through
// `JackRenderContext.core`) and the event thread, which outlives neither the client nor this object.
import AudioGraph
import CJack
import Dispatch
import Glibc
import Locking
import Synchronization

/// One open client and what belongs to it. Lives in `JackHostCore.state`; touched only under its lock,
/// which is what makes the raw pointers safe to share (hence `nonisolated(unsafe)`).
struct JackSession: Sendable {
    /// nil once closed (by `stop()`, or by the event thread after the server died).
    nonisolated(unsafe) var client: OpaquePointer?
    /// Owned by the session's event thread, which frees it when it exits (after the client is closed).
    nonisolated(unsafe) var context: UnsafeMutablePointer<JackRenderContext>?
    /// Write end of the event pipe; closing it (after the client) makes the event thread exit.
    var wakeFD: Int32
    var eventThread: pthread_t?
    var actualClientName: String
    var serverName: String
    var outputPortNames: [String]
    var inputPortNames: [String]
    var isServerLost = false
    /// The thread trying to open the client again after a loss (`reconnectsAfterServerLoss`).
    var reconnectThread: pthread_t?
    /// Registered insert ports by node.
    var insertPorts: [String: JackInsertPorts] = [:]
}

/// Mutable host state guarded by `JackHostCore.state`.
struct JackHostState: Sendable {
    var session: JackSession?
    nonisolated(unsafe) var startHook: (@convention(c) () -> Void)?
    /// The newest insert layout given to `setInserts` (applied at every start).
    var insertLayout: HostInsertLayout?
    /// Metadata properties kept on our client (applied at every start).
    var clientProperties: [String: String] = [:]
    /// Keys of `clientProperties` written after all others, in this order (`setClientProperties`).
    var propertiesWrittenLast: [String] = []
    /// The store file our properties were last written to through `jack_property`, while this
    /// process's copy of the metadata store is a deleted one (`JackMetadataStore`).
    var propertiesWrittenOutOfProcess: JackMetadataStore.FileIdentity?
    /// The store as `jack_property -l` last listed it, with `JackHostCore.propertyChanges` as it was
    /// before that listing and the store file it read.
    var storeListing: (changes: Int, store: JackMetadataStore.FileIdentity?, listing: [String: [String: String]])?
    /// A complete write of our properties, or a listing, is queued on `JackHostCore.metadataQueue`.
    var isRepairQueued = false
    /// Keys of ours whose removal from a store written out of process did not land: the next complete
    /// write removes them again.
    var removalsNotLanded: Set<String> = []
    var isListingQueued = false
    /// The last listing failed (`jack_property` could not read the store, or took too long): the next
    /// property check reads the peers again, since no callback may come to say so.
    var isListingRetryDue = false
    /// The connections of the main outputs / inputs when they were last unregistered (`setMainPorts`).
    var parkedOutputEdges: Set<JackEdge> = []
    var parkedInputEdges: Set<JackEdge> = []
    /// `other_audio` is wanted (registered at every open).
    var monitorsOtherAudio = false
    /// The main outputs' connections before `overrideMainOutputs` took them over (nil: no override).
    var overriddenOutputEdges: Set<JackEdge>?
}

/// Insert layouts handed to the port thread (`JackHost.requestInserts`), guarded by
/// `JackHostCore.insertRequests`.
struct JackInsertRequests: Sendable {
    /// The newest layout not yet taken by the port thread, with whom to tell of problems.
    var newest: (layout: HostInsertLayout, onProblems: Callback<[String]>?)?
    /// The newest version requested, and the newest applied.
    var requested = Int.min
    var applied = Int.min
    /// True from a request until the port thread finds nothing more to apply.
    var isDraining = false
    /// Layouts the port thread has applied (requests that waited behind a newer one are not).
    var drainedCount = 0
}

/// Shared by the host object, the callbacks and the event thread. Callbacks only touch the atomics.
final class JackHostCore: Sendable {
    /// Last sample rate / period reported by the server (0 before the first start).
    let sampleRateValue = Atomic<Int>(0)
    let bufferSizeValue = Atomic<Int>(0)
    /// Xruns since the host was created; delay of the latest one (Float bits, µs).
    let xrunCounter = Atomic<Int>(0)
    let xrunDelayBits = Atomic<UInt32>(0)
    /// The main outputs' playback latency (the largest, in frames) as the latency callback last saw it.
    let playbackLatencyValue = Atomic<Int>(0)
    /// Whether the latency callback leaves setting our ports' latencies to the event thread (PipeWire's
    /// libjack, which the process loads once; see `jackLatencyCallback`).
    let defersLatency = JackLibraryKind.current == .pipeWire
    /// The latency modes the callback asked for and the event thread has not set yet (bit 0: capture,
    /// bit 1: playback).
    let latencyRequests = Atomic<UInt8>(0)
    /// Process cycles run since the host was created.
    let cycleCounter = Atomic<Int>(0)
    /// Which main port sets exist (`JackMainPorts.bits`): the process callback reads those slots only.
    let mainPortBits = Atomic<UInt8>(3)
    /// The `other_audio` monitor port (a `jack_port_t *`), nil when not monitoring; and the largest
    /// absolute sample it heard since the control side last took it (Float bits).
    nonisolated(unsafe) let monitorPort = Atomic<UnsafeMutableRawPointer?>(nil)
    let otherAudioPeakBits = Atomic<UInt32>(0)
    /// Set before activation when a start hook is installed; cleared by the first process cycle.
    let startHookPending = Atomic<Bool>(false)
    /// Set by the info-shutdown callback; cleared by `start()`.
    let serverLostFlag = Atomic<Bool>(false)
    /// True while the process callback runs (a lost client is closed only once its cycle has ended:
    /// libjack cancels its threads asynchronously at close).
    let processRunning = Atomic<Bool>(false)
    /// Set by the first shutdown callback of a session (either kind); cleared by `start()`.
    let shutdownRecorded = Atomic<Bool>(false)
    /// The kernel thread id of libjack's notification thread, as its callbacks last recorded it (0: none
    /// seen yet), and whether the loss came through the info-shutdown callback (jackd2's libjack). Both
    /// are cleared by `start()`; see `waitForNotificationThreadToEnd`.
    let notificationThreadID = Atomic<Int32>(0)
    let shutdownByInfoCallback = Atomic<Bool>(false)
    /// Metadata changes the server has told of (any subject), counted by the property callback: a
    /// listing of the store read through `jack_property` stays good until this moves.
    let propertyChanges = Atomic<Int>(0)
    /// True while the event thread closes a lost client (outside the locks); `stop()` waits for it
    /// before freeing what the client's callbacks read.
    let closingLostClient = Atomic<Bool>(false)
    /// Set by `stop()` so the reconnect thread ends.
    let reconnectCancelled = Atomic<Bool>(false)
    /// The connections of our ports, kept for a return of the server.
    let connectionMemory = Locked<JackConnectionMemory>(JackConnectionMemory())
    /// The route as last announced (event thread; read by `JackHost.route`).
    let route = Locked<JackRouteWatch>(JackRouteWatch())
    /// 0: rendering; 1: suspended (no frame rendered, outputs silent); 2: suspended but rendering anyway
    /// (time goes on, outputs silent). Read by the process callback.
    let suspendMode = Atomic<Int>(0)
    /// The rate the engine renders at (`JackHost.setEngineSampleRate`; 0: not said, no check). While the
    /// server runs at another, the process callback renders nothing and plays silence.
    let engineSampleRate = Atomic<Int>(0)
    /// Called on the event thread after a loss was delivered (the host starts reconnecting).
    let lossHook = Locked<Callback<Void>?>(nil)
    let shutdownStatus = Atomic<UInt32>(0)
    /// The insert table the process callback reads (a `JackInsertTable` pointer; nil: no inserts).
    nonisolated(unsafe) let insertTable = Atomic<UnsafeMutableRawPointer?>(nil)
    /// Our ports as the latency callback sees them.
    let latency = JackLatencyPublisher()
    let handler = Locked<Callback<JackHostEvent>?>(nil)
    let state = Locked<JackHostState>(JackHostState())
    /// Held across registering and unregistering insert ports, calls into jackd that can last many
    /// periods while the server reorders its graph (libjack sleeps in every latency call then), so that
    /// the client stays open without holding `state`. Whoever closes the client takes it first.
    /// Order: `portWork`, then `state`.
    let portWork = Lock()
    /// Insert layouts waiting for the port thread.
    let insertRequests = Locked<JackInsertRequests>(JackInsertRequests())
    /// The port thread: applies requested insert layouts, one at a time, off every caller's thread.
    let portQueue = DispatchQueue(label: "soundstage.jack.ports")
    /// Runs `jack_property` while this process's copy of the metadata store is deleted (JackHost+StaleStore).
    let metadataQueue = DispatchQueue(label: "soundstage.jack.metadata")

    /// Event thread. Passes `event` to the handler, outside every lock.
    func deliver(_ event: JackHostEvent) {
        if let handler = handler.withLock({ $0 }) { handler.call(event) }
    }

    // MARK: Event thread

    /// Starts the session's event thread. Returns its id, or the errno of pthread_create.
    static func startEventThread(
        core: JackHostCore, readFD: Int32,
        context: UnsafeMutablePointer<JackRenderContext>
    ) -> Result<pthread_t, JackHostError> {
        let arguments = Unmanaged.passRetained(EventThreadArguments(core: core, readFD: readFD, context: context))
        var thread = pthread_t()
        let code = pthread_create(
            &thread, nil,
            { raw in
                guard let raw else { return nil }
                let arguments = Unmanaged<EventThreadArguments>.fromOpaque(raw).takeRetainedValue()
                arguments.core.runEventThread(readFD: arguments.readFD, context: arguments.context)
                return nil
            }, arguments.toOpaque())
        if code != 0 {
            arguments.release()
            return .failure(.systemResourceFailed(what: "event thread", errno: code))
        }
        return .success(thread)
    }

    /// Event thread body: turns pipe bytes into events until the pipe's write end is closed (the host
    /// stopped) or the server is lost; then frees the session's context.
    private func runEventThread(readFD: Int32, context: UnsafeMutablePointer<JackRenderContext>) {
        var bytes = [UInt8](repeating: 0, count: 256)
        loop: while true {
            let count = bytes.withUnsafeMutableBytes { read(readFD, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { break }
            var xrun = false, bufferSize = false, sampleRate = false, graph = false, portRegistered = false
            var peers = false, latency = false
            for byte in bytes[0..<count] {
                switch JackWakeByte(rawValue: byte) {
                case .xrun: xrun = true
                case .bufferSize: bufferSize = true
                case .sampleRate: sampleRate = true
                case .graph: graph = true
                case .portRegistered: portRegistered = true
                case .peers: peers = true
                case .latency: latency = true
                case .shutdown, nil: break
                }
            }
            // Acquire: pairs with the shutdown callback's release (reason bytes, status).
            let lost = serverLostFlag.load(ordering: .acquiring)
            if sampleRate { deliver(.sampleRateChanged(rate: sampleRateValue.load(ordering: .relaxed))) }
            if bufferSize { deliver(.bufferSizeChanged(frames: bufferSizeValue.load(ordering: .relaxed))) }
            if (sampleRate || bufferSize) && !lost {
                let now = route.withLock { $0.route }
                deliver(
                    .routeChanged(
                        JackRouteChange(reason: .routeConfigurationChange, previousRoute: now, currentRoute: now)))
            }
            if xrun {
                // Relaxed: statistics.
                let delay = Float(bitPattern: xrunDelayBits.load(ordering: .relaxed))
                deliver(.xrun(count: xrunCounter.load(ordering: .relaxed), delayedMicroseconds: Double(delay)))
            }
            if lost {
                let now = Self.monotonicSeconds()
                connectionMemory.withLock { $0.serverLost(now: now) }
                // Closed outside every lock: closing a client whose server is stopping can take long
                // inside libjack, and status reads, OSC and the control loop must not wait for it.
                if let client = takeLostClient(context: context) {
                    waitForNotificationThreadToEnd()
                    _ = jack_client_close(client)
                    // The callbacks are gone with the client: the write end is ours to close.
                    close(context.pointee.wakeFD)
                    closingLostClient.store(false, ordering: .releasing)
                }
                deliver(.serverLost(reason: String(cString: context.pointee.reason)))
                lossHook.withLock { $0 }?.call(())
                break loop
            }
            if graph || portRegistered {
                for change in followConnections(context: context, retryPending: true, portRegistered: portRegistered) {
                    deliver(.routeChanged(change))
                }
            }
            if peers { deliver(.peersChanged) }
            if latency { setRequestedLatencies(context: context) }
        }
        close(readFD)
        // The client is closed on every path out of the loop: the host closes it before closing the
        // pipe; `closeLostClient` closes it on loss; a failed read (never seen) falls back below.
        portWork.withLock { _ in
            state.withLock { state in
                if state.session?.context == context {
                    if let client = state.session?.client {
                        JackRequests.serialized {
                            _ = jack_deactivate(client)
                            _ = jack_client_close(client)
                        }
                        state.session?.client = nil
                    }
                    state.session?.context = nil
                }
            }
        }
        JackRenderContext.destroy(context)
    }

    /// Event thread, after a connection changed or a port appeared: remembers our ports' connections
    /// and makes those waiting for a port that now exists. While the server dies it announces the
    /// teardown's disconnections after the shutdown: a snapshot taken then is not kept. Returns the
    /// route changes to announce.
    private func followConnections(
        context: UnsafeMutablePointer<JackRenderContext>, retryPending: Bool, portRegistered: Bool
    ) -> [JackRouteChange] {
        // A burst of changes (a patchbay, the server tearing down) arrives as one snapshot.
        usleep(10_000)
        return portWork.withLock { _ -> [JackRouteChange] in
            guard let target = state.withLock({ FollowTarget(state: $0, context: context, core: self) }) else {
                return []
            }
            // Acquire: pairs with the shutdown callbacks' release.
            if serverLostFlag.load(ordering: .acquiring) { return [] }
            let edges = JackConnectionMemory.snapshot(client: target.client, ports: target.ports)
            let physical =
                portRegistered
                ? Set(
                    JackPorts.ports(
                        client: target.client, pattern: nil, type: nil, flags: UInt(JackPortIsPhysical.rawValue)))
                : nil
            if serverLostFlag.load(ordering: .acquiring) { return [] }
            var changes: [JackRouteChange] = []
            route.withLock { route in
                if let change = route.observe(edges: edges, mainOutputs: target.outputs, mainInputs: target.inputs) {
                    changes.append(change)
                }
                if let physical, let change = route.observe(physicalPorts: physical) { changes.append(change) }
            }
            let now = Self.monotonicSeconds()
            let pending = connectionMemory.withLock { memory in
                memory.observe(edges, now: now)
                return memory.pending
            }
            followOtherAudio(client: target.client)
            guard retryPending, !pending.isEmpty else { return changes }
            let made = JackHost.makePending(pending, client: target.client, clientName: target.name)
            connectionMemory.withLock {
                $0.made(made.connected)
                $0.pending.subtract(made.dropped)
            }
            return changes + confirmRoute(made.connected, target: target)
        }
    }

    /// Event thread, under the port lock, after we made `made` again. The server announces them as a
    /// graph change, but PipeWire's libjack may list them only a little after `jack_connect` returned,
    /// and the snapshot that change wakes can miss them: the route would go on saying our outputs
    /// play nowhere. Looks again, 20 ms apart for at most 100 ms, until every one is listed.
    private func confirmRoute(_ made: Set<JackEdge>, target: FollowTarget) -> [JackRouteChange] {
        guard !made.isEmpty else { return [] }
        for _ in 0..<5 {
            usleep(20_000)
            // Acquire: pairs with the shutdown callbacks' release.
            if serverLostFlag.load(ordering: .acquiring) { return [] }
            let edges = JackConnectionMemory.snapshot(client: target.client, ports: target.ports)
            guard edges.isSuperset(of: made) else { continue }
            let now = Self.monotonicSeconds()
            connectionMemory.withLock { $0.observe(edges, now: now) }
            return route.withLock { route in
                route.observe(edges: edges, mainOutputs: target.outputs, mainInputs: target.inputs).map { [$0] } ?? []
            }
        }
        return []
    }

    /// Event thread, for PipeWire's libjack: sets our ports' latencies in the modes the latency callback
    /// asked for. Under the port lock, like every other call of ours that queues work on libjack's loop
    /// (its queue takes one writer at a time), and only while this context's client is open.
    private func setRequestedLatencies(context: UnsafeMutablePointer<JackRenderContext>) {
        portWork.withLock { _ in
            let open = state.withLock { $0.session?.context == context && $0.session?.client != nil }
            // Acquire: pairs with the shutdown callbacks' release.
            guard open, !serverLostFlag.load(ordering: .acquiring) else { return }
            // Relaxed: the pipe byte that woke this thread was written after the request.
            let modes = latencyRequests.exchange(0, ordering: .relaxed)
            if modes & 1 != 0 { _ = latency.update(mode: JackCaptureLatency) }
            if modes & 2 != 0 {
                let combined = latency.update(mode: JackPlaybackLatency)
                // Relaxed: a figure read by the control loop, which follows its changes.
                playbackLatencyValue.store(Int(combined.max), ordering: .relaxed)
            }
        }
    }

    /// Event thread, before closing a lost client. jackd2's libjack cancels the client's notification
    /// thread asynchronously when the client closes. Cancelled while it handles a notification (jackd,
    /// stopping, still sends them when the process thread has already reported the loss), it can leave
    /// libjack's process-wide synchro lock held: that close and every later open in the process hang
    /// (seen as `jack_client_close` blocked on a mutex, about once in 30 losses on a loaded machine).
    /// After a loss the notification thread ends by itself once the server's socket closes, so the
    /// close waits for it to be gone, for at most `notificationThreadGrace` seconds (a server that
    /// stalled rather than died keeps it). Only for jackd2's libjack (the info callback reported the
    /// loss); a loss PipeWire's libjack reports (the plain callback) is closed at once, as before.
    func waitForNotificationThreadToEnd() {
        // Relaxed: the id was stored by a callback long before the loss (and the loss flag's release
        // orders it when the same thread reported the loss); an id a moment stale is still the thread's.
        let thread = notificationThreadID.load(ordering: .relaxed)
        guard thread > 0, shutdownByInfoCallback.load(ordering: .relaxed) else { return }
        let path = "/proc/self/task/\(thread)"
        let polls = Int(Self.notificationThreadGrace / 0.005)
        for _ in 0..<polls {
            if access(path, F_OK) != 0 { return }
            usleep(5_000)
        }
    }

    /// How long a lost client's close waits for libjack's notification thread to end.
    static let notificationThreadGrace = 2.0

    static func monotonicSeconds() -> Double { Double(DispatchTime.now().uptimeNanoseconds) / 1e9 }

    /// Our ports: the main outputs and inputs and every insert port. Under the state lock.
    func ownPorts(context: UnsafeMutablePointer<JackRenderContext>, session: JackSession) -> [OpaquePointer] {
        var ports: [OpaquePointer] = []
        for i in 0..<context.pointee.outputCount { if let p = context.pointee.outputPorts[i] { ports.append(p) } }
        for i in 0..<context.pointee.inputCount { if let p = context.pointee.inputPorts[i] { ports.append(p) } }
        for insert in session.insertPorts.values { ports += insert.inputs + insert.outputs }
        return ports
    }

    /// Event thread, after the server died: marks the session lost and takes its client, which the
    /// event thread then closes outside every lock (jack.h: never inside the shutdown callback, but the
    /// handle must still be closed). From then on the event thread owns the pipe's write end. Returns nil
    /// when `stop()` closed the client first.
    private func takeLostClient(context: UnsafeMutablePointer<JackRenderContext>) -> OpaquePointer? {
        // A cycle under way when the server died ends by itself (nothing in it waits for the server);
        // closing cancels the process thread, which must not happen inside the render.
        for _ in 0..<200 where processRunning.load(ordering: .acquiring) { usleep(1_000) }
        return portWork.withLock { _ in
            state.withLock { state -> OpaquePointer? in
                // stop() got there first: it closed the client and the pipe.
                guard state.session?.context == context else { return nil }
                let client = state.session?.client
                state.session?.client = nil
                state.session?.isServerLost = true
                // Relaxed: set under the state lock, which `stop()` takes before it waits on the flag.
                if client != nil { closingLostClient.store(true, ordering: .relaxed) }
                return client
            }
        }
    }

    /// Control side. Waits until `count` more cycles have counted themselves; false when they did not
    /// within `limitMilliseconds` (a frozen server).
    @discardableResult
    func waitForCycles(_ count: Int, limitMilliseconds: Int = 500) -> Bool {
        let start = cycleCounter.load(ordering: .acquiring)
        var waited = 0
        while cycleCounter.load(ordering: .acquiring) < start + count {
            if waited >= limitMilliseconds { return false }
            usleep(1_000)
            waited += 1
        }
        return true
    }

    /// Control side, port lock held. Takes `ports` (ours, about to be unregistered) out of every
    /// connection and, while cycles run, waits until none can still read a connection that holds them.
    ///
    /// JACK gives a new port the lowest free number at once, while a cycle already under way reads the
    /// connections as they stood when it began (the server switches to the next set at a cycle's start,
    /// and may put the switch off by a cycle while a request writes it). A port unregistered with its
    /// connections, whose number went to a port of the other direction in the same cycle, left that
    /// cycle's `jack_port_get_buffer` on the port at its other end following the old connection to the
    /// new port and back without end (jack2's `JackGraphManager::GetBuffer`); the process thread's
    /// stack overflowed. Disconnected first and waited out, the old connections are gone from every set
    /// a cycle can read before the number is free.
    func releaseConnections(of ports: [OpaquePointer], client: OpaquePointer, isActive: Bool) {
        guard !ports.isEmpty else { return }
        for port in ports { _ = JackRequests.serialized { jack_port_disconnect(client, port) } }
        // A cycle that began before the disconnections, one that may have kept the old set, one to
        // count the first cycle that certainly read the new one.
        if isActive { waitForCycles(3) }
    }

    /// Insert tables replaced while cycles run, each with the cycle count after which no cycle can
    /// still hold it (control side).
    private let retiredInsertTables = Locked<[(table: UnsafeMutableRawPointer, freeAfter: Int)]>([])

    /// Control side. Keeps a replaced table until two more cycles have started.
    func retireInsertTable(_ table: UnsafeMutableRawPointer) {
        let due = cycleCounter.load(ordering: .acquiring) + 2
        retiredInsertTables.withLock { $0.append((table, due)) }
    }

    /// Control side. Frees the retired tables no cycle can hold any more (all of them when `all`: the
    /// client is closed and no callback runs).
    func freeRetiredInsertTables(all: Bool = false) {
        let now = cycleCounter.load(ordering: .acquiring)
        let done = retiredInsertTables.withLock { list in
            let done = list.filter { all || $0.freeAfter <= now }
            list.removeAll { all || $0.freeAfter <= now }
            return done
        }
        for entry in done { JackInsertTable.destroy(entry.table.assumingMemoryBound(to: JackInsertTable.self)) }
    }
}

/// Handed to the event thread through `pthread_create`'s argument.
private final class EventThreadArguments {
    let core: JackHostCore
    let readFD: Int32
    let context: UnsafeMutablePointer<JackRenderContext>

    init(core: JackHostCore, readFD: Int32, context: UnsafeMutablePointer<JackRenderContext>) {
        self.core = core
        self.readFD = readFD
        self.context = context
    }
}

/// What `followConnections` needs of the session, read under the state lock.
private struct FollowTarget {
    let client: OpaquePointer
    let ports: [OpaquePointer]
    let name: String
    let outputs: Set<String>
    let inputs: Set<String>

    init?(state: JackHostState, context: UnsafeMutablePointer<JackRenderContext>, core: JackHostCore) {
        guard let session = state.session, session.context == context, let client = session.client else { return nil }
        self.client = client
        ports = core.ownPorts(context: context, session: session)
        name = session.actualClientName
        outputs = Set(session.outputPortNames)
        inputs = Set(session.inputPortNames)
    }
}

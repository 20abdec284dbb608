// Control side: the host's reconnect thread. After the server is lost (with
// `reconnectsAfterServerLoss`), it keeps the engine's control side moving, waits for a server of the
// same name, opens the client again under the same name with every port, and restores the connections.
import AudioGraph
import CJack
import Glibc
import Locking
import Synchronization

/// What the host did when the server came back (`JackHostEvent.serverReturned`).
public struct JackHostReturnReport: Sendable, Equatable {
    /// The client as opened again (its ports, rate and period; the configured connections).
    public var start: JackHostStartReport
    /// Each remembered connection tried at once, with its outcome.
    public var restored: [JackConnectionResult]
    /// Remembered connections whose other port does not exist yet; each is made when that port appears.
    public var waiting: [JackEdge]
    /// Attempts to open the client since the loss.
    public var attempts: Int
}

extension JackHost {
    /// Event thread, once a loss was delivered: starts the reconnect thread (nothing when reconnecting
    /// is off, or the handler already stopped the host).
    func beginReconnecting() {
        guard configuration.reconnectsAfterServerLoss else { return }
        core.state.withLock { state in
            guard let session = state.session, session.isServerLost, session.reconnectThread == nil else { return }
            // Relaxed: the thread is created after this store (pthread_create orders it).
            core.reconnectCancelled.store(false, ordering: .relaxed)
            let arguments = Unmanaged.passRetained(ReconnectArguments(host: self, serverName: session.serverName))
            var thread = pthread_t()
            let code = pthread_create(
                &thread, nil,
                { raw in
                    guard let raw else { return nil }
                    let arguments = Unmanaged<ReconnectArguments>.fromOpaque(raw).takeRetainedValue()
                    JackHost.runReconnectThread(arguments)
                    return nil
                }, arguments.toOpaque())
            if code != 0 {
                arguments.release()
                return
            }
            state.session?.reconnectThread = thread
        }
    }

    /// Reconnect thread body. Every 10 ms it lets the render engine take what the control side sent (no
    /// frame is rendered, so players hold their place); it tries to open the client after a back-off
    /// of 100 ms doubling to 2 s, or at once when the server's socket appears again.
    private static func runReconnectThread(_ arguments: ReconnectArguments) {
        let core = arguments.core
        let engine = arguments.engine
        // The lost session's event thread (which started this thread) closes the lost client, which can
        // take long inside libjack, then frees its context: it ends by itself.
        let oldEventThread: pthread_t? = core.state.withLock { state in
            defer { state.session?.eventThread = nil }
            return state.session?.eventThread
        }
        if let oldEventThread { _ = pthread_detach(oldEventThread) }

        var watch = JackServerSocketWatch(server: arguments.serverName)
        var delay = JackHostConfiguration.reconnectFirstDelay
        var waited = 0.0
        var attempts = 0
        var noOutputs: UnsafeMutablePointer<Float>? = nil
        // Relaxed: a stop request, polled.
        while !core.reconnectCancelled.load(ordering: .relaxed) {
            withUnsafePointer(to: &noOutputs) { outputs in
                engine.render(frameCount: 0, inputs: nil, inputCount: 0, outputs: outputs, outputCount: 0)
            }
            let appeared = watch.changed()
            if appeared { delay = JackHostConfiguration.reconnectFirstDelay }
            guard appeared || waited >= delay else {
                usleep(10_000)
                waited += 0.01
                continue
            }
            waited = 0
            attempts += 1
            guard let host = arguments.host else { return }
            switch host.reopen(attempts: attempts) {
            case .finished: return
            case .opened: return
            case .retry: delay = min(delay * 2, JackHostConfiguration.reconnectMaximumDelay)
            }
        }
    }

    private enum ReopenOutcome {
        case opened
        case retry
        case finished
    }

    /// Reconnect thread. One attempt to open the client again; on success restores the connections and
    /// delivers what changed, then `serverReturned`.
    private func reopen(attempts: Int) -> ReopenOutcome {
        let startHook = core.state.withLock { $0.startHook }
        let previousRate = core.sampleRateValue.load(ordering: .relaxed)
        let previousPeriod = core.bufferSizeValue.load(ordering: .relaxed)
        let opened: Result<(JackHostStartReport, toRestore: Set<JackEdge>), JackHostError>? = core.portWork.withLock {
            _ in
            core.state.withLock { state in
                guard let lost = state.session, lost.isServerLost else { return nil }
                let result = JackLibraryMessages.silenced {
                    open(
                        startHook: startHook, inserts: state.insertLayout, properties: state.clientProperties,
                        propertiesWrittenLast: state.propertiesWrittenLast,
                        clientName: lost.actualClientName, monitorsOtherAudio: state.monitorsOtherAudio,
                        makesConfiguredConnections: false)
                }
                switch result {
                case .failure(let error):
                    return .failure(error)
                case .success(let (report, session)):
                    var session = session
                    session.reconnectThread = lost.reconnectThread
                    // The lost session's pipe is its event thread's to close.
                    state.session = session
                    // Every remembered connection waits until it is made again.
                    let toRestore = core.connectionMemory.withLock { memory in
                        memory.pending = Set(
                            memory.pending.map {
                                $0.renamingClient(lost.actualClientName, to: session.actualClientName)
                            })
                        return memory.pending
                    }
                    return .success((report, toRestore))
                }
            }
        }
        guard let opened else { return .finished }
        guard case .success(let (report, toRestore)) = opened else { return .retry }

        let restored = restoreConnections(toRestore)
        let waiting = core.connectionMemory.withLock { $0.pending }.sorted { $0.description < $1.description }
        if report.sampleRate != previousRate { core.deliver(.sampleRateChanged(rate: report.sampleRate)) }
        if report.bufferSize != previousPeriod { core.deliver(.bufferSizeChanged(frames: report.bufferSize)) }
        core.deliver(
            .serverReturned(
                JackHostReturnReport(start: report, restored: restored, waiting: waiting, attempts: attempts)))
        if report.sampleRate != previousRate || report.bufferSize != previousPeriod {
            // As a live change of rate or period is (docs/SESSION.md), once the new route is known.
            let now = core.route.withLock { $0.route }
            core.deliver(
                .routeChanged(JackRouteChange(reason: .routeConfigurationChange, previousRoute: now, currentRoute: now))
            )
        }
        // This thread is done: a later loss starts a new one.
        core.state.withLock { state in
            if let thread = state.session?.reconnectThread, pthread_equal(thread, pthread_self()) != 0 {
                state.session?.reconnectThread = nil
                _ = pthread_detach(thread)
            }
        }
        return .opened
    }

    /// Reconnect thread, right after the client is open again: makes every connection of `edges` whose
    /// two ports exist (the event thread may have seen some made already by the configuration). Returns
    /// the attempts.
    private func restoreConnections(_ edges: Set<JackEdge>) -> [JackConnectionResult] {
        core.portWork.withLock { _ in
            let target: (client: OpaquePointer, name: String)? = core.state.withLock { state in
                guard let session = state.session, let client = session.client else { return nil }
                return (client, session.actualClientName)
            }
            guard let target else { return [] }
            let made = JackHost.makePending(edges, client: target.client, clientName: target.name)
            core.connectionMemory.withLock { memory in
                memory.made(made.connected)
                memory.pending.subtract(made.dropped)
            }
            return made.results
        }
    }

    /// Makes each of `edges` whose two ports exist. `connected`: made (or already there); `dropped`: one
    /// of ours that no longer exists (an insert removed meanwhile), never to be made. The others wait.
    static func makePending(_ edges: Set<JackEdge>, client: OpaquePointer, clientName: String)
        -> (results: [JackConnectionResult], connected: Set<JackEdge>, dropped: Set<JackEdge>)
    {
        var results: [JackConnectionResult] = []
        var connected: Set<JackEdge> = []
        var dropped: Set<JackEdge> = []
        for edge in edges.sorted(by: { $0.description < $1.description }) {
            let sourceExists = jack_port_by_name(client, edge.source) != nil
            let destinationExists = jack_port_by_name(client, edge.destination) != nil
            if !sourceExists || !destinationExists {
                let missingIsOurs =
                    (!sourceExists && edge.source.hasPrefix(clientName + ":"))
                    || (!destinationExists && edge.destination.hasPrefix(clientName + ":"))
                if missingIsOurs { dropped.insert(edge) }
                continue
            }
            let result = JackPorts.connect(client: client, edge.source, edge.destination)
            results.append(result)
            if result.isConnected { connected.insert(edge) }
        }
        return (results, connected, dropped)
    }
}

/// Handed to the reconnect thread. Holds the host weakly: a host dropped while its server is gone is
/// freed (its deinit stops the thread).
private final class ReconnectArguments {
    weak var host: JackHost?
    let core: JackHostCore
    let engine: RenderEngine
    let serverName: String

    init(host: JackHost, serverName: String) {
        self.host = host
        core = host.core
        engine = host.renderEngine
        self.serverName = serverName
    }
}

// Control side. The public face of OSC control: starts and stops the OSC thread that owns the liblo
// servers, and takes host and engine events from other threads.
// Threads: every method may be called from any thread; the service's own work runs on its OSC thread
// (plus one worker queue for file decoding and patch files).
import AudioGraph
import Foundation
import Locking
import SoundstageKit

/// Drives an `Engine` from OSC clients (address space in docs/OSC.md).
///
/// ```swift
/// let service = OSCService(engine: engine, host: jackAdapter, options: .init(port: 0))
/// let port = try service.start()   // bound port
/// …
/// service.stop()
/// ```
///
/// Nothing here touches the render thread: requests become `Engine` calls, which enqueue commands.
public final class OSCService: Sendable {
    /// Version of the OSC address space (reported by `/version`).
    public static let apiVersion = "1.0"

    public let engine: Engine
    public let host: OSCHost?
    public let options: OSCServiceOptions
    private let counters = OSCCounters()
    private let running = Locked<Running?>(nil)

    private struct Running: Sendable {
        let core: OSCServiceCore
        let finished: DispatchSemaphore
        /// The OSCQuery server and web view (`options.web`).
        var web: WebServer?
    }

    public init(engine: Engine, host: OSCHost? = nil, options: OSCServiceOptions = OSCServiceOptions()) {
        self.engine = engine
        self.host = host
        self.options = options
    }

    deinit {
        stop()
    }

    /// Opens the UDP and TCP servers and starts the OSC thread. Returns the bound port. Throws when the
    /// port is taken or the host address cannot be bound. Starting a running service returns its port.
    @discardableResult
    public func start() throws(OSCServiceError) -> Int {
        try running.withLock { (state: inout Running?) throws(OSCServiceError) -> Int in
            if let state { return state.core.endpoint.port }
            let core = try OSCServiceCore(engine: engine, host: host, options: options, counters: counters)
            // The patch's now-playing node is published before the OSC thread starts (nothing else runs yet).
            if core.session.nowPlaying != nil { core.publishNowPlaying() }
            if options.handlesEngineEvents {
                let inbox = core.inbox
                engine.setEventHandler { event in inbox.post(.engineEvent(event)) }
            }
            let finished = DispatchSemaphore(value: 0)
            let thread = Thread {
                core.run()
                finished.signal()
            }
            thread.name = "soundstage-osc"
            thread.start()
            var running = Running(core: core, finished: finished)
            if let webOptions = options.web {
                do throws(OSCServiceError) {
                    running.web = try WebServer(options: webOptions, inbox: core.inbox)
                } catch {
                    core.stopRequested.store(true, ordering: .releasing)
                    finished.wait()
                    if options.handlesEngineEvents { engine.setEventHandler(nil) }
                    throw error
                }
            }
            state = running
            return core.endpoint.port
        }
    }

    /// Stops the OSC thread and closes the servers (idempotent). Subscriptions and held bundles are
    /// dropped; jobs already running finish first.
    public func stop() {
        let stopped: Running? = running.withLock { state in
            defer { state = nil }
            return state
        }
        guard let stopped else { return }
        stopped.web?.stop()
        stopped.core.stopRequested.store(true, ordering: .releasing)
        stopped.finished.wait()
        // OSCQuery requests that arrived as the OSC thread stopped get their answer still.
        for case .web(.query(let query)) in stopped.core.inbox.close() { query.answer(.unavailable) }
        if options.handlesEngineEvents { engine.setEventHandler(nil) }
    }

    /// The bound port while running.
    public var port: Int? { running.withLock { $0?.core.endpoint.port } }

    /// The web server's bound port while running (nil when `options.web` is nil).
    public var httpPort: Int? { running.withLock { $0?.web?.port } }

    /// Forwards a host event (xrun, server lost, configuration change) to subscribers.
    public func post(_ event: OSCHostEvent) {
        running.withLock { $0?.core.inbox.post(.hostEvent(event)) }
    }

    /// Forwards an engine event, for embedders that keep the engine's event handler for themselves
    /// (`options.handlesEngineEvents == false`).
    public func post(_ event: EngineEvent) {
        running.withLock { $0?.core.inbox.post(.engineEvent(event)) }
    }

    /// Puts recorders made elsewhere (a patch's `recorders:`) under OSC control, as if made with
    /// `/recorder/new`: subscribers get their notifications, and tap overflows reach them.
    public func adopt(recorders: [String: Recorder]) {
        running.withLock { running in
            guard let core = running?.core else { return }
            for (name, recorder) in recorders {
                let inbox = core.inbox
                recorder.setEventHandler { event in inbox.post(.recorderEvent(name: name, event)) }
                inbox.post(.adoptRecorder(name: name, recorder))
            }
        }
    }

    /// Traffic counters since the service was created.
    public var statistics: OSCServiceStatistics {
        OSCServiceStatistics(
            packetsReceived: counters.packets.value, messagesDispatched: counters.messages.value,
            malformedPackets: counters.malformed.value, oversizedPackets: counters.oversized.value,
            errorsSent: counters.errorsSent.value, errorsSuppressed: counters.errorsSuppressed.value,
            lateBundles: counters.lateBundles.value, libloErrors: LoErrorCounter.shared.value,
            droppedDatagrams: counters.droppedDatagrams.value)
    }
}

/// What the service has seen (for tests, benchmarks and `/status`-style diagnostics).
public struct OSCServiceStatistics: Sendable, Equatable {
    public var packetsReceived: Int
    /// Messages liblo dispatched (a pattern counts once).
    public var messagesDispatched: Int
    public var malformedPackets: Int
    public var oversizedPackets: Int
    public var errorsSent: Int
    /// `/error` and `/late` replies dropped by the per-client rate limit.
    public var errorsSuppressed: Int
    public var lateBundles: Int
    /// Errors liblo reported itself (TCP framing; process-wide).
    public var libloErrors: Int
    /// UDP datagrams the kernel dropped because they arrived faster than the service read them.
    public var droppedDatagrams: Int
}

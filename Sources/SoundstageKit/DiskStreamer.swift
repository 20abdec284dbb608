// Disk thread. Keeps every streamed file's ring filled so the render thread never touches a file.
import AudioGraph
import Foundation
import Locking
import Synchronization

/// The disk thread (`soundstage-disk`): wakes every few milliseconds and tops up every stream's ring.
/// One per engine, made through the engine's `StreamOpener`.
public final class DiskStreamer: DiskThread, Sendable {
    private let streams = Locked<[ObjectIdentifier: any RefillableStream]>([:])
    private let running = Atomic<Bool>(true)
    /// Set by tests to starve streams on purpose.
    private let isPaused = Atomic<Bool>(false)

    public init() {
        let thread = Thread { [weak self] in
            // Named from inside: on Linux, Foundation passes a name to the OS (ps, top, /proc) only
            // when the running thread sets its own.
            Thread.current.name = "soundstage-disk"
            while let self, self.running.load(ordering: .acquiring) {
                var busy = false
                if !self.isPaused.load(ordering: .relaxed) {
                    let handles = self.streams.withLock { Array($0.values) }
                    busy = !handles.isEmpty
                    for handle in handles { handle.refill() }
                }
                // Every 3 ms while streams play (a 1.4 s ring leaves ample margin); idle otherwise.
                usleep(busy ? 3_000 : 20_000)
            }
        }
        // The thread keeps itself (and, while it runs, nothing else) alive; it ends after `stop()`.
        thread.start()
    }

    public func add(_ stream: any RefillableStream) { streams.withLock { $0[ObjectIdentifier(stream)] = stream } }

    public func remove(_ stream: any RefillableStream) {
        _ = streams.withLock { $0.removeValue(forKey: ObjectIdentifier(stream)) }
    }

    public func setPaused(_ paused: Bool) { isPaused.store(paused, ordering: .relaxed) }

    public func stop() { running.store(false, ordering: .releasing) }

    deinit { running.store(false, ordering: .releasing) }
}

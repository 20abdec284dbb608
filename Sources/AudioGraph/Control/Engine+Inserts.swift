// Control side. Effects exposed as host ports (JACK inserts): channel allocation, the layout the host
// follows, and its change notifications.
import Locking

extension Engine {
    /// The exposed effects now. A host registers ports for them and passes their buffers to `render`.
    public var hostInsertLayout: HostInsertLayout {
        lock.withLock { _ in currentInsertLayout }
    }

    /// Calls `observer` with the new layout after every change (on the thread that made it, never under
    /// the engine's lock). Layouts carry a version: apply one only if it is newer than the last applied.
    public func setHostInsertObserver(_ observer: (@Sendable (HostInsertLayout) -> Void)?) {
        insertObserver.withLock { $0 = observer.map { Callback($0) } }
    }

    /// Lock held.
    var currentInsertLayout: HostInsertLayout {
        HostInsertLayout(version: state.insertLayoutVersion,
                         inserts: state.inserts.values.sorted { $0.base < $1.base })
    }

    /// Lock held. Exposes or hides `node` (an effect); the caller republishes. Throws when the insert
    /// channel space is full.
    func setInsert(_ node: NodeRecord, exposed: Bool) throws(EngineError) {
        if !exposed {
            if state.inserts.removeValue(forKey: node.name) != nil { state.insertLayoutVersion += 1 }
            return
        }
        guard state.inserts[node.name] == nil else { return }
        let count = node.outputChannelCount
        guard let base = freeInsertBase(count: count) else {
            throw EngineError(.notAllowed, "cannot expose '\(node.name)': all \(HostInsert.channelCapacity) "
                + "insert channels are in use")
        }
        state.inserts[node.name] = HostInsert(node: node.name, channelCount: count, base: base,
                                              latencyFrames: node.effect?.latencyFrames ?? 0)
        state.insertLayoutVersion += 1
    }

    /// Lock held. The lowest base with `count` free channels after it.
    private func freeInsertBase(count: Int) -> Int? {
        let used = state.inserts.values.sorted { $0.base < $1.base }
        var candidate = 0
        for insert in used {
            if candidate + count <= insert.base { return candidate }
            candidate = max(candidate, insert.base + insert.channelCount)
        }
        return candidate + count <= HostInsert.channelCapacity ? candidate : nil
    }

    /// Not under the lock. Tells the observer the current layout.
    func notifyInsertObserver() {
        guard let observer = insertObserver.withLock({ $0 })?.call else { return }
        observer(hostInsertLayout)
    }
}

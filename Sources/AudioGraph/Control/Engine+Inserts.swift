// Control side, the API. Effects exposed as host ports (JACK inserts): the layout and its observer.
// The layout is read under the engine's lock; the observer is called outside it.
import Locking

extension Engine {
    /// The exposed effects now. A host registers ports for them and passes their buffers to `render`.
    public var hostInsertLayout: HostInsertLayout {
        control.withLock { $0.currentInsertLayout }
    }

    /// Calls `observer` with the new layout after every change (on the thread that made it, never under
    /// the engine's lock). Layouts carry a version: apply one only if it is newer than the last applied.
    public func setHostInsertObserver(_ observer: (@Sendable (HostInsertLayout) -> Void)?) {
        insertObserver.withLock { $0 = observer.map { Callback($0) } }
    }

    /// Not under the lock. Tells the observer the current layout.
    func notifyInsertObserver() {
        guard let observer = insertObserver.withLock({ $0 })?.call else { return }
        observer(hostInsertLayout)
    }
}

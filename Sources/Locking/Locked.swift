// Any thread except the render thread. The control side's lock: a value reachable only while its POSIX
// mutex is held.
import Glibc

/// A value protected by a POSIX mutex, with `Synchronization.Mutex`'s `withLock` shape.
///
/// Not `Mutex` itself: on Linux its contended path hands the lock over inside the kernel (priority-
/// inheriting futex, in the uninstrumented standard library), so the thread sanitizer cannot see that
/// one holder's writes happen before the next holder's reads and reports every contended section as a
/// race. pthread mutexes are intercepted by the sanitizer, so with this lock real races stay visible
/// and lock hand-overs do not read as races (DECISIONS.md). Never taken on the render thread.
public final class Locked<Value>: @unchecked Sendable {
    // @unchecked: `value` is read and written only while `lock` is held.
    private let lock = Lock()
    private var value: Value

    public init(_ initialValue: sending Value) {
        value = initialValue
    }

    /// Runs `body` with the value while holding the lock.
    public func withLock<Result, Failure: Error>(_ body: (inout Value) throws(Failure) -> Result) throws(Failure)
        -> Result
    {
        try lock.withLock { _ throws(Failure) -> Result in try body(&value) }
    }

    /// Runs `body` with the value when the lock is free; nil, without waiting, when another thread holds it.
    public func withLockIfAvailable<Result>(_ body: (inout Value) -> Result) -> Result? {
        lock.withLockIfAvailable { _ in body(&value) }
    }
}

/// A POSIX mutex guarding state kept beside it (`Locked<Void>` without a stored value, whose empty
/// field the thread sanitizer would see as one address shared with the object's header).
public final class Lock: @unchecked Sendable {
    // @unchecked: the mutex's storage is fixed for the object's life; pthread serializes the holders.
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>

    /// A `recursive` lock may be taken again by the thread that holds it (each `withLock` releases its
    /// own hold).
    public init(recursive: Bool = false) {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        var attributes = pthread_mutexattr_t()
        pthread_mutexattr_init(&attributes)
        if recursive { pthread_mutexattr_settype(&attributes, Int32(PTHREAD_MUTEX_RECURSIVE)) }
        pthread_mutex_init(mutex, &attributes)
        pthread_mutexattr_destroy(&attributes)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Runs `body` while holding the lock (the argument mirrors `Mutex<Void>.withLock`).
    public func withLock<Result, Failure: Error>(_ body: (inout Void) throws(Failure) -> Result) throws(Failure)
        -> Result
    {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        var unit: Void = ()
        return try body(&unit)
    }

    /// Runs `body` when the lock is free; nil, without waiting, when another thread holds it.
    public func withLockIfAvailable<Result>(_ body: (inout Void) -> Result) -> Result? {
        guard pthread_mutex_trylock(mutex) == 0 else { return nil }
        defer { pthread_mutex_unlock(mutex) }
        var unit: Void = ()
        return body(&unit)
    }
}

/// A callback to keep in a `Locked` (`Locked<Callback<Event>?>`). A bare function type must not be a
/// `Locked` value: `withLock`'s `inout` access crosses a generic boundary, and every access would wrap the
/// stored closure in two more reabstraction thunks, a chain that grows with each read until calling (or
/// freeing) it overflows the stack. In a struct the function keeps one representation.
public struct Callback<Argument>: Sendable {
    public let call: @Sendable (Argument) -> Void

    public init(_ call: @escaping @Sendable (Argument) -> Void) { self.call = call }
}

/// An object reachable only while a reentrant POSIX mutex is held: `Locked` for state whose methods call
/// back into the API that locks it (a batch's body calls the engine's public methods while the batch
/// holds the lock). The object is handed out, not `inout`, so a nested `withLock` on the same thread
/// begins no second exclusive access. Give it a non-`Sendable` class: then code outside `withLock` has
/// no way to it, and the compiler refuses to send it to another thread.
public final class ReentrantLocked<State: AnyObject>: @unchecked Sendable {
    // @unchecked: `state` is used only while `lock` is held.
    private let lock = Lock(recursive: true)
    private let state: State

    public init(_ state: sending State) {
        self.state = state
    }

    /// Runs `body` with the object while holding the lock (again, if this thread holds it already).
    public func withLock<Result, Failure: Error>(_ body: (State) throws(Failure) -> Result) throws(Failure) -> Result {
        try lock.withLock { _ throws(Failure) -> Result in try body(state) }
    }
}

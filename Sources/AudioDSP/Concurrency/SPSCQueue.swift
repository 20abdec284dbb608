// Both sides. A bounded, preallocated single-producer single-consumer queue of bit-copyable values.
// Thread contract: exactly one producer thread calls push*, freeCount, reservedSlot and commitReserved,
// exactly one consumer thread calls pop*/peek; the roles never swap. Neither side blocks, allocates or retains.
import Synchronization

/// A lock-free ring of `Element`s with a power-of-two capacity.
///
/// Used for control→render commands, render→control events and tap audio. The consumer's cursor
/// (`consumedCount`) doubles as a progress counter: the control side waits for it before it frees
/// anything an already-queued command may point at.
///
/// The queue is a bit-copyable handle (pointers only), so the render thread can hold and call it with
/// no reference counting; its owner calls `deallocate()` exactly once, after both sides are done.
public struct SPSCQueue<Element: BitwiseCopyable>: @unchecked Sendable, BitwiseCopyable {
    // @unchecked: one producer and one consumer, ordered by the head and tail atomics.
    @usableFromInline let storage: UnsafeMutablePointer<Element>
    @usableFromInline let mask: Int
    /// The number of elements the queue holds when full.
    public let capacity: Int
    /// cursors[0]: next position to read (written only by the consumer);
    /// cursors[1]: next position to write (written only by the producer).
    @usableFromInline let cursors: UnsafeMutablePointer<Atomic<Int>>

    /// Creates a queue holding at least `minimumCapacity` elements (rounded up to a power of two).
    public init(minimumCapacity: Int) {
        var size = 1
        while size < max(2, minimumCapacity) { size <<= 1 }
        capacity = size
        mask = size - 1
        storage = .allocate(capacity: size)
        cursors = .allocate(capacity: 2)
        (cursors + 0).initialize(to: Atomic(0))
        (cursors + 1).initialize(to: Atomic(0))
    }

    /// Frees the storage. Owner only, once, when neither side uses the queue any more.
    public func deallocate() {
        storage.deallocate()
        cursors.deinitialize(count: 2)
        cursors.deallocate()
    }

    @inlinable var head: UnsafeMutablePointer<Atomic<Int>> { cursors }
    @inlinable var tail: UnsafeMutablePointer<Atomic<Int>> { cursors + 1 }

    /// Producer. Appends `element`; returns false (and drops nothing else) when the queue is full.
    @inlinable
    public func push(_ element: Element) -> Bool {
        // Own cursor: relaxed. The consumer's cursor: acquire, so its reads of freed slots are done.
        let t = tail.pointee.load(ordering: .relaxed)
        if t &- head.pointee.load(ordering: .acquiring) >= capacity { return false }
        (storage + (t & mask)).initialize(to: element)
        // Release publishes the slot's contents before the new tail becomes visible.
        tail.pointee.store(t &+ 1, ordering: .releasing)
        return true
    }

    /// Producer. Appends as many of `elements` as fit and returns how many were written.
    @inlinable
    public func push(contentsOf elements: UnsafeBufferPointer<Element>) -> Int {
        let t = tail.pointee.load(ordering: .relaxed)
        let free = capacity &- (t &- head.pointee.load(ordering: .acquiring))
        let n = min(free, elements.count)
        if n <= 0 { return 0 }
        for i in 0..<n { (storage + ((t &+ i) & mask)).initialize(to: elements[i]) }
        tail.pointee.store(t &+ n, ordering: .releasing)  // Publishes all n slots at once.
        return n
    }

    /// Producer. How many more elements fit now (at least this many until the producer pushes).
    @inlinable
    public var freeCount: Int {
        capacity &- (tail.pointee.load(ordering: .relaxed) &- head.pointee.load(ordering: .acquiring))
    }

    /// Producer. The free slot `offset` places past the last element pushed, for writing an element in
    /// place before `commitReserved` publishes it; the consumer does not see it until then. `offset`
    /// must be below `freeCount`. The slot's contents are undefined until written.
    @inlinable
    public func reservedSlot(_ offset: Int) -> UnsafeMutablePointer<Element> {
        storage + ((tail.pointee.load(ordering: .relaxed) &+ offset) & mask)
    }

    /// Producer. Publishes the first `count` reserved slots (written with `reservedSlot`) at once, in
    /// order; `count` must not exceed `freeCount`.
    @inlinable
    public func commitReserved(_ count: Int) {
        let t = tail.pointee.load(ordering: .relaxed)
        tail.pointee.store(t &+ count, ordering: .releasing)  // Publishes all `count` slots at once.
    }

    /// Consumer. Removes and returns the oldest element, or nil when empty.
    @inlinable
    public func pop() -> Element? {
        let h = head.pointee.load(ordering: .relaxed)
        // Acquire pairs with the producer's release: the slot's contents are visible.
        if h == tail.pointee.load(ordering: .acquiring) { return nil }
        let element = storage[h & mask]
        // Release tells the producer the slot may be reused only after we read it.
        head.pointee.store(h &+ 1, ordering: .releasing)
        return element
    }

    /// Consumer. Returns the oldest element without removing it.
    @inlinable
    public func peek() -> Element? {
        let h = head.pointee.load(ordering: .relaxed)
        if h == tail.pointee.load(ordering: .acquiring) { return nil }
        return storage[h & mask]
    }

    /// Consumer. Removes up to `buffer.count` elements into `buffer`; returns how many.
    @inlinable
    public func pop(into buffer: UnsafeMutableBufferPointer<Element>) -> Int {
        let h = head.pointee.load(ordering: .relaxed)
        let available = tail.pointee.load(ordering: .acquiring) &- h
        let n = min(available, buffer.count)
        if n <= 0 { return 0 }
        for i in 0..<n { buffer[i] = storage[(h &+ i) & mask] }
        head.pointee.store(h &+ n, ordering: .releasing)
        return n
    }

    /// Any thread. Elements currently queued (a snapshot).
    @inlinable
    public var count: Int {
        tail.pointee.load(ordering: .acquiring) &- head.pointee.load(ordering: .acquiring)
    }

    /// Any thread. Total elements ever consumed. Acquire: everything the consumer did before it
    /// advanced the cursor is visible to the caller.
    public var consumedCount: Int { head.pointee.load(ordering: .acquiring) }

    /// Producer thread. Total elements ever pushed.
    public var producedCount: Int { tail.pointee.load(ordering: .relaxed) }
}

// Both sides. Preallocated HRIR slots and the lock-free hand-off of a new HRIR pair from the control
// side (which looks it up or interpolates it) to the render side (which crossfades to it).
// Thread contract: one control thread calls `writableSlot`/`publish`; one render thread calls `take`.
import Synchronization

/// One HRIR pair as the convolver reads it: both ears' filters, time-reversed and zero-padded to
/// `capacity` taps (a multiple of 8, for the SIMD dot product), and each ear's delay in frames.
public struct HRIRSlot: BitwiseCopyable {
    /// Taps per ear (padded).
    public let capacity: Int
    /// `2 × capacity` floats: reversed left filter, then reversed right filter.
    @usableFromInline let taps: UnsafeMutablePointer<Float>
    /// Left and right whole-frame delays the convolver applies (fractions are folded into the taps).
    @usableFromInline let delays: UnsafeMutablePointer<Double>

    @inlinable
    init(capacity: Int, taps: UnsafeMutablePointer<Float>, delays: UnsafeMutablePointer<Double>) {
        self.capacity = capacity
        self.taps = taps
        self.delays = delays
    }

    /// Stores `count` (≤ `capacity`) taps per ear in time order, and the delays in frames (≥ 0). A delay's
    /// fractional part is folded into the taps (`HRIRFractionalDelay`: an 8-tap windowed sinc, so taps
    /// past `capacity` are cut) and the convolver applies the whole frames left as offsets into its input
    /// history; whole-frame delays (and delays under 3 frames) store the taps unchanged. Taps beyond
    /// `count` become zero.
    @inlinable
    public func setFilters(
        left: UnsafePointer<Float>, right: UnsafePointer<Float>, count: Int, leftDelay: Double, rightDelay: Double
    ) {
        delays[0] = HRIRFractionalDelay.write(left, count: count, delay: leftDelay, reversed: taps, capacity: capacity)
        delays[1] = HRIRFractionalDelay.write(
            right, count: count, delay: rightDelay, reversed: taps + capacity,
            capacity: capacity)
    }

    /// Tap `k` (time order) of the left or right filter.
    @inlinable
    public func tap(_ k: Int, right isRight: Bool) -> Float {
        taps[(isRight ? capacity : 0) &+ capacity &- 1 &- k]
    }

    @inlinable public var leftDelay: Double { delays[0] }
    @inlinable public var rightDelay: Double { delays[1] }
    @inlinable var reversedLeft: UnsafePointer<Float> { UnsafePointer(taps) }
    @inlinable var reversedRight: UnsafePointer<Float> { UnsafePointer(taps + capacity) }
}

/// Four HRIR slots handed between the threads by index (a triple buffer with one extra slot, because
/// the render side keeps the previous filter while it crossfades).
///
/// The control side owns one slot (`writableSlot`), fills it and `publish`es it: one atomic exchange
/// puts it in the shared "middle" position marked fresh and gives the control side back whatever was
/// there. The render side, when it is not crossfading, `take`s a fresh middle slot by exchanging it for
/// the slot it no longer needs. Latest wins: a slot published twice before the render side looks is
/// simply replaced. Neither side waits, allocates or locks.
public struct HRIRExchange: @unchecked Sendable, BitwiseCopyable {
    // @unchecked: one writer (the control side) and one reader (the render thread), ordered by its atomics.
    public let capacity: Int
    @usableFromInline let taps: UnsafeMutablePointer<Float>
    @usableFromInline let delays: UnsafeMutablePointer<Double>
    /// The middle slot's index, with `freshBit` set when the control side has published it.
    @usableFromInline let middle: UnsafeMutablePointer<Atomic<Int>>
    /// The control side's slot index (touched by the control side only).
    @usableFromInline let back: UnsafeMutablePointer<Int>

    @inlinable static var freshBit: Int { 4 }
    @inlinable static var indexMask: Int { 3 }
    /// Slots the render side holds at creation: current and previous.
    @inlinable public static var initialRenderSlots: (current: Int, previous: Int) { (0, 1) }

    /// Control side. Allocates four zeroed slots of `filterLength` taps per ear (rounded up to a
    /// multiple of 8).
    public init(filterLength: Int) {
        precondition(filterLength >= 1)
        capacity = (filterLength + 7) / 8 * 8
        taps = .allocate(capacity: 4 * 2 * capacity)
        taps.initialize(repeating: 0, count: 4 * 2 * capacity)
        delays = .allocate(capacity: 8)
        delays.initialize(repeating: 0, count: 8)
        middle = .allocate(capacity: 1)
        middle.initialize(to: Atomic(2))
        back = .allocate(capacity: 1)
        back.initialize(to: 3)
    }

    /// Control side, once both sides are done. Frees the slots.
    public func deallocate() {
        taps.deallocate()
        delays.deallocate()
        middle.deinitialize(count: 1)
        middle.deallocate()
        back.deallocate()
    }

    /// Slot `index` (0…3).
    @inlinable
    public func slot(_ index: Int) -> HRIRSlot {
        HRIRSlot(capacity: capacity, taps: taps + index &* 2 &* capacity, delays: delays + 2 &* index)
    }

    /// Control side. The slot the control side may fill now.
    @inlinable
    public var writableSlot: HRIRSlot { slot(back.pointee) }

    /// Control side. Hands the filled slot to the render side and takes a free one back.
    @inlinable
    public func publish() {
        // Release: the slot's contents are visible before its index; acquire: the render side's reads of
        // the slot it returned are finished before we overwrite it.
        let old = middle.pointee.exchange(back.pointee | Self.freshBit, ordering: .acquiringAndReleasing)
        back.pointee = old & Self.indexMask
    }

    /// Render side. If a fresh slot was published, swaps it for `free` (a slot the render side no longer
    /// reads) and returns its index; otherwise returns nil and keeps `free`.
    @inlinable
    public func take(returning free: Int) -> Int? {
        // Relaxed peek: only the exchange below hands memory over.
        if middle.pointee.load(ordering: .relaxed) & Self.freshBit == 0 { return nil }
        // Acquire: the control side's writes to the fresh slot are visible; release: our reads of `free`
        // are finished before the control side can reuse it.
        let got = middle.pointee.exchange(free, ordering: .acquiringAndReleasing)
        return got & Self.indexMask
    }
}

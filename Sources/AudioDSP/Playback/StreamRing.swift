// Both sides. The ring a disk thread fills with decoded frames and a player drains on the render thread.
import Synchronization

/// Interleaved frames of one streamed file, plus the stream's end and underrun bookkeeping.
///
/// Thread contract: the disk thread is the only producer (`write`, `finish`), the render thread the
/// only consumer (`read`); the control side allocates and frees it (`deallocate`) once neither uses it.
/// A bit-copyable handle of pointers, so the render thread holds it without reference counting.
public struct StreamRing: @unchecked Sendable, BitwiseCopyable {
    // @unchecked: one writer (the disk thread) and one reader (the render thread), ordered by its atomics.
    public let samples: SPSCQueue<Float>
    public let channelCount: Int
    /// counters[0]: total frames the stream will deliver once known (−1 while unknown);
    /// counters[1]: frames the render thread could not get in time (underruns).
    @usableFromInline let counters: UnsafeMutablePointer<Atomic<Int>>

    /// Control side: a ring holding `capacityFrames` frames.
    public init(channelCount: Int, capacityFrames: Int) {
        self.channelCount = max(1, channelCount)
        samples = SPSCQueue(minimumCapacity: capacityFrames * self.channelCount)
        counters = .allocate(capacity: 2)
        (counters + 0).initialize(to: Atomic(-1))
        (counters + 1).initialize(to: Atomic(0))
    }

    /// Control side, once: frees the ring.
    public func deallocate() {
        samples.deallocate()
        counters.deinitialize(count: 2)
        counters.deallocate()
    }

    /// Frames the ring can hold.
    public var capacityFrames: Int { samples.capacity / channelCount }

    /// Any thread. Frames written and not yet read (a snapshot).
    public var readableFrames: Int { max(0, samples.count) / channelCount }

    /// Producer. Frames that fit right now.
    public var writableFrames: Int { (samples.capacity - samples.count) / channelCount }

    /// Producer. Appends whole interleaved frames; returns how many were written.
    public func write(interleaved: UnsafePointer<Float>, frames: Int) -> Int {
        let n = min(frames, writableFrames)
        if n <= 0 { return 0 }
        return samples.push(contentsOf: UnsafeBufferPointer(start: interleaved, count: n * channelCount)) / channelCount
    }

    /// Producer. Declares the stream's total length in frames (after the last `write`).
    public func finish(totalFrames: Int) {
        // Release: every frame written before is visible to a consumer that sees the total.
        counters[0].store(totalFrames, ordering: .releasing)
    }

    /// Any thread. The stream's total length, or nil while the producer is still going.
    @inlinable
    public var totalFrames: Int? {
        let total = counters[0].load(ordering: .acquiring)
        return total < 0 ? nil : total
    }

    /// Any thread. Frames the consumer missed so far.
    public var underrunFrames: Int { counters[1].load(ordering: .relaxed) }

    /// Consumer (render thread). Moves up to `frames` frames into `bus` at `offset`, de-interleaving;
    /// returns how many were available.
    @inlinable
    public func read(into bus: BusRef, offset: Int, frames: Int) -> Int {
        let q = samples
        let h = q.head.pointee.load(ordering: .relaxed)
        // Acquire pairs with the producer's release: the samples are visible.
        let available = (q.tail.pointee.load(ordering: .acquiring) &- h) / channelCount
        let n = min(frames, available)
        if n <= 0 { return 0 }
        let outChannels = min(bus.channelCount, channelCount)
        for c in 0..<outChannels {
            let out = bus.channel(c) + offset
            var index = h &+ c
            for f in 0..<n {
                out[f] = q.storage[index & q.mask]
                index &+= channelCount
            }
        }
        // Release: the producer may reuse the slots only after they were read.
        q.head.pointee.store(h &+ n &* channelCount, ordering: .releasing)
        return n
    }

    /// Consumer. Counts frames that were not available in time.
    @inlinable
    public func noteUnderrun(frames: Int) {
        // Relaxed: a statistic.
        counters[1].wrappingAdd(frames, ordering: .relaxed)
    }
}

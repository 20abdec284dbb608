// Render side (write, read, clear) and control side (init, deallocate). The planar audio ring the time
// effects keep their input history and output queue in.

/// A planar ring of `capacity` frames per channel, addressed by absolute frame positions.
///
/// Each channel owns `2 × capacity` floats and every frame is stored twice, at `i` and `i + capacity`
/// (a "mirrored" ring), so any span of up to `capacity` frames that has been written is contiguous in
/// memory: `span(channel:from:)` returns a plain pointer an interpolator can index without masking.
///
/// Positions count frames since the last `clear()`: frame `p` is held while
/// `writePosition − capacity ≤ p < writePosition`. Reading a position outside that window (older, not yet
/// written, or negative) reads zeros.
public struct MirroredRing: BitwiseCopyable {
    @usableFromInline let storage: UnsafeMutablePointer<Float>
    /// Frames held per channel (a power of two).
    public let capacity: Int
    @usableFromInline let mask: Int
    public let channelCount: Int
    /// Absolute position of the next frame to be written (= frames written since `clear()`).
    public var writePosition = 0

    /// Control side. Allocates `channelCount × 2 × capacity` floats, `capacity` rounded up to a power of
    /// two (at least `minimumCapacity`).
    public init(minimumCapacity: Int, channelCount: Int) {
        precondition(minimumCapacity > 0 && channelCount > 0)
        var c = 1
        while c < minimumCapacity { c <<= 1 }
        capacity = c
        mask = c - 1
        self.channelCount = channelCount
        storage = .allocate(capacity: channelCount * 2 * c)
        storage.initialize(repeating: 0, count: channelCount * 2 * c)
    }

    /// Control side.
    public func deallocate() { storage.deallocate() }

    /// Oldest position still held.
    @inlinable public var oldestPosition: Int { writePosition &- capacity }

    /// Zeroes the storage and restarts positions at 0 (a memset of `channelCount × 8 × capacity` bytes).
    @inlinable
    public mutating func clear() {
        storage.update(repeating: 0, count: channelCount &* 2 &* capacity)
        writePosition = 0
    }

    /// Restarts positions at 0 without touching the storage (O(1)). Only `read` hides what the storage
    /// still holds (positions before 0 read as zeros); `span` callers must `clear()` instead.
    @inlinable
    public mutating func rewind() { writePosition = 0 }

    /// Appends `frames` frames (`≤ capacity`) of the first `channelCount` channels of `bus`.
    @inlinable
    public mutating func write(_ bus: BusRef, frames: Int) {
        let start = writePosition & mask
        let first = min(frames, capacity &- start)
        for c in 0..<channelCount {
            let base = storage + c &* 2 &* capacity
            let source = UnsafePointer(bus.channel(c))
            MixKernel.copy(source, to: base + start, count: first)
            MixKernel.copy(source, to: base + (start &+ capacity), count: first)
            if first < frames {
                MixKernel.copy(source + first, to: base, count: frames &- first)
                MixKernel.copy(source + first, to: base + capacity, count: frames &- first)
            }
        }
        writePosition &+= frames
    }

    /// Contiguous storage of channel `c` starting at absolute `position`; valid for reading up to
    /// `capacity` frames, of which those at or after `writePosition` are stale. The caller keeps
    /// `oldestPosition ≤ position`.
    @inlinable
    public func span(channel c: Int, from position: Int) -> UnsafePointer<Float> {
        UnsafePointer(storage + (c &* 2 &* capacity &+ (position & mask)))
    }

    /// Copies `count` frames of channel `c` from absolute `position` into `destination`; frames outside
    /// the held window are zeros.
    @inlinable
    public func read(channel c: Int, from position: Int, count: Int, into destination: UnsafeMutablePointer<Float>) {
        var i = 0
        // Leading frames that are gone or before the stream start.
        let lowest = max(oldestPosition, 0)
        while i < count && position &+ i < lowest {
            destination[i] = 0
            i &+= 1
        }
        let held = min(count, writePosition &- position)
        if held > i {
            MixKernel.copy(span(channel: c, from: position &+ i), to: destination + i, count: held &- i)
            i = held
        }
        while i < count {
            destination[i] = 0
            i &+= 1
        }
    }
}

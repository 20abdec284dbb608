// Render side (write, read, reset) and control side (init, deallocate). A mono ring buffer read at
// fractional delays, shared by the spherical-head and Doppler kernels.

/// A power-of-two ring of Float samples with a cubic (4-point Hermite) fractional read.
///
/// Write one sample, then read any number of taps at delays of `minimumDelay` (1 frame: the
/// interpolator needs one sample newer than the read point) up to `capacity − 3` frames; delays are
/// clamped into that range. A delay of exactly n frames returns the sample written n writes before the latest
/// one, bit for bit.
public struct FractionalDelayLine: BitwiseCopyable {
    @usableFromInline let buffer: UnsafeMutablePointer<Float>
    @usableFromInline let mask: Int
    /// Index of the most recently written sample.
    @usableFromInline var newest = 0

    /// Smallest delay the cubic read supports, in frames.
    @inlinable public static var minimumDelay: Double { 1 }

    /// Ring length in frames (a power of two ≥ `maximumDelay + 4`).
    public let capacity: Int

    /// Control side. Allocates a ring long enough for `maximumDelay` frames.
    public init(maximumDelay: Double) {
        precondition(maximumDelay >= 0 && maximumDelay.isFinite)
        var length = 8
        while Double(length) < maximumDelay + 4 { length <<= 1 }
        capacity = length
        mask = length - 1
        buffer = .allocate(capacity: length)
        buffer.initialize(repeating: 0, count: length)
    }

    /// Control side. Frees the ring; the line must not be used afterwards.
    public func deallocate() { buffer.deallocate() }

    /// Largest delay a read honours, in frames.
    @inlinable public var maximumDelay: Double { Double(capacity - 3) }

    /// Appends one sample.
    @inlinable
    public mutating func write(_ x: Float) {
        newest = (newest &+ 1) & mask
        buffer[newest] = x
    }

    /// The signal `delay` frames before the newest sample (clamped to `minimumDelay … maximumDelay`).
    @inlinable
    public func read(delay: Double) -> Float {
        let d = min(max(delay, Self.minimumDelay), maximumDelay)
        let whole = EffectMath.floor(d)
        let fraction = Float(d - whole)
        // Position of the sample at integer delay ⌈d⌉ is newest − whole − 1 when fraction > 0; the
        // interpolation runs from that sample (t = 0) forward towards newer samples.
        let base = newest &- Int(whole)
        if fraction == 0 { return buffer[base & mask] }
        let t = 1 - fraction
        let older = base &- 1
        return hermiteInterpolate(
            t, buffer[(older &- 1) & mask], buffer[older & mask], buffer[base & mask], buffer[(base &+ 1) & mask])
    }

    /// Clears the history (RT-safe: a fill of `capacity` floats).
    @inlinable
    public mutating func reset() {
        buffer.update(repeating: 0, count: capacity)
    }
}

// Render side. Gain-applying copy and accumulate loops over caller-provided channel buffers.

/// Inner loops of the mixer: add or scale a channel with a (possibly ramping) gain.
///
/// All functions take the ramp `inout` and advance it by `count` frames. A constant gain takes a
/// vectorizable loop; a ramping gain is evaluated sample by sample with `ParameterRamp.next()`, so the
/// result does not depend on how a block is split.
public enum MixKernel {
    /// `destination[i] += source[i] · gain(i)` for `i` in `0..<count`.
    @inlinable
    public static func accumulate(
        _ source: UnsafePointer<Float>, into destination: UnsafeMutablePointer<Float>, count: Int,
        gain: inout ParameterRamp
    ) {
        if gain.isRamping {
            for i in 0..<count { destination[i] += source[i] * gain.next() }
        } else {
            let g = gain.value
            if g == 0 { return }
            if g == 1 {
                for i in 0..<count { destination[i] += source[i] }
            } else {
                for i in 0..<count { destination[i] += source[i] * g }
            }
        }
    }

    /// `destination[i] += source[i] · gain(i) · scale`, for down-mixes that need a fixed factor.
    @inlinable
    public static func accumulate(
        _ source: UnsafePointer<Float>, into destination: UnsafeMutablePointer<Float>, count: Int,
        gain: inout ParameterRamp, scale: Float
    ) {
        if gain.isRamping {
            for i in 0..<count { destination[i] += source[i] * (gain.next() * scale) }
        } else {
            let g = gain.value * scale
            if g == 0 { return }
            for i in 0..<count { destination[i] += source[i] * g }
        }
    }

    /// `destination[i] += source[i] · gain(i) · fade(i) · scale`: a source's gain times its connection's
    /// fade. Both ramps advance by `count`.
    @inlinable
    public static func accumulate(
        _ source: UnsafePointer<Float>, into destination: UnsafeMutablePointer<Float>, count: Int,
        gain: inout ParameterRamp, fade: inout ParameterRamp, scale: Float = 1
    ) {
        if gain.isRamping || fade.isRamping {
            for i in 0..<count { destination[i] += source[i] * (gain.next() * fade.next() * scale) }
        } else {
            let g = gain.value * fade.value * scale
            if g == 0 { return }
            if g == 1 {
                for i in 0..<count { destination[i] += source[i] }
            } else {
                for i in 0..<count { destination[i] += source[i] * g }
            }
        }
    }

    /// `buffer[i] *= gain(i)` in place.
    @inlinable
    public static func scale(_ buffer: UnsafeMutablePointer<Float>, count: Int, gain: inout ParameterRamp) {
        if gain.isRamping {
            for i in 0..<count { buffer[i] *= gain.next() }
        } else {
            let g = gain.value
            if g == 1 { return }
            for i in 0..<count { buffer[i] *= g }
        }
    }

    /// Sets `count` samples to zero.
    @inlinable
    public static func clear(_ buffer: UnsafeMutablePointer<Float>, count: Int) {
        buffer.update(repeating: 0, count: count)
    }

    /// Copies `count` samples.
    @inlinable
    public static func copy(_ source: UnsafePointer<Float>, to destination: UnsafeMutablePointer<Float>, count: Int) {
        UnsafeMutableRawPointer(destination).copyMemory(from: source, byteCount: count &* MemoryLayout<Float>.stride)
    }
}

// Render side. The 3D mixer's "equal power panning" algorithm: a mono source placed between two
// channels by its lateral position, with per-sample gain glides.

/// Equal-power stereo panning from a 3-D direction (AVAudio3DMixingRenderingAlgorithm.equalPowerPanning).
///
/// The pan position is the source's lateral component p = sin(azimuth)·cos(elevation) (the x of its unit
/// vector), so front and back mirror onto each other and a source overhead is centred. The law is the
/// sine/cosine one of `EqualPowerPanner`: with θ = (p + 1)·π/4, left = cos θ, right = sin θ, so
/// left² + right² = 1 for every direction. Gains are computed on |p| and assigned by its sign, so a
/// mirrored source (x → −x) swaps the channels bit for bit.
///
/// Cost: 2 multiply-adds per sample; no latency. Thread contract: every method is RT-safe; the kernel
/// owns no memory.
public struct EqualPowerPanningKernel: BitwiseCopyable {
    @usableFromInline var left = ParameterRamp(0)
    @usableFromInline var right = ParameterRamp(0)
    @usableFromInline var hasStarted = false

    @inlinable
    public init() {}

    /// Unit-power gains for `direction`.
    @inlinable
    public static func gains(for direction: SourceDirection) -> (left: Float, right: Float) {
        let p = min(max(direction.local.x, -1), 1)
        let a = p.magnitude
        let quarterPi = SpatialMath.pi / 4
        // sin((1 + a)π/4) = cos((1 − a)π/4) is the near side; sin((1 − a)π/4) the far side. Both come
        // from the same function, so a centred source is exactly equal on both sides.
        let near = Float(SpatialMath.sinCos((1 + a) * quarterPi).sin)
        let far = Float(SpatialMath.sinCos((1 - a) * quarterPi).sin)
        return p < 0 ? (near, far) : (far, near)
    }

    /// Glides to the gains for `direction` times `gain` over `rampFrames` (0 jumps). Before the first
    /// `process` the values apply at once.
    @inlinable
    public mutating func setDirection(_ direction: SourceDirection, gain: Float, rampFrames: Int) {
        let (l, r) = Self.gains(for: direction)
        let frames = hasStarted ? rampFrames : 0
        left.ramp(to: l * gain, frames: frames)
        right.ramp(to: r * gain, frames: frames)
    }

    /// Adds `frames` samples of `input`, panned, to channels 0 and 1 of `output`.
    @inlinable
    public mutating func process(input: UnsafePointer<Float>, output: BusRef, frames: Int) {
        hasStarted = true
        let outL = output.channel(0)
        let outR = output.channel(1)
        if left.remainingFrames > frames && right.remainingFrames > frames {
            // Both glides run past this block: one pass, the same values `next()` gives (value, then
            // value + increment, …), without its end-of-glide test per sample.
            var l = left.value
            var r = right.value
            let dl = left.increment
            let dr = right.increment
            for i in 0..<frames {
                let x = input[i]
                outL[i] += x * l
                outR[i] += x * r
                l += dl
                r += dr
            }
            left.value = l
            right.value = r
            left.remainingFrames &-= frames
            right.remainingFrames &-= frames
        } else {
            MixKernel.accumulate(input, into: outL, count: frames, gain: &left)
            MixKernel.accumulate(input, into: outR, count: frames, gain: &right)
        }
    }

    /// Ends any glide at its target (no memory to clear).
    @inlinable
    public mutating func reset() {
        left.jump(to: left.target)
        right.jump(to: right.target)
    }
}

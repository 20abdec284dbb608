// Render side. The one linear ramp of the DSP kernels (after AudioKitEX's ParameterRamper): per-sample
// gains in Float, rates, delays and filter parameters in Double. The control side computes targets; the
// render thread advances the ramp one step at a time.

/// A value that moves linearly to a target over a fixed number of steps.
///
/// A step is one frame for a ramp advanced with `next()` (gains, mixes, rates, delay times), or one
/// control tick (`EffectTiming.tickFrames`) for a ramp advanced with `tick()` (filter parameters whose
/// coefficients are recomputed on the tick grid); `ramp(to:frames:)` and `remainingFrames` then count
/// ticks.
///
/// Every step is produced by the same sequence of operations (`value += increment`, then a snap to the
/// exact target on the last step), so a ramp split across blocks of any size yields bit-identical values,
/// and a settled ramp holds exactly the requested target. That property is what makes the whole graph
/// block-size invariant. `Value` is `Float` or `Double`; every method is `@inlinable`, so each use is
/// specialized to plain arithmetic on that type.
public struct LinearRamp<Value: BinaryFloatingPoint & BitwiseCopyable & Sendable>: Sendable, BitwiseCopyable {
    /// The value of the next step.
    public var value: Value
    /// The value the ramp ends on.
    public var target: Value
    /// Change per step while ramping.
    public var increment: Value
    /// Steps left until `value == target`.
    public var remainingFrames: Int

    /// Creates a ramp resting at `value`.
    @inlinable
    public init(_ value: Value) {
        self.value = value
        self.target = value
        self.increment = 0
        self.remainingFrames = 0
    }

    /// True while the ramp has not reached its target.
    @inlinable
    public var isRamping: Bool { remainingFrames > 0 }

    /// Starts a ramp from the current value to `newTarget` over `frames` steps (0 jumps at once).
    @inlinable
    public mutating func ramp(to newTarget: Value, frames: Int) {
        target = newTarget
        if frames <= 0 || newTarget == value {
            value = newTarget
            increment = 0
            remainingFrames = 0
        } else {
            increment = (newTarget - value) / Value(frames)
            remainingFrames = frames
        }
    }

    /// Jumps to `newValue` with no ramp.
    @inlinable
    public mutating func jump(to newValue: Value) {
        ramp(to: newValue, frames: 0)
    }

    /// Returns the current step's value and advances by one step.
    @inlinable
    public mutating func next() -> Value {
        let current = value
        if remainingFrames > 0 {
            remainingFrames &-= 1
            value = remainingFrames == 0 ? target : value + increment
        }
        return current
    }

    /// Advances by one step (a control tick); returns true if the value changed.
    @inlinable
    public mutating func tick() -> Bool {
        if remainingFrames == 0 { return false }
        remainingFrames &-= 1
        value = remainingFrames == 0 ? target : value + increment
        return true
    }

    /// Advances by `frames` steps, producing exactly the state `frames` calls of `next()` would.
    @inlinable
    public mutating func advance(frames: Int) {
        if settles(within: frames) { return }
        for _ in 0..<frames { _ = next() }
    }

    /// Advances by `frames` steps in constant time, with the closed form `target − increment × remaining`.
    /// The value can differ from `advance(frames:)` by rounding; for ramps that are only read once per
    /// block (the time effects' rate and pitch), never per sample.
    @inlinable
    public mutating func advanceClosedForm(frames: Int) {
        if settles(within: frames) { return }
        remainingFrames &-= frames
        value = target - increment * Value(remainingFrames)
    }

    /// Settles on the target if the ramp ends within `frames` steps (or has ended); returns true then.
    @inlinable
    mutating func settles(within frames: Int) -> Bool {
        if remainingFrames == 0 { return true }
        if frames < remainingFrames { return false }
        value = target
        remainingFrames = 0
        increment = 0
        return true
    }

    /// The largest value the ramp takes over the next `frames` steps (it is monotonic), by the closed form.
    @inlinable
    public func maximum(overFrames frames: Int) -> Value {
        if remainingFrames == 0 { return value }
        let end = frames >= remainingFrames ? target : target - increment * Value(remainingFrames &- frames)
        return max(value, end)
    }
}

/// The per-sample gain ramp (gains, fades, wet/dry mixes) in the render path's sample type.
public typealias ParameterRamp = LinearRamp<Float>

// Render side. A linear parameter ramp for de-zippering gain changes (after AudioKitEX's ParameterRamper).
// The control side computes targets; the render thread advances the ramp one sample at a time.

/// A value that glides linearly to a target over a fixed number of frames.
///
/// Every sample is produced by the same sequence of operations (`value += increment`, then a snap to
/// the exact target on the last frame), so a ramp split across blocks of any size yields bit-identical
/// values. That property is what makes the whole graph block-size invariant.
public struct ParameterRamp: Sendable, BitwiseCopyable {
    /// The value of the next sample.
    public var value: Float
    /// The value the ramp ends on.
    public var target: Float
    /// Per-frame change while ramping.
    public var increment: Float
    /// Frames left until `value == target`.
    public var remainingFrames: Int

    /// Creates a ramp resting at `value`.
    @inlinable
    public init(_ value: Float) {
        self.value = value
        self.target = value
        self.increment = 0
        self.remainingFrames = 0
    }

    /// True while the ramp has not reached its target.
    @inlinable
    public var isRamping: Bool { remainingFrames > 0 }

    /// Starts a glide from the current value to `newTarget` over `frames` frames (0 jumps at once).
    @inlinable
    public mutating func ramp(to newTarget: Float, frames: Int) {
        target = newTarget
        if frames <= 0 || newTarget == value {
            value = newTarget
            increment = 0
            remainingFrames = 0
        } else {
            increment = (newTarget - value) / Float(frames)
            remainingFrames = frames
        }
    }

    /// Jumps to `newValue` with no glide.
    @inlinable
    public mutating func jump(to newValue: Float) {
        ramp(to: newValue, frames: 0)
    }

    /// Returns the current sample's value and advances by one frame.
    @inlinable
    public mutating func next() -> Float {
        let current = value
        if remainingFrames > 0 {
            remainingFrames &-= 1
            value = remainingFrames == 0 ? target : value + increment
        }
        return current
    }

    /// Advances by `frames` frames, producing exactly the state `frames` calls of `next()` would.
    @inlinable
    public mutating func advance(frames: Int) {
        if remainingFrames == 0 { return }
        if frames >= remainingFrames {
            value = target
            remainingFrames = 0
            increment = 0
            return
        }
        for _ in 0..<frames { _ = next() }
    }
}

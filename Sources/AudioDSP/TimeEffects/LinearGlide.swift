// Render side. A Double-precision linear glide advanced per frame, for the time effects' rate and pitch.

/// A value that moves linearly to a target over a fixed number of frames, in Double precision.
///
/// Like `ParameterRamp`, the last step lands exactly on the target, and `advance(frames:)` gives the
/// same state as that many calls of `next()`, up to rounding of the closed form.
public struct LinearGlide: BitwiseCopyable {
    /// The value of the next frame.
    public var value: Double
    public var target: Double
    @usableFromInline var increment: Double = 0
    @usableFromInline var remainingFrames = 0

    @inlinable
    public init(_ value: Double) {
        self.value = value
        target = value
    }

    @inlinable public var isGliding: Bool { remainingFrames > 0 }

    /// Glides from the current value to `newTarget` over `frames` frames (0 jumps).
    @inlinable
    public mutating func glide(to newTarget: Double, frames: Int) {
        target = newTarget
        if frames <= 0 || newTarget == value {
            value = newTarget
            increment = 0
            remainingFrames = 0
        } else {
            increment = (newTarget - value) / Double(frames)
            remainingFrames = frames
        }
    }

    /// Returns the current frame's value and advances one frame.
    @inlinable
    public mutating func next() -> Double {
        let current = value
        if remainingFrames > 0 {
            remainingFrames &-= 1
            value = remainingFrames == 0 ? target : value + increment
        }
        return current
    }

    /// Advances `frames` frames.
    @inlinable
    public mutating func advance(frames: Int) {
        if remainingFrames == 0 { return }
        if frames >= remainingFrames {
            value = target
            remainingFrames = 0
            increment = 0
        } else {
            remainingFrames &-= frames
            value = target - increment * Double(remainingFrames)
        }
    }

    /// The largest value the glide takes over the next `frames` frames (it is monotonic).
    @inlinable
    public func maximum(overFrames frames: Int) -> Double {
        if remainingFrames == 0 { return value }
        let end = frames >= remainingFrames ? target : target - increment * Double(remainingFrames &- frames)
        return max(value, end)
    }
}

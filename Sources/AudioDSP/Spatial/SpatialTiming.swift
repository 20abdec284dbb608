// Pure. Shared timing constants of the spatial kernels.

/// How long the spatial kernels glide to new targets.
///
/// Every position-driven parameter (gains, delays, filter coefficients) moves linearly, per sample, from
/// its current value to the new target over `rampFrames`. Passing the time until the next expected
/// update makes the trajectory continuous and piecewise linear: 60 position updates per second become
/// 60 connected segments, with no steps (clicks) and no staircase (zipper). A new target arriving before
/// the previous glide ends starts from wherever the glide is.
public enum SpatialTiming {
    /// Position updates per second the defaults are made for (a game's frame rate).
    @inlinable public static var defaultUpdateRate: Double { 60 }

    /// Frames between two updates at `defaultUpdateRate`: 800 at 48 kHz.
    @inlinable
    public static func defaultRampFrames(sampleRate: Double) -> Int {
        max(1, Int(sampleRate / defaultUpdateRate + 0.5))
    }
}

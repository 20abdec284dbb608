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

/// 4-point, 3rd-order Hermite (Catmull–Rom) interpolation between x0 and x1 at t in [0, 1)
/// (O. Niemitalo, "Polynomial Interpolators for High-Quality Resampling of Oversampled Audio", 2001).
/// Exact at t = 0; symmetric in its taps, so it treats both ears alike.
@inlinable
func hermiteInterpolate(_ t: Float, _ xm1: Float, _ x0: Float, _ x1: Float, _ x2: Float) -> Float {
    let c1 = 0.5 * (x1 - xm1)
    let c2 = xm1 - 2.5 * x0 + 2 * x1 - 0.5 * x2
    let c3 = 0.5 * (x2 - xm1) + 1.5 * (x0 - x1)
    return ((c3 * t + c2) * t + c1) * t + x0
}

// Pure. The fractional read shared by the delay lines (the delay effect, the spatial kernels' delays and
// the Doppler resampler).

/// 4-point, 3rd-order Hermite (Catmull–Rom) interpolation between x0 and x1 at t in [0, 1)
/// (O. Niemitalo, "Polynomial Interpolators for High-Quality Resampling of Oversampled Audio", 2001,
/// §"4-point, 3rd-order Hermite"). Exact at t = 0, so an integer delay returns the stored sample;
/// symmetric in its taps, so it treats both ears alike. Cost: 13 flops.
@inlinable
func hermiteInterpolate(_ t: Float, _ xm1: Float, _ x0: Float, _ x1: Float, _ x2: Float) -> Float {
    let c1 = 0.5 * (x1 - xm1)
    let c2 = xm1 - 2.5 * x0 + 2 * x1 - 0.5 * x2
    let c3 = 0.5 * (x2 - xm1) + 1.5 * (x0 - x1)
    return ((c3 * t + c2) * t + c1) * t + x0
}

// Pure (render or control side). Inverse trigonometric functions in Swift for the spatial kernels, whose
// setters run on the render thread and therefore may not call libm (see `EffectMath`).

/// `atan`, `atan2`, `asin`, `acos` and angle conversions without libm.
///
/// `atan` reduces its argument to |t| ≤ tan(π/12) with atan(x) = π/2 − atan(1/x) and
/// atan(t) = π/6 + atan((√3·t − 1)/(√3 + t)), then sums the Taylor series to t^35 (truncation below
/// 1e-19; Cody & Waite, *Software Manual for the Elementary Functions*, 1980, ch. 11). `asin` and
/// `acos` go through `atan2` with √((1 − x)(1 + x)), which keeps full precision near ±1.
///
/// Every function is computed on |x| and given its sign afterwards, so odd functions are exactly odd:
/// `atan2(-y, x) == -atan2(y, x)` bit for bit. The spatial kernels rely on that for exact left/right
/// mirror symmetry. Accuracy: within a few ulp of Glibc (the tests compare at 1e-14).
public enum SpatialMath {
    @inlinable static var sqrt3: Double { 1.732_050_807_568_877_293_53 }
    @inlinable static var tanPiOver12: Double { 0.267_949_192_431_122_705_83 }
    @inlinable public static var halfPi: Double { 1.570_796_326_794_896_619_23 }
    @inlinable public static var pi: Double { 3.141_592_653_589_793_238_46 }

    /// Radians for `degrees`.
    @inlinable
    public static func radians(_ degrees: Double) -> Double { degrees * (pi / 180) }

    /// Degrees for `radians`.
    @inlinable
    public static func degrees(_ radians: Double) -> Double { radians * (180 / pi) }

    /// atan(t) for 0 ≤ t ≤ tan(π/12) by its Taylor series (t² ≤ 0.0718; 18 terms).
    @inlinable
    static func atanKernel(_ t: Double) -> Double {
        let t2 = t * t
        var p = -1.0 / 35
        p = p * t2 + 1.0 / 33
        p = p * t2 - 1.0 / 31
        p = p * t2 + 1.0 / 29
        p = p * t2 - 1.0 / 27
        p = p * t2 + 1.0 / 25
        p = p * t2 - 1.0 / 23
        p = p * t2 + 1.0 / 21
        p = p * t2 - 1.0 / 19
        p = p * t2 + 1.0 / 17
        p = p * t2 - 1.0 / 15
        p = p * t2 + 1.0 / 13
        p = p * t2 - 1.0 / 11
        p = p * t2 + 1.0 / 9
        p = p * t2 - 1.0 / 7
        p = p * t2 + 1.0 / 5
        p = p * t2 - 1.0 / 3
        return t + t * t2 * p
    }

    /// Arctangent in −π/2 … π/2. NaN passes through; ±∞ gives ±π/2.
    @inlinable
    public static func atan(_ x: Double) -> Double {
        if x.isNaN { return x }
        var t = x.magnitude
        let inverted = t > 1
        if inverted { t = 1 / t }
        var offset = 0.0
        if t > tanPiOver12 {
            t = (t * sqrt3 - 1) / (sqrt3 + t)
            offset = pi / 6
        }
        // For t < 0 after the second reduction the series is odd, so the sum stays exact in sign.
        let reduced = t < 0 ? offset - atanKernel(-t) : offset + atanKernel(t)
        let r = inverted ? halfPi - reduced : reduced
        return x < 0 ? -r : r
    }

    /// The angle of (x, y) in −π … π, as C's `atan2` (atan2(0, 0) = 0; atan2(±0, −x) = ±π).
    @inlinable
    public static func atan2(_ y: Double, _ x: Double) -> Double {
        if x.isNaN || y.isNaN { return .nan }
        let ay = y.magnitude
        let ax = x.magnitude
        var r: Double
        if ay == 0 {
            r = 0
        } else if ax == 0 {
            r = halfPi
        } else if ay <= ax {
            r = atan(ay / ax)
        } else {
            r = halfPi - atan(ax / ay)
        }
        if x < 0 || (x == 0 && x.sign == .minus && ay == 0) { r = pi - r }
        return y.sign == .minus ? -r : r
    }

    /// Arcsine in −π/2 … π/2; arguments are clamped to −1 … 1 (rounding in a dot product of unit vectors
    /// may overshoot slightly).
    @inlinable
    public static func asin(_ x: Double) -> Double {
        let c = min(max(x, -1), 1)
        return atan2(c, EffectMath.squareRoot((1 - c) * (1 + c)))
    }

    /// Arccosine in 0 … π; arguments are clamped to −1 … 1.
    @inlinable
    public static func acos(_ x: Double) -> Double {
        let c = min(max(x, -1), 1)
        return atan2(EffectMath.squareRoot((1 - c) * (1 + c)), c)
    }

    /// sin and cos of `angle` with exact odd symmetry: sin(−a) == −sin(a) bit for bit.
    @inlinable
    public static func sinCos(_ angle: Double) -> (sin: Double, cos: Double) {
        let (s, c) = EffectMath.sinCos(angle.magnitude)
        return (angle < 0 ? -s : s, c)
    }
}

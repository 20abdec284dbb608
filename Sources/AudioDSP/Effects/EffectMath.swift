// Pure (render or control side). Double-precision elementary functions in Swift, so that parameter
// setters running on the render thread never call into libm: the `@_noLocks` checker rejects calls to C
// functions, whose bodies it cannot see.

/// `floor`, `exp`, `log`, `sin`, `cos`, `tan`, `sinh` and decibel conversion, written with Cody–Waite
/// argument reduction and truncated Taylor/atanh series (J. M. Muller, *Elementary Functions:
/// Algorithms and Implementation*, 3rd ed., ch. 11; W. J. Cody and W. Waite, *Software Manual for the
/// Elementary Functions*, 1980).
///
/// Accuracy: within a few ulp of libm for the arguments the effects use (|x| ≤ 1e4 for the
/// trigonometric functions, the full double range for `exp` and `log`); the tests compare against Glibc
/// at 1e-14 relative. Cost: 20–40 flops each, no table, no branches on the data beyond range checks.
/// Not for inner sample loops where a cheaper approximation will do.
public enum EffectMath {
    @inlinable public static var pi: Double { 3.141_592_653_589_793_238_46 }
    @inlinable static var ln2Hi: Double { 6.931_471_803_691_238_164_90e-01 }
    @inlinable static var ln2Lo: Double { 1.908_214_929_270_587_700_02e-10 }
    @inlinable static var log2e: Double { 1.442_695_040_888_963_387_00 }
    // π/2 split into three parts whose leading two have 33 significant bits (fdlibm's pio2_1, pio2_2,
    // pio2_2t), so k·part is exact for |k| < 2^20.
    @inlinable static var halfPi1: Double { 1.570_796_326_734_125_614_17e+00 }
    @inlinable static var halfPi2: Double { 6.077_100_506_303_965_976_60e-11 }
    @inlinable static var halfPi3: Double { 2.022_266_248_795_950_631_54e-21 }
    @inlinable static var twoOverPi: Double { 6.366_197_723_675_813_824_33e-01 }

    /// Largest integer ≤ `x`. Values with |x| ≥ 2^52 (already integral), infinities and NaN pass through.
    @inlinable
    public static func floor(_ x: Double) -> Double {
        if !(x.magnitude < 4_503_599_627_370_496) { return x }
        let t = Double(Int64(x))
        return t > x ? t - 1 : t
    }

    /// Multiplies by 2^k for −2044 ≤ k ≤ 2046 without calling `scalbn` (two exact power-of-two factors).
    @inlinable
    static func scaleByPowerOfTwo(_ x: Double, _ k: Int) -> Double {
        let k1 = k / 2
        let k2 = k &- k1
        let f1 = Double(bitPattern: UInt64(k1 &+ 1023) << 52)
        let f2 = Double(bitPattern: UInt64(k2 &+ 1023) << 52)
        return x * f1 * f2
    }

    /// e^x. Overflows to +∞ above 709.78; returns 0 below −745.
    @inlinable
    public static func exp(_ x: Double) -> Double {
        if x.isNaN { return x }
        if x > 709.782_712_893_384 { return .infinity }
        if x < -745.2 { return 0 }
        let k = floor(x * log2e + 0.5)
        let r = (x - k * ln2Hi) - k * ln2Lo
        // e^r for |r| ≤ ln2/2, Taylor series to r^14/14! (truncation < 1e-18).
        var p = 1.0 + r / 14
        p = 1 + r / 13 * p
        p = 1 + r / 12 * p
        p = 1 + r / 11 * p
        p = 1 + r / 10 * p
        p = 1 + r / 9 * p
        p = 1 + r / 8 * p
        p = 1 + r / 7 * p
        p = 1 + r / 6 * p
        p = 1 + r / 5 * p
        p = 1 + r / 4 * p
        p = 1 + r / 3 * p
        p = 1 + r / 2 * p
        p = 1 + r * p
        return scaleByPowerOfTwo(p, Int(k))
    }

    /// Natural logarithm. log(0) = −∞; negative arguments give NaN.
    @inlinable
    public static func log(_ x: Double) -> Double {
        if x.isNaN || x < 0 { return .nan }
        if x == 0 { return -.infinity }
        if x == .infinity { return x }
        var v = x
        var e = 0
        if v < 2.225_073_858_507_201_4e-308 {  // subnormal: scale into the normal range first
            v *= 18_014_398_509_481_984  // 2^54
            e = -54
        }
        let bits = v.bitPattern
        e &+= Int((bits >> 52) & 0x7FF) &- 1023
        var m = Double(bitPattern: (bits & 0x000F_FFFF_FFFF_FFFF) | 0x3FF0_0000_0000_0000)
        if m > 1.414_213_562_373_095_1 {
            m *= 0.5
            e &+= 1
        }
        // log m = 2·atanh(s), s = (m − 1)/(m + 1), |s| ≤ 0.1716; series to s^23 (truncation < 1e-19).
        let s = (m - 1) / (m + 1)
        let s2 = s * s
        var p = 1.0 / 23
        p = p * s2 + 1.0 / 21
        p = p * s2 + 1.0 / 19
        p = p * s2 + 1.0 / 17
        p = p * s2 + 1.0 / 15
        p = p * s2 + 1.0 / 13
        p = p * s2 + 1.0 / 11
        p = p * s2 + 1.0 / 9
        p = p * s2 + 1.0 / 7
        p = p * s2 + 1.0 / 5
        p = p * s2 + 1.0 / 3
        let logM = 2 * s + 2 * s * s2 * p
        let de = Double(e)
        return de * ln2Hi + (logM + de * ln2Lo)
    }

    /// sin(r) and cos(r) for |r| ≤ π/4 (Taylor series to r^17 and r^18; truncation < 1e-17).
    @inlinable
    static func kernelSinCos(_ r: Double) -> (sin: Double, cos: Double) {
        let r2 = r * r
        var s = -1.0 / 355_687_428_096_000  // −1/17!
        s = s * r2 + 1.0 / 1_307_674_368_000  // 1/15!
        s = s * r2 - 1.0 / 6_227_020_800  // −1/13!
        s = s * r2 + 1.0 / 39_916_800  // 1/11!
        s = s * r2 - 1.0 / 362_880  // −1/9!
        s = s * r2 + 1.0 / 5040
        s = s * r2 - 1.0 / 120
        s = s * r2 + 1.0 / 6
        let sine = r - r * r2 * s
        var c = 1.0 / 6_402_373_705_728_000  // 1/18!
        c = c * r2 - 1.0 / 20_922_789_888_000  // −1/16!
        c = c * r2 + 1.0 / 87_178_291_200  // 1/14!
        c = c * r2 - 1.0 / 479_001_600  // −1/12!
        c = c * r2 + 1.0 / 3_628_800  // 1/10!
        c = c * r2 - 1.0 / 40320
        c = c * r2 + 1.0 / 720
        c = c * r2 - 1.0 / 24
        c = c * r2 + 0.5
        let cosine = 1 - r2 * c
        return (sine, cosine)
    }

    /// sin(x) and cos(x) together. Accurate for |x| < 1e5 (beyond that the three-part reduction loses
    /// bits); non-finite arguments give NaN.
    @inlinable
    public static func sinCos(_ x: Double) -> (sin: Double, cos: Double) {
        if !(x.magnitude < 1e15) { return (.nan, .nan) }
        let k = floor(x * twoOverPi + 0.5)
        let r = ((x - k * halfPi1) - k * halfPi2) - k * halfPi3
        let (s, c) = kernelSinCos(r)
        switch Int64(k) & 3 {
        case 0: return (s, c)
        case 1: return (c, -s)
        case 2: return (-s, -c)
        default: return (-c, s)
        }
    }

    @inlinable
    public static func sin(_ x: Double) -> Double { sinCos(x).sin }

    @inlinable
    public static func cos(_ x: Double) -> Double { sinCos(x).cos }

    @inlinable
    public static func tan(_ x: Double) -> Double {
        let (s, c) = sinCos(x)
        return s / c
    }

    /// √x, correctly rounded (the CPU's square-root instruction). `Double.squareRoot()` goes through a C
    /// shim on Linux, which the `@_noLocks` checker rejects; the shim is an inline `__builtin_sqrt`,
    /// which compiles to the instruction itself for the arguments that reach it here (not negative, not
    /// NaN), so the call is wrapped in a function the checker is told to skip. Negative arguments give
    /// NaN; 0 and +∞ pass through.
    @inlinable
    public static func squareRoot(_ x: Double) -> Double {
        if x.isNaN || x < 0 { return .nan }
        return hardwareSquareRoot(x)
    }

    @inlinable @inline(never) @_semantics("no_performance_analysis")
    static func hardwareSquareRoot(_ x: Double) -> Double { x.squareRoot() }

    /// Hyperbolic sine; a short series below |x| = 0.01 avoids the cancellation in (eˣ − e⁻ˣ)/2.
    @inlinable
    public static func sinh(_ x: Double) -> Double {
        if x.magnitude < 0.01 {
            let x2 = x * x
            return x * (1 + x2 / 6 * (1 + x2 / 20 * (1 + x2 / 42)))
        }
        let e = exp(x)
        return 0.5 * (e - 1 / e)
    }

    /// 2^x.
    @inlinable
    public static func exp2(_ x: Double) -> Double { exp(x * 0.693_147_180_559_945_309_42) }

    /// log₂ x.
    @inlinable
    public static func log2(_ x: Double) -> Double { log(x) * log2e }

    /// Linear amplitude for a level in dB: 10^(dB/20).
    @inlinable
    public static func decibelsToGain(_ decibels: Double) -> Double {
        exp(decibels * 0.115_129_254_649_702_284_2)  // ln(10)/20
    }

    /// Clamps `x` into `lower...upper`; NaN gives `lower`.
    @inlinable
    public static func clamp(_ x: Double, _ lower: Double, _ upper: Double) -> Double {
        if !(x >= lower) { return lower }
        return x > upper ? upper : x
    }
}

// Control side. The fractional part of an HRIR's delay, folded into its taps when a slot is filled, so
// the convolver keeps reading its input history at whole-frame offsets (no cost on the render side).

/// An 8-tap Kaiser-windowed sinc (β = 4, normalised to unit gain at DC) that delays a filter by a
/// fraction of a frame.
///
/// For a delay d = w + f (w whole frames, 0 < f < 1) the slot stores the filter convolved with
/// cₖ = sinc(k − f)·I₀(β√(1 − ((k − f)/4)²))/I₀(β), k = −3 … 4, and a whole-frame delay of w − 3 (the
/// kernel reaches three frames ahead). Against an ideal band-limited delay, at 48 kHz and any f:
/// magnitude within 0.06 dB up to 16 kHz (0.8 dB at 18 kHz) and group delay within 0.01 frame up to
/// 16 kHz. A 4-point Hermite (`FractionalDelayLine`) would lose 3 dB at 16 kHz for f = ½; the windowed
/// sinc costs nothing on the render side because it is applied once per slot, not per sample.
///
/// The folded filter is 7 taps longer than the original; what does not fit in the slot is cut (the
/// engine's minimum-phase filters leave their last 7 taps zero, so nothing is cut). Delays below
/// 3 frames, or within 1e-6 of a whole frame, are rounded to whole frames instead.
public enum HRIRFractionalDelay {
    /// Frames the kernel reaches ahead of the delayed point.
    @inlinable public static var lead: Int { 3 }
    /// Kernel taps.
    @inlinable public static var taps: Int { 8 }

    /// The kernel for fraction `f` (0 < f < 1): coefficient k + 3 multiplies h[n − 3 − k], k = −3 … 4.
    @inlinable
    public static func coefficients(fraction f: Double) -> SIMD8<Double> {
        let beta2 = 16.0  // β²
        let norm = 1 / besselI0(squared: beta2)
        let sinPiF = sinPi(f)
        var c = SIMD8<Double>(repeating: 0)
        var sum = 0.0
        for i in 0..<8 {
            let k = i - 3
            let x = Double(k) - f
            // sin(π(k − f)) = −(−1)ᵏ·sin(πf)
            let s = (k & 1 == 0 ? -sinPiF : sinPiF) / (EffectMath.pi * x)
            let r = x / 4
            let w = besselI0(squared: beta2 * max(0, 1 - r * r)) * norm
            c[i] = s * w
            sum += c[i]
        }
        return c / sum
    }

    /// sin(πf) for 0 ≤ f ≤ 1 by its Taylor series on [0, π/2] (error below 1e-15; no libm call, which
    /// the real-time checker could not see into).
    @inlinable
    static func sinPi(_ f: Double) -> Double {
        let x = EffectMath.pi * min(f, 1 - f)
        let x2 = x * x
        var term = x
        var sum = x
        for k in 1..<12 {
            term *= -x2 / Double((2 * k) * (2 * k + 1))
            sum += term
        }
        return sum
    }

    /// I₀(x) of x² ≤ 16 by its power series Σ (x²/4)ᵏ/(k!)² (18 terms: the last is below 1e-19 of the
    /// sum; no square root, which the real-time checker could not see into).
    @inlinable
    static func besselI0(squared x2: Double) -> Double {
        var term = 1.0
        var sum = 1.0
        let q = x2 / 4
        for k in 1..<18 {
            term *= q / Double(k * k)
            sum += term
        }
        return sum
    }

    /// Writes `filter` (`count` taps, time order) delayed by `delay` frames into `reversed` (`capacity`
    /// taps, time-reversed, zero-padded) and returns the whole-frame delay left for the convolver to apply
    /// (≥ 0).
    @inlinable
    public static func write(
        _ filter: UnsafePointer<Float>, count: Int, delay: Double,
        reversed: UnsafeMutablePointer<Float>, capacity: Int
    ) -> Double {
        let n = min(max(count, 0), capacity)
        let d = delay.isFinite ? min(max(0, delay), 1e9) : 0
        let whole = Double(Int(d))
        let f = d - whole
        if whole < Double(lead) || f < 1e-6 || f > 1 - 1e-6 {
            for j in 0..<capacity {
                let k = capacity &- 1 &- j
                reversed[j] = k < n ? filter[k] : 0
            }
            // Round half up by conversion (`rounded()` is not accepted by the real-time checker).
            return Double(Int(d + 0.5))
        }
        let c = coefficients(fraction: f)
        // g[m] = Σᵢ cᵢ·h[m − i], eight outputs at a time where every h[m − i] exists (eight-lane fused
        // loads, no bounds checks), one at a time at the edges; written time-reversed: g[m] goes to
        // reversed[capacity − 1 − m].
        let available = max(count, 0)
        let last = capacity &- 1
        let raw = UnsafeRawPointer(filter)
        var m = 0
        while m < capacity {
            if m >= 7 && m &+ 8 <= available && m &+ 8 <= capacity {
                var acc = SIMD8<Float>(repeating: 0)
                for i in 0..<8 {
                    let x = raw.loadUnaligned(fromByteOffset: (m &- i) &* 4, as: SIMD8<Float>.self)
                    acc += SIMD8<Float>(repeating: Float(c[i])) * x
                }
                for lane in 0..<8 { reversed[last &- (m &+ lane)] = acc[lane] }
                m &+= 8
            } else {
                var s: Float = 0
                for i in 0..<8 {
                    let source = m &- i
                    if source >= 0 && source < available { s += Float(c[i]) * filter[source] }
                }
                reversed[last &- m] = s
                m &+= 1
            }
        }
        return whole - Double(lead)
    }
}

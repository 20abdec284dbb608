// Control side (init, deallocate) and render side (coefficients). The Kaiser-windowed sinc the varispeed
// interpolates with, tabulated once per kernel.

/// h(t) = sinc(t) · w(t / Z) for |t| < Z, 0 beyond, with w the Kaiser window
/// w(u) = I₀(β √(1 − u²)) / I₀(β) (J. F. Kaiser, "Nonrecursive digital filter design using the I₀-sinh
/// window function", Proc. IEEE ISCAS 1974), tabulated at `phases` points per unit of t and read with
/// linear interpolation between neighbouring points (the polyphase table of J. O. Smith and P. Gossett,
/// "A flexible sampling-rate conversion method", Proc. IEEE ICASSP 1984; J. O. Smith, *Digital Audio
/// Resampling Home Page*, "Implementation").
///
/// With Z = 32 zero crossings per side and β = 9 the stopband is about −90 dB and the transition band
/// (where the response falls from 1 to 0) is ±4.5 % of the sample rate wide around the cutoff
/// (Kaiser's formula Δf = (A − 7.95)/(14.36 · 2Z)). Linear interpolation over 512 phases per zero
/// crossing adds errors below 2e-6 per tap (Δ²/8 · max|h''|, Δ = 1/512).
///
/// h is exactly 1 at t = 0 and exactly 0 at every other integer t, so reading at whole-sample positions
/// with the full-band scale returns the input samples exactly.
public struct WindowedSincTable: BitwiseCopyable {
    /// Zero crossings on each side of the centre (Z).
    @inlinable public static var zeroCrossings: Int { 32 }
    /// Table points per unit of t.
    @inlinable public static var phases: Int { 512 }
    /// Kaiser β.
    @inlinable public static var beta: Double { 9 }

    /// h(i / phases) for i in 0 ... Z·phases + 1 (the last two entries are 0).
    @usableFromInline let values: UnsafeMutablePointer<Float>
    /// values[i + 1] − values[i].
    @usableFromInline let slopes: UnsafeMutablePointer<Float>
    @usableFromInline let count: Int

    /// Control side. Computes the table (16 386 points, 128 KB with the slopes).
    public init() {
        let z = Self.zeroCrossings
        let p = Self.phases
        count = z * p + 2
        values = .allocate(capacity: count)
        slopes = .allocate(capacity: count)
        let denominator = Self.besselI0(Self.beta)
        for i in 0..<count {
            let t = Double(i) / Double(p)
            var h = 0.0
            if i == 0 {
                h = 1
            } else if i % p != 0 && t < Double(z) {
                let u = t / Double(z)
                let window = Self.besselI0(Self.beta * EffectMath.squareRoot(1 - u * u)) / denominator
                h = EffectMath.sin(EffectMath.pi * t) / (EffectMath.pi * t) * window
            }
            values[i] = Float(h)
        }
        for i in 0..<(count - 1) { slopes[i] = values[i + 1] - values[i] }
        slopes[count - 1] = 0
    }

    /// Control side.
    public func deallocate() {
        values.deallocate()
        slopes.deallocate()
    }

    /// Modified Bessel function of the first kind, order 0, by its power series Σ ((x/2)^k / k!)².
    static func besselI0(_ x: Double) -> Double {
        var sum = 1.0
        var term = 1.0
        var k = 1.0
        while term > sum * 1e-17 {
            let f = x / (2 * k)
            term *= f * f
            sum += term
            k += 1
        }
        return sum
    }

    /// h(t) for t ≥ 0, by linear interpolation in the table.
    @inlinable
    public func value(at t: Double) -> Float {
        let u = t * Double(Self.phases)
        let i = Int(u)
        if i >= count &- 1 { return 0 }
        return values[i] + Float(u - Double(i)) * slopes[i]
    }

    /// The 2·`halfWidth` coefficients for an output at input position `base + fraction` with the
    /// sinc stretched to cutoff `scale` × Nyquist (`scale` ≤ 1): `c[j] = scale · h(scale · |j − halfWidth
    /// + 1 − fraction|)`, the weight of input frame `base − halfWidth + 1 + j`. `halfWidth` must be at
    /// least ⌈Z / scale⌉ so that no non-zero tap is left out.
    @inlinable
    public func coefficients(
        fraction: Double, scale: Double, halfWidth: Int, into c: UnsafeMutablePointer<Float>
    ) {
        let step = scale * Double(Self.phases)
        let gain = Float(scale)
        let limit = count &- 1
        for j in 0..<(2 &* halfWidth) {
            let d = Double(j &- halfWidth &+ 1) - fraction
            let u = (d < 0 ? -d : d) * step
            let i = Int(u)
            c[j] = i >= limit ? 0 : gain * (values[i] + Float(u - Double(i)) * slopes[i])
        }
    }
}

// Pure (render or control side). A rigid spherical head: per-ear arrival delay (Woodworth's ITD) and
// head-shadow filter (Brown & Duda), as functions of the angle between the source and each ear.

/// The spherical-head model of C. P. Brown and R. O. Duda, "A structural model for binaural sound
/// synthesis", IEEE Trans. Speech and Audio Processing 6(5), 1998, §III-A.
///
/// For an ear at angle of incidence θ (between the source direction and the ear's axis; the right ear's
/// axis is listener +x, cos θ_R = x, cos θ_L = −x):
///
/// - Arrival time relative to the head's centre (their eq. 3, from Woodworth & Schlosberg 1954):
///   T(θ) = −(a/c)·cos θ for θ < π/2, and (a/c)·(θ − π/2) beyond. The kernel delays each ear by
///   a/c + T(θ) ≥ 0, so the near ear of a lateral source has no delay, and the interaural difference is
///   Woodworth's ITD = (a/c)·(φ + sin φ) for a source at lateral angle φ: 0.656 ms at 90° with the
///   defaults.
/// - Head shadow (their eq. 2): H(s) = (α·s + 2ω₀)/(s + 2ω₀), ω₀ = c/a, a one-pole/one-zero filter with
///   unit gain at DC and α at high frequencies, α(θ) = (1 + α_min/2) + (1 − α_min/2)·cos(θ/θ_min·π),
///   α_min = 0.1, θ_min = 150°: +6 dB for the facing ear, −20 dB at 150°. Discretised with the bilinear
///   transform without prewarping (their eq. 4): b₀ = (ω₀ + α·fs)/(ω₀ + fs), b₁ = (ω₀ − α·fs)/(ω₀ + fs),
///   a₁ = (ω₀ − fs)/(ω₀ + fs). Only b₀, b₁ depend on α, linearly, so gliding α glides the filter.
public struct SphericalHeadModel: Sendable, BitwiseCopyable, Equatable {
    /// Head radius a, metres (Brown & Duda: 0.0875).
    public var headRadius: Double
    /// Speed of sound c, m/s.
    public var speedOfSound: Double

    @inlinable
    public init(headRadius: Double = 0.0875, speedOfSound: Double = 343) {
        self.headRadius = headRadius
        self.speedOfSound = speedOfSound
    }

    /// α at θ_min.
    @inlinable public static var minimumShadow: Double { 0.1 }
    /// θ_min in radians (150°).
    @inlinable public static var minimumShadowAngle: Double { 5 * SpatialMath.pi / 6 }

    /// Delay of an ear, in seconds (0 … (a/c)(1 + π/2)), for the cosine of its angle of incidence.
    @inlinable
    public func earDelay(cosIncidence: Double) -> Double {
        let aOverC = headRadius / speedOfSound
        let c = min(max(cosIncidence, -1), 1)
        if c >= 0 { return aOverC * (1 - c) }
        // θ − π/2 = asin(−cos θ) for θ in [π/2, π].
        return aOverC * (1 + SpatialMath.asin(-c))
    }

    /// Woodworth's interaural time difference, seconds, for a source at lateral angle `lateral`
    /// (radians, 0 ahead, π/2 at the right ear): (a/c)(φ + sin φ), odd in φ.
    @inlinable
    public func interauralTimeDifference(lateral: Double) -> Double {
        let phi = min(max(lateral, -SpatialMath.halfPi), SpatialMath.halfPi)
        return headRadius / speedOfSound * (phi + SpatialMath.sinCos(phi).sin)
    }

    /// The head-shadow α (high-frequency gain, 0.1 … 2) for the cosine of an ear's angle of incidence.
    @inlinable
    public func shadow(cosIncidence: Double) -> Double {
        let theta = SpatialMath.acos(cosIncidence)
        let m = Self.minimumShadow
        return (1 + m / 2) + (1 - m / 2) * EffectMath.cos(theta / Self.minimumShadowAngle * SpatialMath.pi)
    }

    /// The discrete head-shadow filter: (b₀, b₁) for `alpha` and the pole coefficient a₁ at `sampleRate`.
    @inlinable
    public func shadowCoefficients(alpha: Double, sampleRate: Double) -> (b0: Double, b1: Double, a1: Double) {
        let w0 = speedOfSound / headRadius
        let n = 1 / (w0 + sampleRate)
        return ((w0 + alpha * sampleRate) * n, (w0 - alpha * sampleRate) * n, (w0 - sampleRate) * n)
    }
}

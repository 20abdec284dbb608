// Pure. Equal-power pan and balance laws used by mixer inputs.
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Equal-power stereo panning (sine/cosine law).
///
/// With θ = (pan + 1)·π/4, a mono source is placed with left = cos θ and right = sin θ, so
/// left² + right² = 1 for every pan in −1…1 and the centre is 1/√2 (−3.01 dB) per side.
/// Stereo sources use the matching balance law: each side is √2·cos θ or √2·sin θ capped at 1, so
/// the centre leaves both channels at unity and a hard pan silences the opposite channel.
public enum EqualPowerPanner {
    /// Gains (left, right) for a mono source at `pan` (−1 hard left … 1 hard right; clamped).
    @inlinable
    public static func monoGains(pan: Float) -> (left: Float, right: Float) {
        let p = min(max(pan, -1), 1)
        let theta = Double(p + 1) * Double.pi / 4
        return (Float(cos(theta)), Float(sin(theta)))
    }

    /// Gains (left, right) applied to the two channels of a stereo source at balance `pan`.
    @inlinable
    public static func balanceGains(pan: Float) -> (left: Float, right: Float) {
        let p = min(max(pan, -1), 1)
        let theta = Double(p + 1) * Double.pi / 4
        // In Double, √2·cos(π/4) rounds to ≥ 1, so the centre is exactly unity.
        return (Float(min(1, 2.0.squareRoot() * cos(theta))), Float(min(1, 2.0.squareRoot() * sin(theta))))
    }
}

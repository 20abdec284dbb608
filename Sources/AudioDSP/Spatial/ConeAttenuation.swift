// Pure (render or control side). Directional sources: OpenAL 1.1's sound cone (§3.5.2,
// AL_CONE_INNER_ANGLE, AL_CONE_OUTER_ANGLE, AL_CONE_OUTER_GAIN).

/// A source's sound cone and the gain it gives towards the listener.
///
/// θ is the angle between the source's direction and the vector from the source to the listener. Inside
/// the inner cone (θ ≤ inner/2) the gain is 1; outside the outer cone (θ ≥ outer/2) it is `outerGain`;
/// in between it is interpolated linearly in angle, as OpenAL 1.1 and OpenAL Soft do:
///
///     g = 1 + (outerGain − 1) · (θ − inner/2) / (outer/2 − inner/2)
///
/// Angles are full cone apertures in degrees (0 … 360; OpenAL's defaults 360/360 make every source
/// omnidirectional). A zero direction vector is also omnidirectional (OpenAL's default direction).
public struct ConeAttenuation: Sendable, BitwiseCopyable, Equatable {
    /// Aperture of the full-gain cone, degrees (0 … 360).
    public var innerAngleDegrees: Double
    /// Aperture beyond which the gain is `outerGain`, degrees (inner … 360).
    public var outerAngleDegrees: Double
    /// Gain outside the outer cone (0 … 1).
    public var outerGain: Double

    /// OpenAL's defaults: 360°, 360°, outer gain 0 (omnidirectional).
    @inlinable
    public init(innerAngleDegrees: Double = 360, outerAngleDegrees: Double = 360, outerGain: Double = 0) {
        self.innerAngleDegrees = innerAngleDegrees
        self.outerAngleDegrees = outerAngleDegrees
        self.outerGain = outerGain
    }

    /// The gain for the angle θ (degrees, 0 … 180) between the source's direction and the listener.
    @inlinable
    public func gain(angleDegrees theta: Double) -> Double {
        let inner = min(max(innerAngleDegrees, 0), 360) / 2
        let outer = max(min(max(outerAngleDegrees, 0), 360) / 2, inner)
        let outside = min(max(outerGain, 0), 1)
        if !(theta > inner) { return 1 }
        if theta >= outer { return outside }
        return 1 + (outside - 1) * (theta - inner) / (outer - inner)
    }

    /// The gain for a source at `sourcePosition` facing `direction` (any length; zero = omnidirectional),
    /// heard at `listenerPosition` (world coordinates, metres).
    @inlinable
    public func gain(
        source sourcePosition: SpatialVector, direction: SpatialVector,
        listener listenerPosition: SpatialVector
    ) -> Double {
        guard let facing = direction.normalized else { return 1 }
        guard let toListener = (listenerPosition - sourcePosition).normalized else { return 1 }
        return gain(angleDegrees: SpatialMath.degrees(SpatialMath.acos(facing.dot(toListener))))
    }
}

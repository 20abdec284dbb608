// Pure (render or control side). Where a source is as heard by the listener: a unit vector in listener
// coordinates plus azimuth, elevation and distance (the 3D mixer's listener-centred description).

/// A source's direction and distance relative to the listener.
///
/// `local` is the unit vector towards the source in listener coordinates (x right, y up, z behind; so
/// straight ahead is (0, 0, −1)). Azimuth is 0 straight ahead, positive to the right, ±π behind (the 3D
/// mixer's convention, −π … π); elevation is positive above the horizontal plane (−π/2 … π/2).
///
/// A source at the listener's position (distance below 1e-9 m) has no direction; it is placed straight
/// ahead, which every panner renders as centred (equal left and right).
public struct SourceDirection: Sendable, BitwiseCopyable, Equatable {
    /// Unit vector towards the source, listener coordinates.
    public var local: SpatialVector
    /// Distance in metres (≥ 0).
    public var distance: Double

    /// Straight ahead at `distance`.
    @inlinable
    public init(distance: Double = 1) {
        local = SpatialVector(0, 0, -1)
        self.distance = distance
    }

    /// From a vector in listener coordinates (not necessarily unit length).
    @inlinable
    public init(localVector v: SpatialVector) {
        let d = v.length
        if let u = v.normalized, d >= 1e-9 {
            local = u
            distance = d
        } else {
            local = SpatialVector(0, 0, -1)
            distance = d.isFinite ? d : 0
        }
    }

    /// From azimuth and elevation in radians and a distance in metres.
    @inlinable
    public init(azimuth: Double, elevation: Double, distance: Double = 1) {
        let (sa, ca) = SpatialMath.sinCos(azimuth)
        let (se, ce) = SpatialMath.sinCos(elevation)
        local = SpatialVector(sa * ce, se, -ca * ce)
        self.distance = distance
    }

    /// The source at `sourcePosition` as heard by a listener at `listenerPosition` with `orientation`
    /// (world coordinates in metres).
    @inlinable
    public init(
        source sourcePosition: SpatialVector, listener listenerPosition: SpatialVector,
        orientation: ListenerOrientation
    ) {
        self.init(localVector: orientation.listenerLocal(sourcePosition - listenerPosition))
    }

    /// Radians, 0 ahead, positive right, −π … π.
    @inlinable
    public var azimuth: Double { SpatialMath.atan2(local.x, -local.z) }

    /// Radians, positive up, −π/2 … π/2.
    @inlinable
    public var elevation: Double {
        SpatialMath.atan2(local.y, EffectMath.squareRoot(local.x * local.x + local.z * local.z))
    }

    /// The same source mirrored left ↔ right (x → −x), exactly.
    @inlinable
    public var mirrored: SourceDirection {
        var m = self
        m.local.x = -local.x
        return m
    }
}

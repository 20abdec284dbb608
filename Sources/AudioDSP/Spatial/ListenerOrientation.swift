// Pure (render or control side). The listener's orientation as forward/up vectors and as yaw/pitch/roll
// in degrees, kept in sync (AVAudioEnvironmentNode's listenerVectorOrientation and
// listenerAngularOrientation; OpenAL's AL_ORIENTATION "at/up").

/// An orthonormal listener frame.
///
/// Coordinates are OpenAL's (right-handed; x right, y up, −z forward by default). The angular form is
/// intrinsic yaw → pitch → roll (Tait–Bryan): yaw turns the head about the world up axis, pitch about
/// the turned right axis, roll about the resulting forward axis. Signs (our choice; Apple does not
/// document them, see docs/DECISIONS.md): **positive yaw turns right** (clockwise seen from above, the
/// same sense as the 3D mixer's azimuth), **positive pitch looks up**, **positive roll tilts the top of
/// the head to the right**. With angles ψ (yaw), θ (pitch), φ (roll):
///
///     forward = (sin ψ cos θ, sin θ, −cos ψ cos θ)
///     right₀  = (cos ψ, 0, sin ψ),  up₀ = right₀ × forward
///     up      = cos φ · up₀ + sin φ · right₀
///
/// Setting either form updates the other. Vectors given by the caller need not be unit length or exactly
/// perpendicular: `forward` is normalised and `up` is made perpendicular to it (Gram–Schmidt), as OpenAL
/// implementations do. At pitch ±90° (gimbal lock) yaw and roll are not separable; the vector → angle
/// conversion then reports roll 0 and puts the whole turn in yaw.
public struct ListenerOrientation: Sendable, BitwiseCopyable, Equatable {
    @usableFromInline var storedForward: SpatialVector
    @usableFromInline var storedUp: SpatialVector
    @usableFromInline var storedAngles: (yaw: Double, pitch: Double, roll: Double)

    /// Unit vector the listener faces.
    @inlinable public var forward: SpatialVector { storedForward }
    /// Unit vector out of the top of the listener's head, perpendicular to `forward`.
    @inlinable public var up: SpatialVector { storedUp }
    /// Turn to the right, in degrees (−180 … 180 when derived from vectors).
    @inlinable public var yawDegrees: Double { storedAngles.yaw }
    /// Look up, in degrees (−90 … 90 when derived from vectors).
    @inlinable public var pitchDegrees: Double { storedAngles.pitch }
    /// Tilt of the head's top to the right, in degrees (−180 … 180 when derived from vectors).
    @inlinable public var rollDegrees: Double { storedAngles.roll }

    @inlinable
    public static func == (a: ListenerOrientation, b: ListenerOrientation) -> Bool {
        a.storedForward == b.storedForward && a.storedUp == b.storedUp && a.storedAngles == b.storedAngles
    }

    /// The default frame: forward (0, 0, −1), up (0, 1, 0), all angles 0.
    @inlinable
    public init() {
        storedForward = SpatialVector(0, 0, -1)
        storedUp = SpatialVector(0, 1, 0)
        storedAngles = (0, 0, 0)
    }

    /// The frame for yaw, pitch and roll in degrees (any finite values; they are kept as given).
    @inlinable
    public init(yawDegrees: Double, pitchDegrees: Double, rollDegrees: Double) {
        self.init()
        setAngles(yawDegrees: yawDegrees, pitchDegrees: pitchDegrees, rollDegrees: rollDegrees)
    }

    /// The frame for `forward` and `up`, or nil when either is zero or non-finite or they are parallel.
    @inlinable
    public init?(forward: SpatialVector, up: SpatialVector) {
        self.init()
        if !setVectors(forward: forward, up: up) { return nil }
    }

    /// Unit vector out of the listener's right ear: forward × up.
    @inlinable
    public var right: SpatialVector { forward.cross(up) }

    /// Sets the angular form and derives the vectors. Non-finite angles are ignored.
    @inlinable
    public mutating func setAngles(yawDegrees yaw: Double, pitchDegrees pitch: Double, rollDegrees roll: Double) {
        guard yaw.isFinite, pitch.isFinite, roll.isFinite else { return }
        let (sy, cy) = SpatialMath.sinCos(SpatialMath.radians(yaw))
        let (sp, cp) = SpatialMath.sinCos(SpatialMath.radians(pitch))
        let (sr, cr) = SpatialMath.sinCos(SpatialMath.radians(roll))
        let f = SpatialVector(sy * cp, sp, -cy * cp)
        let right0 = SpatialVector(cy, 0, sy)
        let up0 = right0.cross(f)
        storedForward = f
        storedUp = cr * up0 + sr * right0
        storedAngles = (yaw, pitch, roll)
    }

    /// Sets the vector form and derives the angles. Returns false (and changes nothing) when either
    /// vector is zero or non-finite or they are parallel.
    @inlinable
    @discardableResult
    public mutating func setVectors(forward newForward: SpatialVector, up newUp: SpatialVector) -> Bool {
        guard let f = newForward.normalized else { return false }
        guard let u = (newUp - newUp.dot(f) * f).normalized else { return false }
        storedForward = f
        storedUp = u
        let pitch = SpatialMath.asin(f.y)
        let horizontal = EffectMath.squareRoot(f.x * f.x + f.z * f.z)
        var yaw: Double
        var roll: Double
        if horizontal > 1e-9 {
            yaw = SpatialMath.atan2(f.x, -f.z)
            let (sy, cy) = SpatialMath.sinCos(yaw)
            let right0 = SpatialVector(cy, 0, sy)
            let up0 = right0.cross(f)
            roll = SpatialMath.atan2(u.dot(right0), u.dot(up0))
        } else {
            // Looking straight up or down: the head's up vector carries the heading; roll is 0.
            // At pitch +90°, up₀ = (−sin ψ, 0, cos ψ); at −90°, up₀ = (sin ψ, 0, −cos ψ).
            yaw = f.y > 0 ? SpatialMath.atan2(-u.x, u.z) : SpatialMath.atan2(u.x, -u.z)
            roll = 0
        }
        storedAngles = (SpatialMath.degrees(yaw), SpatialMath.degrees(pitch), SpatialMath.degrees(roll))
        return true
    }

    /// `worldVector` in listener coordinates: (along right, along up, along −forward), i.e. the same
    /// axes as OpenAL's default frame (x right, y up, z behind).
    @inlinable
    public func listenerLocal(_ worldVector: SpatialVector) -> SpatialVector {
        SpatialVector(worldVector.dot(right), worldVector.dot(up), -worldVector.dot(forward))
    }
}

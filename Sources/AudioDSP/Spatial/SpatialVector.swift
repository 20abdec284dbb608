// Pure (render or control side). A 3-D vector in metres (positions) or metres per second (velocities),
// in OpenAL's right-handed coordinates: x right, y up, z towards the default listener (−z is forward).

/// A Double-precision 3-D vector. Arithmetic never calls libm (`length` uses `EffectMath.squareRoot`),
/// so it is usable in render-side setters.
public struct SpatialVector: Sendable, BitwiseCopyable, Equatable {
    public var x: Double
    public var y: Double
    public var z: Double

    @inlinable
    public init(_ x: Double, _ y: Double, _ z: Double) {
        self.x = x
        self.y = y
        self.z = z
    }

    @inlinable public static var zero: SpatialVector { SpatialVector(0, 0, 0) }

    @inlinable
    public static func + (a: SpatialVector, b: SpatialVector) -> SpatialVector {
        SpatialVector(a.x + b.x, a.y + b.y, a.z + b.z)
    }

    @inlinable
    public static func - (a: SpatialVector, b: SpatialVector) -> SpatialVector {
        SpatialVector(a.x - b.x, a.y - b.y, a.z - b.z)
    }

    @inlinable
    public static prefix func - (a: SpatialVector) -> SpatialVector { SpatialVector(-a.x, -a.y, -a.z) }

    @inlinable
    public static func * (s: Double, a: SpatialVector) -> SpatialVector { SpatialVector(s * a.x, s * a.y, s * a.z) }

    /// Scalar product.
    @inlinable
    public func dot(_ b: SpatialVector) -> Double { x * b.x + y * b.y + z * b.z }

    /// Vector product (right-handed: x × y = z).
    @inlinable
    public func cross(_ b: SpatialVector) -> SpatialVector {
        SpatialVector(y * b.z - z * b.y, z * b.x - x * b.z, x * b.y - y * b.x)
    }

    /// Euclidean length.
    @inlinable
    public var length: Double { EffectMath.squareRoot(dot(self)) }

    /// The unit vector in this direction, or nil for a zero, tiny (< 1e-12) or non-finite vector.
    @inlinable
    public var normalized: SpatialVector? {
        let l = length
        guard l.isFinite, l > 1e-12 else { return nil }
        return SpatialVector(x / l, y / l, z / l)
    }
}

// Pure (control side). The direction cells HRTF (the 64-tap quality) interpolates on: a moving source
// publishes a new interpolated pair only when it enters another cell, so it costs what the
// nearest-measurement lookup did while still blending between measurements.

extension HRTFQuality {
    /// Cells per unit of each coordinate of the listener-local unit vector (nil: every direction is
    /// interpolated as it is). HRTF: 20, i.e. cells about 1/20 rad (2.9°) across, finer than the 5° of a
    /// KEMAR-like grid; a source moving 0.5° per block publishes about every sixth block, as often as
    /// the nearest measurement changed. HRTF HQ interpolates every direction.
    @inlinable
    public var cellsPerUnit: Double? { self == .standard ? 20 : nil }

    /// The cell of `direction` as a number: the local unit vector's components times `cellsPerUnit`,
    /// rounded (half away from zero, so mirrored directions get mirrored cells), packed. −1 when the
    /// quality has no cells. Equal keys give equal pairs, so a caller can skip an update that lands in the
    /// cell it published last.
    @inlinable
    public func cellKey(for direction: SourceDirection) -> Int {
        guard let q = cellsPerUnit else { return -1 }
        let v = direction.local
        let span = Int(q) &* 2 &+ 1
        func index(_ c: Double) -> Int { Int((min(max(c, -1), 1) * q).rounded()) &+ Int(q) }
        return (index(v.x) &* span &+ index(v.y)) &* span &+ index(v.z)
    }

    /// The direction at the centre of cell `key` (from `cellKey(for:)`): its rounded vector, normalised.
    @inlinable
    public func cellCentre(_ key: Int) -> SourceDirection? {
        guard let q = cellsPerUnit, key >= 0 else { return nil }
        let span = Int(q) &* 2 &+ 1
        let z = Double(key % span - Int(q)) / q
        let y = Double(key / span % span - Int(q)) / q
        let x = Double(key / (span &* span) - Int(q)) / q
        let v = SpatialVector(x, y, z)
        guard v.normalized != nil else { return nil }
        return SourceDirection(localVector: v)
    }
}

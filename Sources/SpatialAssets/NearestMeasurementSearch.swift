// Control side. The nearest measured direction of an HRTF set, found from the previous answer: a moving
// source stays near the measurement it had, so a few distances settle it exactly without a tree search.

/// Exact nearest-measurement search that starts from a hint (the previous answer).
///
/// For a query point p and the hint h at distance d₀ = |p − h|, the nearest measurement m* satisfies
/// |p − m*| ≤ d₀, so by the triangle inequality |m* − h| ≤ |m* − p| + |p − h| ≤ 2·d₀. Each measurement
/// keeps its `neighbourCount` nearest other measurements sorted by distance; the search checks h and
/// those neighbours up to 2·d₀ away and returns the closest. That is exact, not a heuristic: when the
/// list ends before 2·d₀ (a source that jumped) the search gives up and the caller asks libmysofa's
/// k-d tree instead. Distances are Euclidean in the set's Cartesian coordinates, as libmysofa's
/// `mysofa_lookup` measures them.
///
/// Cost: one distance per neighbour inside 2·d₀ (a handful while a source moves smoothly) against a
/// k-d tree descent; building it is M² distances (M measurements), so sets above `maximumMeasurements`
/// get none and always use the tree.
final class NearestMeasurementSearch {
    /// Nearest other measurements kept per measurement.
    static let neighbourCount = 24
    /// Largest set given a search (M² distances at load).
    static let maximumMeasurements = 8192

    let count: Int
    let k: Int
    /// x, y, z per measurement.
    let positions: UnsafeMutablePointer<Float>
    /// `k` neighbour indices per measurement, nearest first, and their distances.
    let neighbours: UnsafeMutablePointer<Int32>
    let distances: UnsafeMutablePointer<Float>

    /// A search over `count` points (x, y, z each), or nil when the set is too small or too large.
    init?(positions source: UnsafePointer<Float>, count: Int) {
        guard count >= 2, count <= Self.maximumMeasurements else { return nil }
        self.count = count
        k = min(Self.neighbourCount, count - 1)
        positions = .allocate(capacity: 3 * count)
        positions.initialize(from: source, count: 3 * count)
        neighbours = .allocate(capacity: k * count)
        neighbours.initialize(repeating: 0, count: k * count)
        distances = .allocate(capacity: k * count)
        distances.initialize(repeating: .infinity, count: k * count)
        for i in 0..<count {
            // Insertion into a sorted list of k (most candidates are farther than the k-th and skip it).
            let list = neighbours + i * k
            let listDistances = distances + i * k
            for j in 0..<count where j != i {
                let d = distance(i, j)
                guard d < listDistances[k - 1] else { continue }
                var slot = k - 1
                while slot > 0, listDistances[slot - 1] > d {
                    listDistances[slot] = listDistances[slot - 1]
                    list[slot] = list[slot - 1]
                    slot -= 1
                }
                listDistances[slot] = d
                list[slot] = Int32(j)
            }
        }
    }

    deinit {
        positions.deallocate()
        neighbours.deallocate()
        distances.deallocate()
    }

    private func distance(_ i: Int, _ j: Int) -> Float {
        let a = positions + 3 * i
        let b = positions + 3 * j
        let dx = a[0] - b[0], dy = a[1] - b[1], dz = a[2] - b[2]
        return (dx * dx + dy * dy + dz * dz).squareRoot()
    }

    private func squaredDistance(_ i: Int, _ x: Float, _ y: Float, _ z: Float) -> Float {
        let a = positions + 3 * i
        let dx = a[0] - x, dy = a[1] - y, dz = a[2] - z
        return dx * dx + dy * dy + dz * dz
    }

    /// The measurement nearest to (x, y, z), or nil when `hint` is not a measurement or its neighbour
    /// list does not reach 2·d₀ (then nothing is proven; ask the tree).
    func nearest(_ x: Float, _ y: Float, _ z: Float, hint: Int) -> Int? {
        guard hint >= 0, hint < count else { return nil }
        let d0 = squaredDistance(hint, x, y, z).squareRoot()
        // A hair over 2·d₀, so rounding in the stored distances cannot hide a candidate.
        let reach = 2 * d0 * 1.0001 + 1e-6
        var best = hint
        var bestSquared = d0 * d0
        let list = neighbours + hint * k
        let listDistances = distances + hint * k
        for slot in 0..<k {
            if listDistances[slot] > reach { return best }
            let candidate = Int(list[slot])
            let d = squaredDistance(candidate, x, y, z)
            if d < bestSquared {
                bestSquared = d
                best = candidate
            }
        }
        return k == count - 1 ? best : nil
    }
}

// Test helper. The delay between two signals by cross-correlation (interaural time differences).

/// The lag in samples by which `b` trails `a`, searched over ±`maximumLag`, refined to a fraction of a
/// sample by a parabola through the correlation peak and its neighbours.
public func crossCorrelationLag(_ a: [Float], _ b: [Float], maximumLag: Int) -> Double {
    func correlation(_ lag: Int) -> Double {
        var s = 0.0
        for i in 0..<a.count {
            let j = i + lag
            if j >= 0 && j < b.count { s += Double(a[i]) * Double(b[j]) }
        }
        return s
    }
    let values = (-maximumLag...maximumLag).map { correlation($0) }
    var best = 0
    for i in values.indices where values[i] > values[best] { best = i }
    var offset = 0.0
    if best > 0 && best < values.count - 1 {
        let (l, c, r) = (values[best - 1], values[best], values[best + 1])
        let d = l - 2 * c + r
        if d != 0 { offset = 0.5 * (l - r) / d }
    }
    return Double(best - maximumLag) + offset
}

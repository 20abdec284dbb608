// Control side (load time). A filter for one ear chosen so that the pair's interaural cross-correlation
// follows the measurement's over every lag, given the other ear's filter: a linear least-squares problem.

/// Designs the second filter b of a pair whose first filter a is fixed, so that a ⋆ b (the pair's
/// cross-correlation, (a ⋆ b)(s) = Σₙ a[n]·b[n + s]) matches the measured pair's x ⋆ y over all lags.
///
/// With a standing for x from sample p on and b for y from sample q on, the target is
/// t(s) = (x ⋆ y)(s + q − p). Minimising Σₛ ((a ⋆ b)(s) − t(s))² over the `active` taps of b gives the
/// normal equations Σⱼ Rₐₐ(m − j)·b[j] = Σₙ a[n]·t(m − n) (Rₐₐ the autocorrelation of a, Toeplitz),
/// solved by Cholesky with a small ridge (1e-4 of Rₐₐ(0)) for frequencies where a has no energy. By
/// Parseval the same b minimises Σ_ω |conj(A)·B − conj(X)·Y|²: it carries the measured interaural phase
/// wherever the fixed ear has energy, including the excess phase that a minimum-phase pair lacks.
#if canImport(Glibc)
    import Glibc
#endif

enum InterauralCorrelationMatcher {
    /// Writes b (`active` taps, then zeros to `span`) to `output`.
    static func design(
        fixed a: UnsafePointer<Float>, active: Int, span: Int,
        measuredFixed x: UnsafePointer<Float>, measuredOther y: UnsafePointer<Float>, length: Int,
        fixedStart p: Int, otherStart q: Int, emphasis: (lag: Double, weight: Double)? = nil,
        into output: UnsafeMutablePointer<Float>
    ) {
        let n = active
        // t(s) for s in −(n − 1) … (n − 1), index s + n − 1.
        var t = [Double](repeating: 0, count: 2 * n - 1)
        for i in 0..<(2 * n - 1) {
            let tau = i - (n - 1) + q - p
            var sum = 0.0
            let lo = max(0, -tau)
            let hi = min(length, length - tau)
            if lo < hi {
                for k in lo..<hi { sum += Double(x[k]) * Double(y[k + tau]) }
            }
            t[i] = sum
        }
        // Lag weights: 1, plus `emphasis.weight` in a Gaussian of 3 frames around `emphasis.lag`.
        var w = [Double](repeating: 1, count: 2 * n - 1)
        if let emphasis {
            for i in 0..<(2 * n - 1) {
                let d = (Double(i - (n - 1)) - emphasis.lag) / 3
                w[i] += emphasis.weight * exp(-d * d)
            }
        }
        // Normal equations N·b = g: N[j][k] = Σₛ w(s)·a[j − s]·a[k − s], g[j] = Σₛ w(s)·a[j − s]·t(s).
        var normal = [Double](repeating: 0, count: n * n)
        var g = [Double](repeating: 0, count: n)
        for i in 0..<(2 * n - 1) {
            let s = i - (n - 1)
            let lo = max(0, s)
            let hi = min(n, n + s)
            guard lo < hi else { continue }
            for j in lo..<hi {
                let aj = w[i] * Double(a[j - s])
                g[j] += aj * t[i]
                for k in lo...j { normal[j * n + k] += aj * Double(a[k - s]) }
            }
        }
        // (R + εI)·b = g by Cholesky (lower triangle in `l`).
        var trace = 0.0
        for j in 0..<n { trace += normal[j * n + j] }
        let ridge = max(trace / Double(n), 1e-30) * 1e-4
        var l = [Double](repeating: 0, count: n * n)
        for j in 0..<n {
            var d = normal[j * n + j] + ridge
            for k in 0..<j { d -= l[j * n + k] * l[j * n + k] }
            let root = max(d, 1e-300).squareRoot()
            l[j * n + j] = root
            for i in (j + 1)..<max(j + 1, n) {
                var s = normal[i * n + j]
                for k in 0..<j { s -= l[i * n + k] * l[j * n + k] }
                l[i * n + j] = s / root
            }
        }
        var z = [Double](repeating: 0, count: n)
        for i in 0..<n {
            var s = g[i]
            for k in 0..<i { s -= l[i * n + k] * z[k] }
            z[i] = s / l[i * n + i]
        }
        for i in stride(from: n - 1, through: 0, by: -1) {
            var s = z[i]
            for k in (i + 1)..<n { s -= l[k * n + i] * z[k] }
            z[i] = s / l[i * n + i]
        }
        for i in 0..<span { output[i] = i < n ? Float(z[i]) : 0 }
    }
}

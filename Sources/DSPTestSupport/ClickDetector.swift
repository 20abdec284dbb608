// Test support. Detects clicks (steps or corners) in a rendered sine whose level or phase may move.

/// A click is a step (or a sharp corner) in the waveform. For a sine of angular frequency ω and peak A
/// the second difference y[n+1] − 2y[n] + y[n−1] never exceeds ≈ ω²·A; a level or phase that glides
/// adds only a little to that, but a step of size s adds ≈ s at once. So the ratio
///
///     max |Δ²y| / (ω² · max |y|)
///
/// is about 1 for a clean moving sine and jumps by orders of magnitude at a click: at 200 Hz and 48 kHz,
/// ω² = 6.9e-4, so a step of 0.3 % of the peak already doubles it.
public enum ClickDetector {
    /// The ratio above for `signal` carrying a sine at `frequency`.
    public static func secondDifferenceRatio(_ signal: ArraySlice<Float>, frequency: Double, sampleRate: Double)
        -> Double
    {
        let x = Array(signal)
        guard x.count >= 3 else { return 0 }
        let w = 2 * Double.pi * frequency / sampleRate
        var peak = 0.0
        var worst = 0.0
        for v in x { peak = max(peak, abs(Double(v))) }
        for i in 1..<(x.count - 1) {
            worst = max(worst, abs(Double(x[i + 1]) - 2 * Double(x[i]) + Double(x[i - 1])))
        }
        guard peak > 0 else { return 0 }
        return worst / (w * w * peak)
    }

    /// Index of the largest second difference (where a click is), for failure messages.
    public static func worstIndex(_ signal: ArraySlice<Float>) -> Int {
        let x = Array(signal)
        var worst = 0.0
        var index = 0
        for i in 1..<max(1, x.count - 1) {
            let d = abs(Double(x[i + 1]) - 2 * Double(x[i]) + Double(x[i - 1]))
            if d > worst {
                worst = d
                index = i
            }
        }
        return index + signal.startIndex
    }
}

/// Frequency estimation for tones.
public enum FrequencyEstimator {
    /// The frequency of a (near) pure tone from its rising zero crossings, located by linear
    /// interpolation: (crossings − 1) periods between the first and the last. Accurate to ≈ 1e-4
    /// relative over a few hundred periods.
    public static func zeroCrossingFrequency(_ signal: ArraySlice<Float>, sampleRate: Double) -> Double {
        let x = Array(signal)
        var first: Double?
        var last = 0.0
        var count = 0
        for i in 1..<x.count where x[i - 1] < 0 && x[i] >= 0 {
            let t = Double(i - 1) + Double(-x[i - 1]) / Double(x[i] - x[i - 1])
            if first == nil { first = t }
            last = t
            count += 1
        }
        guard let start = first, count >= 2, last > start else { return 0 }
        return Double(count - 1) / (last - start) * sampleRate
    }
}

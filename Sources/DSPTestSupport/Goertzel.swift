// Test support. Single-bin DFT (Goertzel) for measuring a sine's amplitude and phase.
import Foundation

/// Measures amplitude and phase of `frequency` in a signal over an integer number of cycles.
public enum Goertzel {
    /// Amplitude (peak) and phase (radians, cosine reference) of `frequency` in `samples`.
    public static func measure(_ samples: ArraySlice<Float>, frequency: Double, sampleRate: Double)
        -> (amplitude: Double, phase: Double)
    {
        let n = samples.count
        guard n > 0 else { return (0, 0) }
        var re = 0.0
        var im = 0.0
        let w = 2 * Double.pi * frequency / sampleRate
        for (i, s) in samples.enumerated() {
            re += Double(s) * cos(w * Double(i))
            im -= Double(s) * sin(w * Double(i))
        }
        return (2 * (re * re + im * im).squareRoot() / Double(n), atan2(im, re))
    }

    public static func amplitude(_ samples: [Float], frequency: Double, sampleRate: Double) -> Double {
        measure(samples[...], frequency: frequency, sampleRate: sampleRate).amplitude
    }

    /// The amplitude of a steady sine at `frequency` in a live capture, and how many of its windows
    /// showed one. A period an xrun lost, repeated or cut short on a loaded machine puts a step in the
    /// sine; the windows of `window` samples (an integer number of cycles) whose samples the fitted sine
    /// explains (residual RMS within 1 % of the amplitude, or below 1e-5 in silence) are steady, and
    /// the amplitude is their median (nil when none is). A wrong gain or silence shows in every window,
    /// so it is measured, not excused.
    public static func steadyAmplitude(
        _ samples: ArraySlice<Float>, frequency: Double, sampleRate: Double, window: Int
    ) -> (amplitude: Double?, steady: Int, windows: Int) {
        let measured = steadyWindows(samples, frequency: frequency, sampleRate: sampleRate, window: window)
        return (median(measured.amplitudes), measured.amplitudes.count, measured.windows)
    }

    /// The upper median of `values`; nil when there are none.
    static func median(_ values: [Double]) -> Double? {
        values.isEmpty ? nil : values.sorted()[values.count / 2]
    }

    /// The amplitudes of the steady windows of `samples` (in order) and how many windows there were.
    static func steadyWindows(
        _ samples: ArraySlice<Float>, frequency: Double, sampleRate: Double, window: Int
    ) -> (amplitudes: [Double], windows: Int) {
        let cycles = frequency * Double(window) / sampleRate
        precondition(abs(cycles - cycles.rounded()) < 1e-9, "a window must hold whole cycles")
        var steady: [Double] = []
        var count = 0
        var start = samples.startIndex
        while start + window <= samples.endIndex {
            let slice = samples[start..<(start + window)]
            let (amplitude, phase) = measure(slice, frequency: frequency, sampleRate: sampleRate)
            let w = 2 * Double.pi * frequency / sampleRate
            var residual = 0.0
            for (i, s) in slice.enumerated() {
                let r = Double(s) - amplitude * cos(w * Double(i) + phase)
                residual += r * r
            }
            let rms = (residual / Double(window)).squareRoot()
            if rms <= max(0.01 * amplitude, 1e-5) { steady.append(amplitude) }
            count += 1
            start += window
        }
        return (steady, count)
    }

    /// `steadyAmplitude` over captures from `capture`, taken again (up to `attempts` times) while the
    /// steady windows seen so far are fewer than half of one capture's: a loaded machine's xruns now and
    /// then disturb most of a capture. The steady windows of every capture taken count together, and the
    /// amplitude is their median, so a wrong gain or silence in them is measured, never excused.
    /// `capture` returns the samples to measure, or why it has none. Returns the amplitude (nil when the
    /// captures never had enough steady windows) and what each capture showed.
    public static func steadyAmplitude(
        frequency: Double, sampleRate: Double, window: Int, attempts: Int = 3,
        capturing capture: () throws -> Result<ArraySlice<Float>, CaptureShortfall>
    ) rethrows -> (amplitude: Double?, captures: [String]) {
        var captures: [String] = []
        var steady: [Double] = []
        for _ in 0..<attempts {
            switch try capture() {
            case .failure(let shortfall):
                captures.append(shortfall.description)
            case .success(let samples):
                let measured = steadyWindows(samples, frequency: frequency, sampleRate: sampleRate, window: window)
                steady += measured.amplitudes
                captures.append(
                    "\(measured.amplitudes.count) of \(measured.windows) windows steady at "
                        + String(describing: median(measured.amplitudes))
                )
                if steady.count * 2 >= measured.windows { return (median(steady), captures) }
            }
        }
        return (nil, captures)
    }

    /// Why a capture has no samples to measure.
    public struct CaptureShortfall: Error, CustomStringConvertible {
        public let description: String
        public init(_ description: String) { self.description = description }
    }
}

/// Decibel helpers with named tolerances.
public enum Decibels {
    public static func fromAmplitude(_ a: Double) -> Double { 20 * log10(max(a, 1e-30)) }
    public static func toAmplitude(_ db: Double) -> Double { pow(10, db / 20) }
}

/// Small signal statistics.
public enum SignalStats {
    public static func rms(_ x: ArraySlice<Float>) -> Double {
        guard !x.isEmpty else { return 0 }
        return (x.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(x.count)).squareRoot()
    }

    public static func peak(_ x: ArraySlice<Float>) -> Float { x.reduce(0) { max($0, abs($1)) } }

    /// Largest |x[i] - x[i-1]|: a click shows up as a step far above what the signal's slope allows.
    public static func maxStep(_ x: ArraySlice<Float>) -> Float {
        var m: Float = 0
        var prev = x.first ?? 0
        for v in x.dropFirst() {
            m = max(m, abs(v - prev))
            prev = v
        }
        return m
    }

    /// Index of the first sample with |x| > threshold, or nil.
    public static func onset(_ x: [Float], threshold: Float) -> Int? { x.firstIndex { abs($0) > threshold } }
}

/// Deterministic xorshift noise for reproducible tests.
public struct SeededRandom {
    private var state: UInt64
    public init(seed: UInt64) { state = seed == 0 ? 0x9E37_79B9_7F4A_7C15 : seed }
    public mutating func next() -> UInt64 {
        state ^= state << 13
        state ^= state >> 7
        state ^= state << 17
        return state
    }
    /// Uniform in [-1, 1).
    public mutating func nextFloat() -> Float { Float(Double(next() >> 11) / Double(1 << 53) * 2 - 1) }
    public mutating func nextInt(_ range: Range<Int>) -> Int { range.lowerBound + Int(next() % UInt64(range.count)) }
}

/// Synthetic test signals.
public enum TestSignal {
    public static func sine(
        frequency: Double, sampleRate: Double, frames: Int, amplitude: Float = 1,
        phase: Double = 0
    ) -> [Float] {
        (0..<frames).map { amplitude * Float(sin(2 * Double.pi * frequency * Double($0) / sampleRate + phase)) }
    }

    /// A ramp 0, 1, 2, … scaled: every sample distinct, so a seam or skipped frame is visible.
    public static func ramp(frames: Int, scale: Float = 1e-4, offset: Float = 0) -> [Float] {
        (0..<frames).map { Float($0) * scale + offset }
    }
}

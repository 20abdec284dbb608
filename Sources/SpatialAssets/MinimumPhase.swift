// Control side (load time). Short minimum-phase versions of head-related impulse responses: the
// magnitude kept (smoothed to 1/6 octave), the phase made minimum, the filter cut to a few dozen taps,
// and the delay that puts it where the original's energy was.

#if canImport(Glibc)
    import Glibc
#endif

/// Shortens impulse responses by minimum-phase reconstruction, as OpenAL Soft's `makemhr` does for its
/// 32-tap sets.
///
/// For a filter h (taps at the engine rate):
/// 1. |H| on an N-point grid (N = 1024, or the next power of two ≥ 2 × the filter length), power-averaged
///    over ±1/12 octave (1/6-octave smoothing: notches a short filter cannot follow are filled in; band
///    levels are kept; `SOFADataset` asks for 1/12 octave for filters of 2.1 ms or more, which can follow
///    more of a notch);
/// 2. the minimum-phase filter with that magnitude by the real cepstrum (Oppenheim & Schafer,
///    *Discrete-Time Signal Processing*, §12: fold the cepstrum of log|H| onto positive quefrencies,
///    exponentiate);
/// 3. the first `length` taps (or `length − reservedTaps`, the rest zero), the last quarter under a half
///    raised-cosine fade (no step at the cut); `fitBandLevels` can then fit their band levels to the
///    original's (`BandLevelFitter`), which `SOFADataset` does;
/// 4. its whole-frame lag (searched near the original's onset) at which it best matches h
///    (cross-correlation peak); `SOFADataset` refines it and sets the pair's delays from the interaural
///    cross-correlation (`HRIRDelayEstimator`).
///
/// The energy a minimum-phase filter packs into its first taps is the most any filter with that
/// magnitude can, so truncating it loses the least; what is lost is mostly low-frequency detail
/// (`SPATIAL.md` has the measured errors). Not thread-safe; allocates its work buffers once.
final class MinimumPhaseDesigner {
    let fftSize: Int
    let length: Int
    /// Taps designed (the rest of `length` stay zero).
    let active: Int
    let sampleRate: Double
    private let fft: ComplexFFT
    private let re: UnsafeMutablePointer<Double>
    private let im: UnsafeMutablePointer<Double>
    private let power: UnsafeMutablePointer<Double>
    private let cumulative: UnsafeMutablePointer<Double>
    /// Smoothing band of bin k: bins `lower[k] ..< upper[k]`.
    private let lower: UnsafeMutablePointer<Int>
    private let upper: UnsafeMutablePointer<Int>
    private let fade: UnsafeMutablePointer<Double>
    private let fitter: BandLevelFitter?
    /// cos and sin of 2πk/N, k < N (the all-pass of `design`'s `lowDelay`).
    private let unitCosines: UnsafeMutablePointer<Double>
    private let unitSines: UnsafeMutablePointer<Double>

    /// A designer for filters of up to `inputLength` taps, cut to `length` taps, at `sampleRate`, with the
    /// magnitude power-averaged over `smoothingOctaves` (1/6 octave by default).
    init(
        inputLength: Int, length: Int, sampleRate: Double, smoothingOctaves: Double = 1.0 / 6,
        fitsBandLevels: Bool = false, reservedTaps: Int = 0
    ) {
        var n = 1024
        while n < 2 * inputLength { n <<= 1 }
        fftSize = n
        self.length = length
        active = max(1, length - reservedTaps)
        self.sampleRate = sampleRate
        fft = ComplexFFT(size: n)
        re = .allocate(capacity: n)
        im = .allocate(capacity: n)
        let half = n / 2 + 1
        power = .allocate(capacity: half)
        cumulative = .allocate(capacity: half + 1)
        lower = .allocate(capacity: half)
        upper = .allocate(capacity: half)
        fade = .allocate(capacity: length)
        unitCosines = .allocate(capacity: n)
        unitSines = .allocate(capacity: n)
        for k in 0..<n {
            let omega = 2 * Double.pi * Double(k) / Double(n)
            unitCosines[k] = cos(omega)
            unitSines[k] = sin(omega)
        }
        let binHz = sampleRate / Double(n)
        let edge = pow(2.0, smoothingOctaves / 2)
        for k in 0..<half {
            let f = max(Double(k) * binHz, 20)
            let lo = Int((f / edge / binHz).rounded(.up))
            let hi = Int((f * edge / binHz).rounded(.down)) + 1
            lower[k] = min(max(lo, 0), half - 1)
            upper[k] = min(max(hi, lower[k] + 1), half)
        }
        let faded = max(1, active / 4)
        for i in 0..<length {
            let m = i - (active - faded)
            fade[i] = m < 0 ? 1 : m >= faded ? 0 : 0.5 + 0.5 * cos(Double.pi * Double(m + 1) / Double(faded + 1))
        }
        fitter =
            fitsBandLevels
            ? BandLevelFitter(length: active, referenceLength: inputLength, sampleRate: sampleRate) : nil
    }

    deinit {
        re.deallocate()
        im.deallocate()
        power.deallocate()
        cumulative.deallocate()
        lower.deallocate()
        upper.deallocate()
        fade.deallocate()
        unitCosines.deallocate()
        unitSines.deallocate()
    }

    /// Writes the `length`-tap minimum-phase version of `input` (`count` taps) to `output` and returns
    /// its delay in whole frames relative to `input`'s first tap, searched over `lags`.
    ///
    /// `lowDelay` (frames, ≥ 0) delays the low frequencies against the high ones with a first-order
    /// all-pass A(z) = (a + z⁻¹)/(1 + a·z⁻¹), −1 < a ≤ 0, whose group delay falls from (1 − a)/(1 + a) at
    /// DC to (1 + a)/(1 − a) at Nyquist; `lowDelay` is that difference. The magnitude is untouched and the
    /// filter stays causal (its response decays as |a|ⁿ). `SOFADataset` uses it to give a pair the
    /// difference between low-frequency and broadband interaural delay that the measurement has and a
    /// minimum-phase pair lacks.
    func design(
        _ input: UnsafePointer<Float>, count: Int, into output: UnsafeMutablePointer<Float>,
        lags: ClosedRange<Int>, lowDelay: Double = 0
    ) -> Int {
        let n = fftSize
        let half = n / 2 + 1
        // 1. Smoothed power spectrum.
        for i in 0..<n {
            re[i] = i < count ? Double(input[i]) : 0
            im[i] = 0
        }
        fft.transform(re, im, inverse: false)
        var peak = 0.0
        cumulative[0] = 0
        for k in 0..<half {
            let p = re[k] * re[k] + im[k] * im[k]
            cumulative[k + 1] = cumulative[k] + p
            peak = max(peak, p)
        }
        // A floor 200 dB below the peak keeps log() finite for exact zeros.
        let floor = max(peak * 1e-20, 1e-300)
        for k in 0..<half {
            let sum = cumulative[upper[k]] - cumulative[lower[k]]
            power[k] = max(sum / Double(upper[k] - lower[k]), floor)
        }
        // 2. Real cepstrum of log|H| (even, real spectrum), folded onto positive quefrencies.
        for k in 0..<half {
            re[k] = 0.5 * log(power[k])
            im[k] = 0
        }
        for k in half..<n {
            re[k] = re[n - k]
            im[k] = 0
        }
        fft.transform(re, im, inverse: true)
        let scale = 1 / Double(n)
        for i in 0..<n {
            let c = re[i] * scale
            re[i] = i == 0 || i == n / 2 ? c : i < n / 2 ? 2 * c : 0
            im[i] = 0
        }
        fft.transform(re, im, inverse: false)
        for k in 0..<n {
            let magnitude = exp(re[k])
            let phase = im[k]
            re[k] = magnitude * cos(phase)
            im[k] = magnitude * sin(phase)
        }
        if lowDelay != 0 { delayLowFrequencies(by: lowDelay) }
        fft.transform(re, im, inverse: true)
        // 3. The first taps, faded out.
        for i in 0..<length { output[i] = Float(re[i] * scale * fade[i]) }
        // 4. The lag at which the short filter best matches the original.
        var bestLag = 0
        var best = -Double.infinity
        for lag in max(0, lags.lowerBound)...max(0, min(lags.upperBound, count - 1)) {
            var s = 0.0
            for i in 0..<min(length, count - lag) { s += Double(output[i]) * Double(input[lag + i]) }
            if s > best {
                best = s
                bestLag = lag
            }
        }
        return bestLag
    }
}

extension MinimumPhaseDesigner {
    /// Refines a filter from `design` (of `input`, `count` taps) so its band levels match the input's
    /// (`BandLevelFitter`); does nothing when the designer was made without fitting.
    func fitBandLevels(
        _ output: UnsafeMutablePointer<Float>, to input: UnsafePointer<Float>, count: Int,
        octaveOffsets: [Double] = []
    ) {
        fitter?.fit(output, to: input, count: count, octaveOffsets: octaveOffsets)
    }

    /// How far a filter's band levels are from the input's (`BandLevelFitter.errors`); nil without fitting.
    func bandErrors(_ output: UnsafePointer<Float>, to input: UnsafePointer<Float>, count: Int) -> (
        thirdOctaveRMS: Double, octaves: [Double], broadband: Double
    )? {
        fitter?.errors(output, to: input, count: count)
    }

    /// Multiplies the spectrum in `re`/`im` by the all-pass of `design`'s `lowDelay` = `difference`.
    private func delayLowFrequencies(by difference: Double) {
        let n = fftSize
        // x − 1/x = difference, x = (1 − a)/(1 + a) the group delay at DC.
        let x = (difference + (difference * difference + 4).squareRoot()) / 2
        let a = (1 - x) / (1 + x)
        for k in 0..<n {
            // A(e^{iω}) = (a + e^{−iω})/(1 + a·e^{−iω}), ω = 2πk/n
            let (c, s) = (unitCosines[k], -unitSines[k])
            let (nr, ni) = (a + c, s)
            let (dr, di) = (1 + a * c, a * s)
            let dd = dr * dr + di * di
            let gr = (nr * dr + ni * di) / dd, gi = (ni * dr - nr * di) / dd
            let (r, m) = (re[k], im[k])
            re[k] = r * gr - m * gi
            im[k] = r * gi + m * gr
        }
    }
}

/// In-place radix-2 complex FFT of a fixed power-of-two size (control side, load time only), with
/// precomputed twiddles and bit reversal.
final class ComplexFFT {
    let size: Int
    private let cosines: UnsafeMutablePointer<Double>
    private let sines: UnsafeMutablePointer<Double>
    private let reversed: UnsafeMutablePointer<Int>

    init(size: Int) {
        precondition(size >= 2 && size & (size - 1) == 0, "FFT size must be a power of two")
        self.size = size
        cosines = .allocate(capacity: size / 2)
        sines = .allocate(capacity: size / 2)
        reversed = .allocate(capacity: size)
        for k in 0..<(size / 2) {
            let angle = -2 * Double.pi * Double(k) / Double(size)
            cosines[k] = cos(angle)
            sines[k] = sin(angle)
        }
        var bits = 0
        while 1 << bits < size { bits += 1 }
        for i in 0..<size {
            var r = 0
            for b in 0..<bits where i & (1 << b) != 0 { r |= 1 << (bits - 1 - b) }
            reversed[i] = r
        }
    }

    deinit {
        cosines.deallocate()
        sines.deallocate()
        reversed.deallocate()
    }

    /// X[k] = Σ x[n]·e^(∓2πikn/N) in place (no 1/N on the inverse).
    func transform(_ re: UnsafeMutablePointer<Double>, _ im: UnsafeMutablePointer<Double>, inverse: Bool) {
        let n = size
        for i in 0..<n {
            let j = reversed[i]
            if i < j {
                let (r, m) = (re[i], im[i])
                re[i] = re[j]
                im[i] = im[j]
                re[j] = r
                im[j] = m
            }
        }
        let sign = inverse ? -1.0 : 1.0
        var length = 2
        while length <= n {
            let halfLength = length / 2
            let step = n / length
            var start = 0
            while start < n {
                for k in 0..<halfLength {
                    let wr = cosines[k * step]
                    let wi = sign * sines[k * step]
                    let a = start + k
                    let b = a + halfLength
                    let tr = re[b] * wr - im[b] * wi
                    let ti = re[b] * wi + im[b] * wr
                    re[b] = re[a] - tr
                    im[b] = im[a] - ti
                    re[a] += tr
                    im[a] += ti
                }
                start += length
            }
            length <<= 1
        }
    }
}

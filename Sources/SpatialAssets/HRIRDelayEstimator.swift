// Control side (load time). Fractional cross-correlation lags between impulse responses: where a
// minimum-phase filter sits on its original, and the interaural time difference of a measured pair and
// of its minimum-phase version, broadband and below 1.5 kHz.

#if canImport(Glibc)
    import Glibc
#endif

/// Cross-correlation peaks with sub-frame precision.
///
/// For signals a and b, r(τ) = Σₙ a[n]·b[n + τ] is computed as the inverse FFT of conj(A)·B; the largest
/// value over a range of whole lags is refined by Newton's method on the band-limited r(τ) =
/// (1/N)·Σₖ Re(conj(Aₖ)·Bₖ·e^{iωₖτ}) (exact for the sampled signals, no parabola bias). A positive lag
/// means b is later than a. With `lowpass` the cross-spectrum is weighted by 1/(1 + (f/1.5 kHz)⁸), the
/// squared magnitude of a 4th-order Butterworth low-pass applied without phase: the interaural delay that
/// the low frequencies carry, which localisation relies on most.
///
/// Not thread-safe; allocates its buffers once.
final class HRIRDelayEstimator {
    let size: Int
    let sampleRate: Double
    static let lowpassHz = 1500.0
    private let fft: ComplexFFT
    private let slots: Int
    private let spectraRe: UnsafeMutablePointer<Double>
    private let spectraIm: UnsafeMutablePointer<Double>
    private let re: UnsafeMutablePointer<Double>
    private let im: UnsafeMutablePointer<Double>
    private let cre: UnsafeMutablePointer<Double>
    private let cim: UnsafeMutablePointer<Double>

    /// An estimator for signals of up to `maximumLength` taps, with `slots` stored spectra.
    init(maximumLength: Int, sampleRate: Double, slots: Int = 4) {
        var n = 256
        while n < 2 * maximumLength { n <<= 1 }
        size = n
        self.sampleRate = sampleRate
        self.slots = slots
        fft = ComplexFFT(size: n)
        spectraRe = .allocate(capacity: slots * n)
        spectraIm = .allocate(capacity: slots * n)
        re = .allocate(capacity: n)
        im = .allocate(capacity: n)
        cre = .allocate(capacity: n / 2 + 1)
        cim = .allocate(capacity: n / 2 + 1)
    }

    deinit {
        spectraRe.deallocate()
        spectraIm.deallocate()
        re.deallocate()
        im.deallocate()
        cre.deallocate()
        cim.deallocate()
    }

    /// Stores the spectrum of `x` (`count` taps, zero-padded) in `slot`.
    func load(_ slot: Int, _ x: UnsafePointer<Float>, count: Int) {
        let n = size
        let r = spectraRe + slot * n
        let i = spectraIm + slot * n
        for k in 0..<n {
            r[k] = k < count ? Double(x[k]) : 0
            i[k] = 0
        }
        fft.transform(r, i, inverse: false)
    }

    /// The lag τ (frames, fractional) that maximises Σ a[n]·b[n + τ] for the spectra in slots `a` and
    /// `b`, searched over the whole lags `range` (|lag| < size / 2) and refined.
    func lag(_ a: Int, _ b: Int, lowpass: Bool, range: ClosedRange<Int>) -> Double {
        let n = size
        let half = n / 2
        let ar = spectraRe + a * n, ai = spectraIm + a * n
        let br = spectraRe + b * n, bi = spectraIm + b * n
        let binHz = sampleRate / Double(n)
        for k in 0...half {
            // conj(A)·B
            var r = ar[k] * br[k] + ai[k] * bi[k]
            var m = ar[k] * bi[k] - ai[k] * br[k]
            if lowpass {
                let x = Double(k) * binHz / Self.lowpassHz
                let x2 = x * x
                let w = 1 / (1 + x2 * x2 * x2 * x2)
                r *= w
                m *= w
            }
            cre[k] = r
            cim[k] = m
        }
        for k in 0...half {
            re[k] = cre[k]
            im[k] = cim[k]
        }
        for k in (half + 1)..<n {
            re[k] = cre[n - k]
            im[k] = -cim[n - k]
        }
        fft.transform(re, im, inverse: true)
        let low = max(range.lowerBound, -(half - 2))
        let high = min(range.upperBound, half - 2)
        var best = low
        var bestValue = -Double.infinity
        if low <= high {
            for l in low...high {
                let v = re[l < 0 ? n + l : l]
                if v > bestValue {
                    bestValue = v
                    best = l
                }
            }
        }
        // Newton on r(τ) ∝ Σₖ wₖ·Re(Cₖe^{iωₖτ}) over k = 0 … N/2 (wₖ = ½ at DC and Nyquist, 1 between)
        // near the whole-frame peak: r'(τ) ∝ −Σ wₖωₖ·Im(Cₖe^{iωₖτ}), r''(τ) ∝ −Σ wₖωₖ²·Re(Cₖe^{iωₖτ});
        // the constant factor does not move the maximum.
        var tau = Double(best)
        for _ in 0..<8 {
            let theta = 2 * Double.pi * tau / Double(n)
            let (stepC, stepS) = (cos(theta), sin(theta))
            var (ec, es) = (1.0, 0.0)
            var d1 = 0.0
            var d2 = 0.0
            for k in 0...half {
                let weight = k == 0 || k == half ? 0.5 : 1.0
                let omega = 2 * Double.pi * Double(k) / Double(n)
                // C·e^{iωτ}
                let pr = cre[k] * ec - cim[k] * es
                let pi = cre[k] * es + cim[k] * ec
                d1 -= weight * omega * pi
                d2 -= weight * omega * omega * pr
                (ec, es) = (ec * stepC - es * stepS, ec * stepS + es * stepC)
            }
            guard d2 < 0 else { break }
            let next = min(max(tau - d1 / d2, Double(best) - 1), Double(best) + 1)
            if abs(next - tau) < 1e-7 {
                tau = next
                break
            }
            tau = next
        }
        return tau
    }
}

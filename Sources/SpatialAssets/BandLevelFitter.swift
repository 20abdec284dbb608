// Control side (load time). Refines a short filter so that its third-octave and octave band levels are
// those of the impulse response it stands for: Levenberg-Marquardt steps on the taps.

#if canImport(Glibc)
    import Glibc
#endif

/// Fits the band levels of a short filter to a reference's.
///
/// A minimum-phase filter cut to a millisecond or so has the reference's magnitude only roughly: the cut
/// smooths its spectrum over several hundred hertz, and what it loses differs from band to band (up to
/// 4–5 dB below 1 kHz for 64 taps at 48 kHz). Listeners compare band levels, so this moves the taps until
/// those match. The residual of band b is wᵦ·(10·log₁₀ Pᵦ(h) − Rᵦ): Pᵦ is the filter's mean power over
/// the band, Rᵦ the reference's level (dB) over the same band on a 4096-point grid (finer for longer
/// references). Bands: third octaves from 200 Hz to 16 kHz, continued to min(24 kHz, Nyquist) (the top
/// octave of an interaural level difference reaches 22.6 kHz), weight 1; the octaves 500 Hz–16 kHz,
/// weight 3, so each ear's octave levels, hence the pair's interaural level differences, match closely
/// where a third-octave compromise would leave them off; and 20–200 Hz at weight 0.1, which keeps the
/// low end from drifting. The top bands, as long as each lies more than 60 dB below the reference's
/// loudest, are fitted to that floor (a set at a lower rate than the engine's has nothing there). The filter's power in a band is averaged over at most `binsPerBand` bins spread
/// evenly across it, each standing for its share of the band's bins (a filter of a few dozen taps has
/// no detail finer than that).
///
/// Each step is a Levenberg-Marquardt step of least norm, Δ = −Jᵀ(JJᵀ + λ·d̄·I)⁻¹r (fewer residuals than
/// taps; d̄ the mean of JJᵀ's diagonal): it changes the taps as little as the correction needs, so the
/// filter keeps most of its minimum-phase timing. λ grows tenfold when a step does not lower the cost
/// and shrinks threefold when it does. Fitting stops when every residual above 200 Hz is below 0.15 dB,
/// when a step gains less than 2 %, or after `iterations` steps; a filter then still off by more than
/// 0.75 dB in a third-octave band or 0.25 dB in an octave band (mostly contralateral ears) keeps going,
/// stopping only when a step gains less than 0.1 %, to at most `iterations + hardIterations` steps.
///
/// Not thread-safe; allocates its buffers once.
final class BandLevelFitter {
    let length: Int
    let iterations: Int
    let hardIterations: Int
    static let hardResidual = 0.75
    static let hardOctaveResidual = 0.25
    private let gridSize: Int
    private let fft: ComplexFFT
    private let re: UnsafeMutablePointer<Double>
    private let im: UnsafeMutablePointer<Double>
    /// The bins the filter is evaluated at: cos/sin(ωₖ·n) for each (bin-major), the contiguous band and
    /// the octave band (−1: none) of each, and how many grid bins each stands for.
    private let binCount: Int
    private let cosines: UnsafeMutablePointer<Double>
    private let sines: UnsafeMutablePointer<Double>
    private let thirdOf: [Int]
    private let octaveOf: [Int]
    private let spans: UnsafeMutablePointer<Double>
    /// Per band: its grid bins (for the reference), the grid bins its evaluated bins stand for, its weight.
    private let bandRanges: [Range<Int>]
    private let bandSamples: [Double]
    private let baseWeights: [Double]
    private var weights: [Double]
    /// Added to the reference's level of each octave band (dB) while fitting: `fit(_:to:count:octaveOffsets:)`.
    private var octaveOffsets: [Double] = []
    /// The top contiguous bands, as long as each is more than this far below the reference's loudest
    /// band, are fitted to that floor instead of their own level: a set measured at a lower rate than the
    /// engine's, resampled, has nothing above its own Nyquist, and fitting a short filter to a hundred
    /// decibels down there would spoil every other band.
    static let silentBandDecibels = 60.0
    /// The first octave band (the contiguous bands come before).
    private let octaveStart: Int
    /// The end of the third octaves up to 16 kHz (the contiguous bands 1 ..< this).
    private let thirdOctaveEnd: Int
    private let reference: UnsafeMutablePointer<Double>
    private var referenceSource: UnsafePointer<Float>?
    // Work buffers: the filter's spectrum at the evaluated bins, band powers, residuals, the Jacobian
    // (bands × taps) and JJᵀ, the damped normal matrix and its solution, the taps and a candidate step,
    // and a copy of the current point's spectrum, powers and residuals (restored after a failed step).
    private let hr: UnsafeMutablePointer<Double>
    private let hi: UnsafeMutablePointer<Double>
    private let powers: UnsafeMutablePointer<Double>
    private let residuals: UnsafeMutablePointer<Double>
    private let jacobian: UnsafeMutablePointer<Double>
    private let normal: UnsafeMutablePointer<Double>
    private let gram: UnsafeMutablePointer<Double>
    private var gramTrace = 0.0
    private let saved: UnsafeMutablePointer<Double>
    private let solution: UnsafeMutablePointer<Double>
    private let taps: UnsafeMutablePointer<Double>
    private let trial: UnsafeMutablePointer<Double>

    /// A fitter for filters of `length` taps at `sampleRate` against references of up to `referenceLength`.
    init(
        length: Int, referenceLength: Int, sampleRate: Double, iterations: Int = 20, hardIterations: Int = 10,
        binsPerBand: Int = 12
    ) {
        self.length = length
        self.iterations = iterations
        self.hardIterations = hardIterations
        var g = 4096
        while g < referenceLength { g <<= 1 }
        gridSize = g
        fft = ComplexFFT(size: g)
        re = .allocate(capacity: g)
        im = .allocate(capacity: g)
        let binHz = sampleRate / Double(g)
        let nyquist = sampleRate / 2
        func bins(_ low: Double, _ high: Double) -> Range<Int> {
            let a = Int((low / binHz).rounded(.up))
            return a..<max(a + 1, Int((high / binHz).rounded(.up)))
        }
        // Contiguous bands: 20–200 Hz, third octaves 200 Hz–16 kHz, then on to min(24 kHz, Nyquist).
        var ranges = [bins(20, 200)]
        var w = [0.1]
        let top = min(24_000, nyquist - binHz)
        var low = 200.0
        while low < top - 1 {
            let high = min(low * pow(2, 1.0 / 3), low < 16_000 ? 16_000 : top)
            ranges.append(bins(low, high))
            w.append(1)
            low = high
        }
        let contiguous = ranges.count
        octaveStart = contiguous
        let bin16k = Int((16_000 / binHz).rounded(.up))
        thirdOctaveEnd = min(contiguous, 1 + ranges.dropFirst().prefix { $0.upperBound <= bin16k }.count)
        for c in [500.0, 1000, 2000, 4000, 8000, 16_000] where c / 2.0.squareRoot() < nyquist {
            ranges.append(bins(c / 2.0.squareRoot(), min(c * 2.0.squareRoot(), nyquist - binHz)))
            w.append(3)
        }
        // Evaluated bins: up to `binsPerBand` spread evenly over each contiguous band.
        var chosen: [Int] = []
        var third: [Int] = []
        var represented: [Double] = []
        for (b, r) in ranges.prefix(contiguous).enumerated() {
            let count = min(r.count, binsPerBand)
            for j in 0..<count {
                chosen.append(r.lowerBound + (j * r.count + r.count / 2) / count)
                third.append(b)
                represented.append(Double(r.count) / Double(count))
            }
        }
        var samples = [Double](repeating: 0, count: ranges.count)
        var octave = [Int](repeating: -1, count: chosen.count)
        for (i, k) in chosen.enumerated() {
            samples[third[i]] += represented[i]
            for b in contiguous..<ranges.count where ranges[b].contains(k) {
                octave[i] = b
                samples[b] += represented[i]
            }
        }
        // An octave band too narrow to hold an evaluated bin is left out.
        for b in contiguous..<ranges.count where samples[b] == 0 { w[b] = 0 }
        binCount = chosen.count
        thirdOf = third
        octaveOf = octave
        bandRanges = ranges
        bandSamples = samples
        baseWeights = w
        weights = w
        spans = .allocate(capacity: binCount)
        cosines = .allocate(capacity: binCount * length)
        sines = .allocate(capacity: binCount * length)
        for (i, k) in chosen.enumerated() {
            spans[i] = represented[i]
            let omega = 2 * Double.pi * Double(k) / Double(g)
            for n in 0..<length {
                cosines[i * length + n] = cos(omega * Double(n))
                sines[i * length + n] = sin(omega * Double(n))
            }
        }
        let bands = ranges.count
        reference = .allocate(capacity: bands)
        hr = .allocate(capacity: binCount)
        hi = .allocate(capacity: binCount)
        powers = .allocate(capacity: bands)
        residuals = .allocate(capacity: bands)
        jacobian = .allocate(capacity: bands * length)
        normal = .allocate(capacity: bands * bands)
        gram = .allocate(capacity: bands * bands)
        saved = .allocate(capacity: 2 * binCount + 2 * bands)
        solution = .allocate(capacity: bands)
        taps = .allocate(capacity: length)
        trial = .allocate(capacity: length)
    }

    deinit {
        for p in [
            re, im, cosines, sines, spans, reference, hr, hi, powers, residuals, jacobian, normal, gram, saved,
            solution,
            taps,
            trial
        ] {
            p.deallocate()
        }
    }

    /// Refines `filter` (`length` taps) in place towards the band levels of `input` (`count` taps).
    /// `octaveOffsets` (dB, one per octave band 500 Hz–16 kHz) move the octave bands' targets from the
    /// input's levels, for the duration of this fit.
    func fit(
        _ filter: UnsafeMutablePointer<Float>, to input: UnsafePointer<Float>, count: Int,
        octaveOffsets: [Double] = []
    ) {
        if referenceSource != input { measureReference(input, count: count) }
        self.octaveOffsets = octaveOffsets
        defer { self.octaveOffsets = [] }
        for n in 0..<length { taps[n] = Double(filter[n]) }
        var cost = evaluate(taps)
        var lambda = 1e-3
        var step = 0
        var budget = iterations
        var stall = 0.98
        while step < budget {
            if maximumResidual() < 0.15 { break }
            buildJacobian()
            save()
            let previous = cost
            var improved = false
            for _ in 0..<8 {
                solveStep(lambda: lambda)
                let trialCost = evaluate(trial)
                if trialCost < cost {
                    cost = trialCost
                    for n in 0..<length { taps[n] = trial[n] }
                    lambda = max(lambda / 3, 1e-7)
                    improved = true
                    break
                }
                lambda *= 10
                restore()
            }
            if !improved { break }
            step += 1
            if cost > previous * stall || step == budget {
                guard budget == iterations, needsHardFit() else { break }
                budget = iterations + hardIterations
                stall = 0.999
            }
        }
        for n in 0..<length { filter[n] = Float(taps[n]) }
    }

    /// How far `filter`'s band levels are from `input`'s (dB, filter minus input, unweighted): the RMS
    /// over the third octaves 200 Hz–16 kHz, each octave band 500 Hz–16 kHz (0 where left out), and the
    /// whole band (energy).
    func errors(_ filter: UnsafePointer<Float>, to input: UnsafePointer<Float>, count: Int) -> (
        thirdOctaveRMS: Double, octaves: [Double], broadband: Double
    ) {
        if referenceSource != input { measureReference(input, count: count) }
        for n in 0..<length { trial[n] = Double(filter[n]) }
        _ = evaluate(trial)
        var sum = 0.0
        var counted = 0
        for b in 1..<thirdOctaveEnd where weights[b] > 0 {
            let e = residuals[b] / weights[b]
            sum += e * e
            counted += 1
        }
        let octaves = (octaveStart..<bandRanges.count).map { weights[$0] > 0 ? residuals[$0] / weights[$0] : 0 }
        var filterEnergy = 0.0
        for n in 0..<length { filterEnergy += trial[n] * trial[n] }
        var inputEnergy = 0.0
        for n in 0..<count { inputEnergy += Double(input[n]) * Double(input[n]) }
        let broadband = 10 * log10(max(filterEnergy, 1e-30) / max(inputEnergy, 1e-30))
        return ((sum / Double(max(1, counted))).squareRoot(), octaves, broadband)
    }

    private func measureReference(_ input: UnsafePointer<Float>, count: Int) {
        referenceSource = input
        for i in 0..<gridSize {
            re[i] = i < count ? Double(input[i]) : 0
            im[i] = 0
        }
        fft.transform(re, im, inverse: false)
        for (b, r) in bandRanges.enumerated() {
            var p = 0.0
            for k in r { p += re[k] * re[k] + im[k] * im[k] }
            reference[b] = 10 * log10(max(p / Double(r.count), 1e-30))
        }
        var loudest = -Double.infinity
        for b in 0..<bandRanges.count where baseWeights[b] > 0 { loudest = max(loudest, reference[b]) }
        let floor = loudest - Self.silentBandDecibels
        var b = octaveStart - 1
        while b > 0, reference[b] < floor {
            reference[b] = floor
            b -= 1
        }
    }

    /// The spectrum of `x` at the evaluated bins, the band powers and residuals; returns the cost Σ r².
    private func evaluate(_ x: UnsafeMutablePointer<Double>) -> Double {
        let bands = bandRanges.count
        for b in 0..<bands { powers[b] = 0 }
        for i in 0..<binCount {
            let c = cosines + i * length
            let s = sines + i * length
            let a = Self.dot(x, c, length)
            let m = -Self.dot(x, s, length)
            hr[i] = a
            hi[i] = m
            let p = (a * a + m * m) * spans[i]
            powers[thirdOf[i]] += p
            if octaveOf[i] >= 0 { powers[octaveOf[i]] += p }
        }
        var cost = 0.0
        for b in 0..<bands {
            powers[b] = max(powers[b] / max(bandSamples[b], 1), 1e-30)
            let o = b - octaveStart
            let offset = o >= 0 && o < octaveOffsets.count ? octaveOffsets[o] : 0
            residuals[b] = weights[b] * (10 * log10(powers[b]) - reference[b] - offset)
            cost += residuals[b] * residuals[b]
        }
        return cost
    }

    /// Keeps the current point's spectrum, band powers and residuals (`restore` puts them back).
    private func save() {
        let bands = bandRanges.count
        saved.update(from: hr, count: binCount)
        (saved + binCount).update(from: hi, count: binCount)
        (saved + 2 * binCount).update(from: powers, count: bands)
        (saved + 2 * binCount + bands).update(from: residuals, count: bands)
    }

    private func restore() {
        let bands = bandRanges.count
        hr.update(from: saved, count: binCount)
        hi.update(from: saved + binCount, count: binCount)
        powers.update(from: saved + 2 * binCount, count: bands)
        residuals.update(from: saved + 2 * binCount + bands, count: bands)
    }

    /// Σ u[n]·v[n] over `count` terms, in four interleaved sums (independent additions pipeline).
    private static func dot(_ u: UnsafePointer<Double>, _ v: UnsafePointer<Double>, _ count: Int) -> Double {
        var (s0, s1, s2, s3) = (0.0, 0.0, 0.0, 0.0)
        var n = 0
        while n + 4 <= count {
            s0 += u[n] * v[n]
            s1 += u[n + 1] * v[n + 1]
            s2 += u[n + 2] * v[n + 2]
            s3 += u[n + 3] * v[n + 3]
            n += 4
        }
        while n < count {
            s0 += u[n] * v[n]
            n += 1
        }
        return (s0 + s1) + (s2 + s3)
    }

    /// The largest band error above 200 Hz (dB, unweighted).
    private func maximumResidual() -> Double {
        var m = 0.0
        for b in 1..<bandRanges.count where weights[b] > 0 { m = max(m, abs(residuals[b] / weights[b])) }
        return m
    }

    /// Whether a third-octave band is still off by more than 0.75 dB, or an octave band by more than
    /// 0.25 dB (half of the 0.5 dB that an interaural level difference may be off by).
    private func needsHardFit() -> Bool {
        for b in 1..<bandRanges.count where weights[b] > 0 {
            let limit = b < octaveStart ? Self.hardResidual : Self.hardOctaveResidual
            if abs(residuals[b] / weights[b]) > limit { return true }
        }
        return false
    }

    /// J[b][n] = wᵦ·(10/ln 10)/(Pᵦ·|b|)·Σₖ 2·sₖ·(Re Hₖ·cos ωₖn − Im Hₖ·sin ωₖn) at the current taps (sₖ: the
    /// grid bins bin k stands for), and JJᵀ.
    private func buildJacobian() {
        let bands = bandRanges.count
        for i in 0..<(bands * length) { jacobian[i] = 0 }
        let scale = 20 / log(10.0)
        for i in 0..<binCount {
            let c = cosines + i * length
            let s = sines + i * length
            let (a, m) = (hr[i] * spans[i], hi[i] * spans[i])
            for band in [thirdOf[i], octaveOf[i]] where band >= 0 && weights[band] > 0 {
                let k = weights[band] * scale / (powers[band] * bandSamples[band])
                let row = jacobian + band * length
                for n in 0..<length { row[n] += k * (a * c[n] - m * s[n]) }
            }
        }
        gramTrace = 0
        for i in 0..<bands {
            for j in 0...i {
                let s = Self.dot(jacobian + i * length, jacobian + j * length, length)
                gram[i * bands + j] = s
                gram[j * bands + i] = s
            }
            gramTrace += gram[i * bands + i]
        }
    }

    /// trial = taps − Jᵀ(JJᵀ + λ·d̄·I)⁻¹r, by Cholesky.
    private func solveStep(lambda: Double) {
        let bands = bandRanges.count
        normal.update(from: gram, count: bands * bands)
        let damping = lambda * max(gramTrace / Double(bands), 1e-12)
        for i in 0..<bands { normal[i * bands + i] += damping }
        // Cholesky in place (lower triangle), then forward and back substitution.
        for j in 0..<bands {
            var d = normal[j * bands + j]
            for k in 0..<j { d -= normal[j * bands + k] * normal[j * bands + k] }
            let l = max(d, 1e-300).squareRoot()
            normal[j * bands + j] = l
            for i in (j + 1)..<bands {
                var s = normal[i * bands + j]
                for k in 0..<j { s -= normal[i * bands + k] * normal[j * bands + k] }
                normal[i * bands + j] = s / l
            }
        }
        for i in 0..<bands {
            var s = residuals[i]
            for k in 0..<i { s -= normal[i * bands + k] * solution[k] }
            solution[i] = s / normal[i * bands + i]
        }
        for i in stride(from: bands - 1, through: 0, by: -1) {
            var s = solution[i]
            for k in (i + 1)..<bands { s -= normal[k * bands + i] * solution[k] }
            solution[i] = s / normal[i * bands + i]
        }
        for n in 0..<length { trial[n] = taps[n] }
        for b in 0..<bands where solution[b] != 0 {
            let row = jacobian + b * length
            let y = solution[b]
            for n in 0..<length { trial[n] -= row[n] * y }
        }
    }
}

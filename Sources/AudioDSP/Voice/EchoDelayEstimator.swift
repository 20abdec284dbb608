// Control side: init, deallocate. Render side: push, and the read-only properties (no allocation, no
// locks; one FFT-based correlation every 128 ms, and a search of its 60 ms before the delay).

/// Fourth-order Butterworth low-pass as two RBJ biquads (R. Bristow-Johnson, "Cookbook formulae for
/// audio EQ biquad filter coefficients"; Q = 0.5412 and 1.3066 for the Butterworth pair). The
/// anti-aliasing filter in front of the delay tracker's decimation. Float state, direct form I.
@usableFromInline
struct DecimationLowPass {
    @usableFromInline var b0: (Float, Float) = (1, 1)
    @usableFromInline var b1: (Float, Float) = (0, 0)
    @usableFromInline var a1: (Float, Float) = (0, 0)
    @usableFromInline var a2: (Float, Float) = (0, 0)
    @usableFromInline var x1: (Float, Float) = (0, 0)
    @usableFromInline var x2: (Float, Float) = (0, 0)
    @usableFromInline var y1: (Float, Float) = (0, 0)
    @usableFromInline var y2: (Float, Float) = (0, 0)

    init(cutoff: Double, sampleRate: Double) {
        func section(_ q: Double) -> (b0: Float, b1: Float, a1: Float, a2: Float) {
            let w = 2 * EffectMath.pi * min(cutoff, 0.45 * sampleRate) / sampleRate
            let (s, c) = EffectMath.sinCos(w)
            let alpha = s / (2 * q)
            let a0 = 1 + alpha
            return (Float((1 - c) / 2 / a0), Float((1 - c) / a0), Float(-2 * c / a0), Float((1 - alpha) / a0))
        }
        let p = section(0.541_196_1)
        let q = section(1.306_563_0)
        b0 = (p.b0, q.b0)
        b1 = (p.b1, q.b1)
        a1 = (p.a1, q.a1)
        a2 = (p.a2, q.a2)
    }

    /// Silence in the filter's state.
    mutating func reset() {
        x1 = (0, 0)
        x2 = (0, 0)
        y1 = (0, 0)
        y2 = (0, 0)
    }

    /// y = b0·x + b1·x1 + b0·x2 − a1·y1 − a2·y2 for each section (b2 = b0 for a low-pass).
    @inlinable
    mutating func process(_ x: Float) -> Float {
        let u = b0.0 * (x + x2.0) + b1.0 * x1.0 - a1.0 * y1.0 - a2.0 * y2.0
        x2.0 = x1.0
        x1.0 = x
        y2.0 = y1.0
        y1.0 = u + 1e-25 - 1e-25
        let v = b0.1 * (u + x2.1) + b1.1 * x1.1 - a1.1 * y1.1 - a2.1 * y2.1
        x2.1 = x1.1
        x1.1 = u
        y2.1 = y1.1
        y1.1 = v + 1e-25 - 1e-25
        return v
    }
}

/// Tracks the bulk delay between the loudspeaker reference and its echo at the microphone by the
/// generalized cross-correlation with phase transform, GCC-PHAT (C. H. Knapp and G. C. Carter, "The
/// generalized correlation method for estimation of time delay", IEEE Trans. ASSP 24(4), 1976).
///
/// Both signals are decimated to about 8 kHz by summing each group of `decimation` samples, then
/// low-passed at 3.4 kHz. What the box sum lets alias does so identically in both signals, with the same
/// delay, so it does not move the correlation peak; the PHAT band stops at 3.4 kHz. Every 128 ms (`hop`, 1024
/// decimated samples; the low-complexity processor passes 2048, every 256 ms), the latest 256 ms of
/// microphone are correlated against the reference over lags 0 … `maximumDelay` through one 8192-point FFT of
/// each; the cross-spectrum is averaged over blocks in which the reference is active (weight 0.7 per block: a
/// change of delay dominates the average within about 0.5 s at 128 ms), then whitened (PHAT) between 100 Hz
/// and 3.4 kHz and transformed back. The highest peak, refined by a parabola through its neighbours, is a
/// candidate; it is accepted when its peak stands out of the correlation's RMS (`confidence`) and, once a
/// delay is known, when two successive blocks agree within 0.5 ms. Resolution before refinement: 0.125 ms.
/// Once a delay is known, a block whose reference repeats (`repeats()`: a loop, a held tone) is left out:
/// it correlates at every repetition, and the whitening of its line spectrum makes peaks of the leakage.
///
/// Cost at 48 kHz: two additions per input sample, the filters at the decimated rate, and four
/// 8192-point FFTs every hop (well under 0.1 % of a core).
public struct EchoDelayEstimator {
    public let sampleRate: Double
    /// Input samples per decimated sample.
    public let decimation: Int
    /// Largest lag searched, in decimated samples.
    @usableFromInline let maximumLag: Int
    @usableFromInline let blockLength: Int
    @usableFromInline let hop: Int
    @usableFromInline let fft: VoiceFFT
    @usableFromInline let ringLength: Int
    @usableFromInline let referenceRing: UnsafeMutablePointer<Float>
    @usableFromInline let micRing: UnsafeMutablePointer<Float>
    @usableFromInline var ringIndex = 0
    @usableFromInline var phase = 0
    @usableFromInline var sinceHop = 0
    @usableFromInline var referenceSum: Float = 0
    @usableFromInline var micSum: Float = 0
    @usableFromInline var referenceFilter: DecimationLowPass
    @usableFromInline var micFilter: DecimationLowPass
    @usableFromInline let timeBuffer: UnsafeMutablePointer<Float>
    @usableFromInline let refRe: UnsafeMutablePointer<Float>
    @usableFromInline let refIm: UnsafeMutablePointer<Float>
    @usableFromInline let micRe: UnsafeMutablePointer<Float>
    @usableFromInline let micIm: UnsafeMutablePointer<Float>
    @usableFromInline let crossRe: UnsafeMutablePointer<Float>
    @usableFromInline let crossIm: UnsafeMutablePointer<Float>
    @usableFromInline let lowBin: Int
    @usableFromInline let highBin: Int
    @usableFromInline var averagedBlocks = 0
    @usableFromInline var candidate = -1.0
    /// The accepted delay in input samples; negative until the first one.
    public private(set) var delaySamples: Double = -1
    /// Peak-to-RMS ratio of the latest correlation.
    public private(set) var confidence: Float = 0
    /// Counts accepted changes of `delaySamples`.
    public private(set) var generation = 0
    /// Successive correlations that agreed with the accepted delay (1 for a first, unconfirmed estimate).
    public private(set) var agreements = 0
    /// A second echo path before the accepted delay, in input samples; negative when the latest
    /// correlation showed none. The highest peak 2 ms … `earlierPeakSpan` before the accepted one that
    /// stands out of the correlation's RMS as a delay does and reaches `earlierPeakShare` of the highest
    /// peak, in two successive correlations that confirmed the accepted delay (`agreements` ≥ 2), or in
    /// one when it is where the accepted delay was before its latest change. With two loudspeakers at
    /// different distances playing different signals: the nearer one's echo while the farther one
    /// carries more (`VoiceProcessorKernel.nearerLoudspeakerDelay`).
    public private(set) var earlierPeakSamples: Double = -1
    /// Whether `earlierPeakSamples` was found in two successive correlations (not only where the
    /// accepted delay was before, which after a jump of the echo path may be what is left of the old one).
    public private(set) var earlierPeakRecurs = false
    /// How far before the accepted delay an earlier peak is looked for, in decimated samples (60 ms).
    @usableFromInline let earlierPeakSpan: Int
    @usableFromInline let earlierPeakShare: Float = 0.3
    /// The previous correlation's earlier peak (input samples, −1 for none): one is shown once two
    /// successive correlations agree on it within 0.5 ms.
    @usableFromInline var earlierCandidate = -1.0
    /// The accepted delay before the latest change (−1 before a change): an earlier peak there is the
    /// path the tracker heard before, still present, and is shown at once.
    @usableFromInline var previousDelaySamples = -1.0
    /// Reference level (mean square, decimated) below which a block does not enter the average.
    @usableFromInline let activityThreshold: Float = 1e-7
    @usableFromInline let confidenceThreshold: Float = 7
    /// The normalised autocorrelation at which the reference counts as repeating.
    @usableFromInline let repetitionCorrelation: Float = 0.9
    /// The latest correlated block's reference repeats (`repeats()`): it moved no delay.
    public private(set) var referenceRepeats = false

    /// `hop`: decimated samples between correlations (at most the 2048 of a block).
    public init(sampleRate: Double, maximumDelaySeconds: Double, hop: Int = 1024) {
        precondition(hop > 0 && hop <= 2048)
        self.sampleRate = sampleRate
        decimation = max(1, Int((sampleRate / 8000).rounded()))
        let decimatedRate = sampleRate / Double(decimation)
        blockLength = 2048
        self.hop = hop
        maximumLag = min(4096, max(64, Int(maximumDelaySeconds * decimatedRate)))
        earlierPeakSpan = Int(0.060 * decimatedRate)
        var size = 1024
        while size < blockLength + maximumLag { size *= 2 }
        fft = VoiceFFT(size: size)
        ringLength = size
        referenceRing = .allocate(capacity: size)
        referenceRing.initialize(repeating: 0, count: size)
        micRing = .allocate(capacity: size)
        micRing.initialize(repeating: 0, count: size)
        referenceFilter = DecimationLowPass(cutoff: 3400, sampleRate: decimatedRate)
        micFilter = DecimationLowPass(cutoff: 3400, sampleRate: decimatedRate)
        timeBuffer = .allocate(capacity: size)
        let bins = size / 2 + 1
        refRe = .allocate(capacity: bins)
        refIm = .allocate(capacity: bins)
        micRe = .allocate(capacity: bins)
        micIm = .allocate(capacity: bins)
        crossRe = .allocate(capacity: bins)
        crossRe.initialize(repeating: 0, count: bins)
        crossIm = .allocate(capacity: bins)
        crossIm.initialize(repeating: 0, count: bins)
        lowBin = max(1, Int(100 * Double(size) / decimatedRate))
        highBin = min(bins - 1, Int(3400 * Double(size) / decimatedRate))
    }

    public func deallocate() {
        fft.deallocate()
        referenceRing.deallocate()
        micRing.deallocate()
        timeBuffer.deallocate()
        refRe.deallocate()
        refIm.deallocate()
        micRe.deallocate()
        micIm.deallocate()
        crossRe.deallocate()
        crossIm.deallocate()
    }

    /// Forgets everything heard: the next delay comes from what is pushed from now on.
    public mutating func reset() {
        for i in 0..<ringLength {
            referenceRing[i] = 0
            micRing[i] = 0
        }
        for k in 0..<(ringLength / 2 + 1) {
            crossRe[k] = 0
            crossIm[k] = 0
        }
        ringIndex = 0
        phase = 0
        sinceHop = 0
        referenceSum = 0
        micSum = 0
        referenceFilter.reset()
        micFilter.reset()
        averagedBlocks = 0
        candidate = -1
        delaySamples = -1
        confidence = 0
        agreements = 0
        earlierPeakSamples = -1
        earlierPeakRecurs = false
        earlierCandidate = -1
        previousDelaySamples = -1
        referenceRepeats = false
    }

    /// The accepted delay in milliseconds, or −1.
    public var delayMilliseconds: Double { delaySamples < 0 ? -1 : delaySamples * 1000 / sampleRate }

    /// Feeds `count` samples of the reference (as played) and of the microphone (as captured at the same
    /// time). Runs a correlation whenever a hop is complete.
    @inlinable
    public mutating func push(reference: UnsafePointer<Float>, mic: UnsafePointer<Float>, count: Int) {
        for i in 0..<count {
            referenceSum += reference[i]
            micSum += mic[i]
            phase += 1
            if phase < decimation { continue }
            phase = 0
            let r = referenceFilter.process(referenceSum)
            let m = micFilter.process(micSum)
            referenceSum = 0
            micSum = 0
            referenceRing[ringIndex] = r
            micRing[ringIndex] = m
            ringIndex = (ringIndex + 1) & (ringLength - 1)
            sinceHop += 1
            if sinceHop == hop {
                sinceHop = 0
                correlate()
            }
        }
    }

    @usableFromInline
    mutating func correlate() {
        let n = ringLength
        let span = blockLength + maximumLag
        // Reference: the latest `span` samples, oldest first, zero-padded.
        var energy: Float = 0
        for j in 0..<n {
            if j < span {
                let v = referenceRing[(ringIndex - span + j) & (n - 1)]
                timeBuffer[j] = v
                if j >= maximumLag { energy += v * v }
            } else {
                timeBuffer[j] = 0
            }
        }
        energy /= Float(blockLength)
        if energy < activityThreshold { return }
        fft.forward(timeBuffer, re: refRe, im: refIm)
        referenceRepeats = repeats()
        // A reference that repeats (a loop, a held tone) correlates at every repetition, and GCC-PHAT's
        // whitening of its line spectrum raises the leakage between the lines into peaks of its own:
        // once a delay is known, such a block is kept out of the average.
        if referenceRepeats && delaySamples >= 0 {
            earlierPeakSamples = -1
            earlierPeakRecurs = false
            earlierCandidate = -1
            return
        }
        // Microphone: the latest `blockLength` samples at offsets maximumLag ..< span.
        for j in 0..<n {
            timeBuffer[j] = j >= maximumLag && j < span ? micRing[(ringIndex - span + j) & (n - 1)] : 0
        }
        fft.forward(timeBuffer, re: micRe, im: micIm)
        let weight: Float = averagedBlocks == 0 ? 1 : 0.3
        averagedBlocks += 1
        var total: Float = 0
        for k in lowBin...highBin {
            let cr = micRe[k] * refRe[k] + micIm[k] * refIm[k]
            let ci = micIm[k] * refRe[k] - micRe[k] * refIm[k]
            // Each block's cross-spectrum is whitened before it is averaged, so one loud block does not
            // outweigh the others.
            let magnitude = (cr * cr + ci * ci).squareRoot() + 1e-20
            crossRe[k] += weight * (cr / magnitude - crossRe[k])
            crossIm[k] += weight * (ci / magnitude - crossIm[k])
            total += crossRe[k] * crossRe[k] + crossIm[k] * crossIm[k]
        }
        if total <= 0 { return }
        // PHAT on the average, inverse transform: the correlation at lag τ sits at index τ.
        for k in 0...(n / 2) {
            if k < lowBin || k > highBin {
                refRe[k] = 0
                refIm[k] = 0
            } else {
                let magnitude = (crossRe[k] * crossRe[k] + crossIm[k] * crossIm[k]).squareRoot() + 1e-20
                refRe[k] = crossRe[k] / magnitude
                refIm[k] = crossIm[k] / magnitude
            }
        }
        fft.inverse(re: refRe, im: refIm, timeBuffer)
        var best = 0
        var bestValue: Float = -1
        var sumSquares: Float = 0
        for lag in 0...maximumLag {
            let v = timeBuffer[lag]
            sumSquares += v * v
            if abs(v) > bestValue {
                bestValue = abs(v)
                best = lag
            }
        }
        let rms = (sumSquares / Float(maximumLag + 1)).squareRoot() + 1e-20
        confidence = bestValue / rms
        earlierPeakSamples = -1
        earlierPeakRecurs = false
        if confidence < confidenceThreshold {
            earlierCandidate = -1
            return
        }
        var refined = Double(best)
        if best > 0 && best < maximumLag {
            let a = abs(timeBuffer[best - 1])
            let b = abs(timeBuffer[best])
            let c = abs(timeBuffer[best + 1])
            let denominator = a - 2 * b + c
            if denominator < 0 { refined += Double(0.5 * (a - c) / denominator) }
        }
        let samples = refined * Double(decimation)
        let agreement = 0.0005 * sampleRate
        let agrees = candidate >= 0 && abs(samples - candidate) <= agreement
        candidate = samples
        if delaySamples >= 0 && abs(samples - delaySamples) <= agreement {
            agreements += 1
        } else if agrees {
            agreements = 2
        } else if delaySamples < 0 {
            agreements = 1
        }
        if delaySamples < 0 || agrees {
            if delaySamples < 0 || abs(samples - delaySamples) > 0.25 * Double(decimation) {
                if delaySamples < 0 || abs(samples - delaySamples) > agreement {
                    generation += 1
                    previousDelaySamples = delaySamples
                }
                delaySamples = samples
            }
        }
        // Not from a first correlation alone: one block's sidelobes reached the share, and a sidelobe of
        // two moves from one correlation to the next.
        let earlier =
            abs(samples - delaySamples) <= agreement && agreements >= 2
            ? earlierPeak(before: best, value: bestValue, rms: rms) : -1
        let recurring = earlierCandidate >= 0 && abs(earlier - earlierCandidate) <= agreement
        let confirmed = recurring || previousDelaySamples >= 0 && abs(earlier - previousDelaySamples) <= agreement
        earlierPeakRecurs = false
        if earlier >= 0 && confirmed {
            earlierPeakSamples = earlier
            earlierPeakRecurs = recurring
        }
        earlierCandidate = earlier
    }

    /// Whether the reference spectrum in `refRe`, `refIm` (the latest `blockLength + maximumLag`
    /// decimated samples) is that of a repeating signal: its autocorrelation in the tracker's band,
    /// normalised for the overlap, reaches `repetitionCorrelation` at a lag after its first zero (up to
    /// the lags the zero padding keeps apart). Uses `micRe`, `micIm` and `timeBuffer` as scratch.
    @usableFromInline
    func repeats() -> Bool {
        let n = ringLength
        let span = blockLength + maximumLag
        for k in 0...(n / 2) {
            micRe[k] = k < lowBin || k > highBin ? 0 : refRe[k] * refRe[k] + refIm[k] * refIm[k]
            micIm[k] = 0
        }
        fft.inverse(re: micRe, im: micIm, timeBuffer)
        let zeroLag = timeBuffer[0]
        if zeroLag <= 0 { return false }
        let lastLag = min(n - span, span / 2)
        var lag = 1
        while lag < lastLag && timeBuffer[lag] > 0 { lag += 1 }
        while lag < lastLag {
            let overlap = Float(span) / Float(span - lag)
            if timeBuffer[lag] * overlap >= repetitionCorrelation * zeroLag { return true }
            lag += 1
        }
        return false
    }

    /// The highest peak 2 ms … `earlierPeakSpan` before lag `best` of the correlation in `timeBuffer`
    /// that reaches `confidenceThreshold` × `rms` and `earlierPeakShare` × `value`, in input samples;
    /// −1 when there is none.
    @usableFromInline
    func earlierPeak(before best: Int, value: Float, rms: Float) -> Double {
        let gap = max(1, Int(0.002 * sampleRate) / decimation)
        let last = best - gap
        let first = max(0, best - earlierPeakSpan)
        if last < first { return -1 }
        let floor = max(confidenceThreshold * rms, earlierPeakShare * value)
        var peak = -1
        var peakValue = floor
        for lag in first...last where abs(timeBuffer[lag]) >= peakValue {
            peakValue = abs(timeBuffer[lag])
            peak = lag
        }
        return peak < 0 ? -1 : Double(peak * decimation)
    }
}

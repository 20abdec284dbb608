// Control side: init, deallocate. Render side: process (no allocation, no locks).

/// The short-time spectral post-filter behind the linear echo canceller, for one microphone channel:
/// residual-echo suppression and, optionally, noise suppression, as one Wiener-type gain per bin.
///
/// Framing: sqrt-Hann windows of two frames, hop one frame, overlap-add (the squared windows sum to
/// one, so unity gains reconstruct the input exactly); latency one frame.
///
/// Interference per bin k, per frame:
/// - residual echo `R = over · max(η_k·|Y_k|², λ_k·L_k, κ_k·X_k, ν_k·T, w·X_k)`, over = 6. Each factor
///   is the regression of the error's power |E_k|² on one predictor, over about a second of frames in
///   which the far end talks and the near end does not (after the leakage estimate of J.-M. Valin, "On
///   adjusting the learning rate in frequency domain echo cancellation with double-talk", IEEE Trans.
///   ASLP 15(3), 2007, which speex computes once for all bins; here per bin):
///   - `Y` is the linear filter's echo estimate (η_k: its leakage, at least the all-bin leakage);
///   - `L` is a decaying sum of past |Y|² (the reverberation beyond the filter's length);
///   - `X` is the largest aligned-reference power in the span where the echo can be (`referencePeak`);
///   - `T` is the echo estimate's power summed over bins (a loudspeaker's distortion spreads energy
///     across bins; weighted by 0.1).
///   While the linear filter has not converged (at the start and after a change of delay), `X` also
///   enters unweighted (w = 1), so the echo is held down before the filter has learned it.
/// - noise `N`: a minimum-tracking estimate of the error's power (rises 2 dB/s, falls at once).
///
/// Gain: the decision-directed a-priori SNR (Y. Ephraim and D. Malah, "Speech enhancement using a
/// minimum mean-square error short-time spectral amplitude estimator", IEEE Trans. ASSP 32(6), 1984)
/// against R + 2N, G = ξ/(1 + ξ), with a floor weighted between the echo floor (−45 dB; −18 dB while
/// the near end talks) and the noise floor (−15 dB) by the share of each in the interference.
///
/// Cost at 48 kHz: three 1024-point real FFTs and about 120 flops per bin per frame.
public struct ResidualEchoSuppressor {
    public let frameLength: Int
    public let fftSize: Int
    public let binCount: Int
    /// Bins of 200 Hz … 4 kHz, where the coherence is measured.
    @usableFromInline let coherenceLow: Int
    @usableFromInline let coherenceHigh: Int
    @usableFromInline let fft: VoiceFFT
    @usableFromInline let window: UnsafeMutablePointer<Float>
    @usableFromInline let errorInput: UnsafeMutablePointer<Float>
    @usableFromInline let echoInput: UnsafeMutablePointer<Float>
    @usableFromInline let overlap: UnsafeMutablePointer<Float>
    @usableFromInline let time: UnsafeMutablePointer<Float>
    @usableFromInline let errorRe: UnsafeMutablePointer<Float>
    @usableFromInline let errorIm: UnsafeMutablePointer<Float>
    @usableFromInline let echoRe: UnsafeMutablePointer<Float>
    @usableFromInline let echoIm: UnsafeMutablePointer<Float>
    /// Per-bin state: 0 mean Pe, 1 mean Py, 2 mean Pe·Py, 3 mean Py², 4 noise, 5 previous |G|²·Pe / I,
    /// 6 late echo L, 7 mean L, 8 mean Pe·L, 9 mean L², 10 mean X, 11 mean Pe·X, 12 mean X²,
    /// 13 mean Pe·T (T: the echo estimate's power summed over bins, the distortion predictor),
    /// 14 smoothed |D|², 15 smoothed |Y|², 16 and 17 smoothed D·Y* (D = E + Y, the microphone).
    @usableFromInline let state: UnsafeMutablePointer<Float>
    @usableFromInline var frames = 0
    @usableFromInline var meanTotal: Float = 0
    @usableFromInline var meanTotal2: Float = 0
    @usableFromInline var meanErrorTotal: Float = 0
    @usableFromInline var meanErrorEcho: Float = 0
    /// Over-subtraction of the residual echo estimate.
    public var overSubtraction: Float = 6
    public var echoFloor: Float = 0.0056
    public var noiseFloor: Float = 0.18
    /// Largest leakage factor (echo estimate power to residual power).
    public var maximumLeakage: Float = 4
    /// Decay per frame of the late-echo predictor (−1.25 dB per 10 ms: a reverberation time of 0.5 s).
    public var lateDecay: Float = 0.75
    /// Weight of the reference-power predictor of the residual echo (0 disables it).
    public var referenceCoupling: Float = 1
    /// Weight of the broadband (distortion) predictor of the residual echo (0 disables it).
    public var distortionWeight: Float = 0.1
    /// The echo floor while the near end talks (less suppression keeps the talker continuous).
    public var doubleTalkEchoFloor: Float = 0.12
    /// Weight of the broadband leakage as the least per-bin leakage.
    public var globalLeakageWeight: Float = 1
    /// Smoothing of the decision-directed a-priori SNR.
    public var priorSmoothing: Float = 0.9
    /// Mean squares (per sample) of the latest frame: the error (post-filter input), the output, the
    /// estimated noise, the estimated residual echo, and the error in excess of noise and echo (the
    /// near-end talker's share).
    public private(set) var inputPower: Float = 0
    public private(set) var outputPower: Float = 0
    public private(set) var noisePower: Float = 0
    public private(set) var echoPower: Float = 0
    public private(set) var excessPower: Float = 0
    /// Coherence of the microphone with the echo estimate over the latest frames, weighted by the echo
    /// estimate's power: near 1 while only echo reaches the microphone, lower when the near end talks.
    public private(set) var echoCoherence: Float = 1

    public init(frameLength: Int) {
        self.frameLength = frameLength
        var size = 16
        while size < 2 * frameLength { size *= 2 }
        fftSize = size
        binCount = size / 2 + 1
        // 10 ms frames: frameLength · 100 is the sample rate.
        let hertzPerBin = Double(frameLength * 100) / Double(size)
        coherenceLow = max(1, Int(200 / hertzPerBin))
        coherenceHigh = min(binCount, max(coherenceLow + 1, Int(4000 / hertzPerBin)))
        fft = VoiceFFT(size: size)
        window = .allocate(capacity: 2 * frameLength)
        for n in 0..<(2 * frameLength) {
            window[n] = Float(EffectMath.sin(EffectMath.pi * (Double(n) + 0.5) / Double(2 * frameLength)))
        }
        errorInput = .allocate(capacity: 2 * frameLength)
        errorInput.initialize(repeating: 0, count: 2 * frameLength)
        echoInput = .allocate(capacity: 2 * frameLength)
        echoInput.initialize(repeating: 0, count: 2 * frameLength)
        overlap = .allocate(capacity: frameLength)
        overlap.initialize(repeating: 0, count: frameLength)
        time = .allocate(capacity: size)
        time.initialize(repeating: 0, count: size)
        errorRe = .allocate(capacity: binCount)
        errorIm = .allocate(capacity: binCount)
        echoRe = .allocate(capacity: binCount)
        echoIm = .allocate(capacity: binCount)
        state = .allocate(capacity: 18 * binCount)
        state.initialize(repeating: 0, count: 18 * binCount)
    }

    public func deallocate() {
        fft.deallocate()
        window.deallocate()
        errorInput.deallocate()
        echoInput.deallocate()
        overlap.deallocate()
        time.deallocate()
        errorRe.deallocate()
        errorIm.deallocate()
        echoRe.deallocate()
        echoIm.deallocate()
        state.deallocate()
    }

    /// Windows the latest two frames of `samples` into `time` (zero-padded) and transforms them.
    @inlinable
    func transform(_ samples: UnsafePointer<Float>, re: UnsafeMutablePointer<Float>, im: UnsafeMutablePointer<Float>) {
        for n in 0..<(2 * frameLength) { time[n] = samples[n] * window[n] }
        fft.forward(time, re: re, im: im)
    }

    /// One frame: `error` (the linear canceller's output) and `echo` (its echo estimate), `frameLength`
    /// samples each; `referencePeak` (binCount values, see the type's comment) weighted by
    /// `referenceWeight`; writes `frameLength` samples delayed by one frame to `output`.
    /// `farEndActive` gates the leakage update.
    public mutating func process(
        error: UnsafePointer<Float>, echo: UnsafePointer<Float>, referencePeak: UnsafePointer<Float>,
        referenceWeight: Float, farEndActive: Bool, nearEndActive: Bool, noiseSuppression: Bool,
        output: UnsafeMutablePointer<Float>
    ) {
        let over = overSubtraction
        let residualFloor = nearEndActive ? doubleTalkEchoFloor : echoFloor
        let f = frameLength
        // Slide the two-frame analysis buffers.
        for n in 0..<f {
            errorInput[n] = errorInput[n + f]
            errorInput[n + f] = error[n]
            echoInput[n] = echoInput[n + f]
            echoInput[n + f] = echo[n]
        }
        transform(errorInput, re: errorRe, im: errorIm)
        transform(echoInput, re: echoRe, im: echoIm)
        frames += 1
        let meanPe = state
        let meanPy = state + binCount
        let meanPePy = state + 2 * binCount
        let meanPy2 = state + 3 * binCount
        let noise = state + 4 * binCount
        let previous = state + 5 * binCount
        let late = state + 6 * binCount
        let meanL = state + 7 * binCount
        let meanPeL = state + 8 * binCount
        let meanL2 = state + 9 * binCount
        let meanX = state + 10 * binCount
        let meanPeX = state + 11 * binCount
        let meanX2 = state + 12 * binCount
        let meanPeT = state + 13 * binCount
        let a: Float = 0.02
        let smoothDD = state + 14 * binCount
        let smoothYY = state + 15 * binCount
        let smoothRe = state + 16 * binCount
        let smoothIm = state + 17 * binCount
        let c: Float = 0.4
        var coherent: Float = 0
        var echoWeight: Float = 0
        for k in coherenceLow..<coherenceHigh {
            let dRe = errorRe[k] + echoRe[k]
            let dIm = errorIm[k] + echoIm[k]
            smoothDD[k] += c * (dRe * dRe + dIm * dIm - smoothDD[k])
            smoothYY[k] += c * (echoRe[k] * echoRe[k] + echoIm[k] * echoIm[k] - smoothYY[k])
            smoothRe[k] += c * (dRe * echoRe[k] + dIm * echoIm[k] - smoothRe[k])
            smoothIm[k] += c * (dIm * echoRe[k] - dRe * echoIm[k] - smoothIm[k])
            coherent += (smoothRe[k] * smoothRe[k] + smoothIm[k] * smoothIm[k]) / (smoothDD[k] + 1e-30)
            echoWeight += smoothYY[k]
        }
        echoCoherence = echoWeight > 1e-20 ? coherent / echoWeight : 0
        var total: Float = 0
        var errorTotal: Float = 0
        for k in 0..<binCount {
            total += echoRe[k] * echoRe[k] + echoIm[k] * echoIm[k]
            errorTotal += errorRe[k] * errorRe[k] + errorIm[k] * errorIm[k]
        }
        total *= 1 / Float(binCount)
        errorTotal *= 1 / Float(binCount)
        if farEndActive {
            meanTotal += a * (total - meanTotal)
            meanTotal2 += a * (total * total - meanTotal2)
            meanErrorTotal += a * (errorTotal - meanErrorTotal)
            meanErrorEcho += a * (errorTotal * total - meanErrorEcho)
        }
        let totalVariance = meanTotal2 - meanTotal * meanTotal
        // The broadband leakage (one regression over all bins, as in speex's MDF): the least a bin's
        // leakage is taken to be, so bins the far end seldom excites are not trusted to be cancelled.
        let globalCovariance = meanErrorEcho - meanErrorTotal * meanTotal
        let globalLeakage =
            totalVariance > 1e-30 ? min(max(globalCovariance / totalVariance, 0), 1) * globalLeakageWeight : 0
        let decay = lateDecay
        let dd = priorSmoothing
        let noiseRise: Float = 1.0046
        var inSum: Float = 0
        var outSum: Float = 0
        var noiseSum: Float = 0
        var echoSum: Float = 0
        var excessSum: Float = 0
        for k in 0..<binCount {
            let pe = errorRe[k] * errorRe[k] + errorIm[k] * errorIm[k]
            let py = echoRe[k] * echoRe[k] + echoIm[k] * echoIm[k]
            // The late echo: what the echo estimate leaves behind, decaying (excludes this frame).
            let l = late[k]
            late[k] = decay * (l + py)
            if farEndActive {
                meanPe[k] += a * (pe - meanPe[k])
                meanPy[k] += a * (py - meanPy[k])
                meanPePy[k] += a * (pe * py - meanPePy[k])
                meanPy2[k] += a * (py * py - meanPy2[k])
                meanL[k] += a * (l - meanL[k])
                meanPeL[k] += a * (pe * l - meanPeL[k])
                meanL2[k] += a * (l * l - meanL2[k])
                let x = referencePeak[k]
                meanX[k] += a * (x - meanX[k])
                meanPeX[k] += a * (pe * x - meanPeX[k])
                meanX2[k] += a * (x * x - meanX2[k])
                meanPeT[k] += a * (pe * total - meanPeT[k])
            }
            let variance = meanPy2[k] - meanPy[k] * meanPy[k]
            let covariance = meanPePy[k] - meanPe[k] * meanPy[k]
            var leakage: Float = variance > 1e-30 ? covariance / variance : 0
            leakage = min(max(max(leakage, 0.005), globalLeakage), maximumLeakage)
            let lateVariance = meanL2[k] - meanL[k] * meanL[k]
            let lateCovariance = meanPeL[k] - meanPe[k] * meanL[k]
            var lateLeakage: Float = lateVariance > 1e-30 ? lateCovariance / lateVariance : 0
            lateLeakage = min(max(lateLeakage, 0), maximumLeakage)
            let referenceVariance = meanX2[k] - meanX[k] * meanX[k]
            let referenceCovariance = meanPeX[k] - meanPe[k] * meanX[k]
            var coupling: Float = referenceVariance > 1e-30 ? referenceCovariance / referenceVariance : 0
            coupling = min(max(coupling, 0), 1) * referenceCoupling
            let totalCovariance = meanPeT[k] - meanPe[k] * meanTotal
            var spread: Float = totalVariance > 1e-30 ? totalCovariance / totalVariance : 0
            spread = min(max(spread, 0), maximumLeakage) * distortionWeight
            // Two-argument max only: the variadic one builds an array.
            let echoResidual = max(max(leakage * py, lateLeakage * l), max(coupling * referencePeak[k], spread * total))
            let residual = over * max(echoResidual, referenceWeight * referencePeak[k])
            // Noise: minimum tracking on the error (starts from the first frame).
            if frames == 1 || pe < noise[k] {
                noise[k] = pe
            } else {
                noise[k] *= noiseRise
            }
            let noiseTerm = noiseSuppression ? 2 * noise[k] : 0
            let interference = residual + noiseTerm + 1e-20
            let posterior = pe / interference
            let prior = dd * previous[k] + (1 - dd) * max(posterior - 1, 0)
            var gain = prior / (1 + prior)
            let floor = (residualFloor * residual + noiseFloor * noiseTerm + 1e-20) / interference
            gain = max(gain, floor)
            previous[k] = gain * gain * posterior
            errorRe[k] *= gain
            errorIm[k] *= gain
            inSum += pe
            outSum += pe * gain * gain
            noiseSum += noise[k]
            let echoEstimate = max(echoResidual, referenceWeight * referencePeak[k])
            echoSum += echoEstimate
            excessSum += max(0, pe - 2 * echoEstimate - 2 * noise[k])
        }
        // Parseval with the window: Σ|X_k|² over half the bins ≈ fftSize · frameLength / 2 · mean square.
        let scale = 2 / Float(fftSize * frameLength)
        inputPower = inSum * scale
        outputPower = outSum * scale
        noisePower = noiseSum * scale
        echoPower = echoSum * scale
        excessPower = excessSum * scale
        fft.inverse(re: errorRe, im: errorIm, time)
        for n in 0..<f {
            output[n] = overlap[n] + time[n] * window[n]
            overlap[n] = time[n + f] * window[n + f]
        }
    }
}

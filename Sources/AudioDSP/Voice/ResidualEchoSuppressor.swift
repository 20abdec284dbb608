// Control side: init, deallocate. Render side: process (no allocation, no locks).

/// The short-time spectral post-filter behind the linear echo canceller, for one microphone channel:
/// residual-echo suppression and, optionally, noise suppression, as one Wiener-type gain per bin.
///
/// Framing: a low-delay STFT (after D. Mauler and R. Martin, "A low delay, variable resolution, perfect
/// reconstruction spectral analysis-synthesis system for speech enhancement", EUSIPCO 2007). A call brings
/// one frame, analysed in two hops of half a frame; the analysis window spans `windowHops` hops (four by
/// default: two frames, the frequency resolution of a 20 ms window at 10 ms frames; two, one frame, for
/// half the cost) and is asymmetric: a long sine rise over all hops but the last, a short sine fall over
/// the last (with two hops, a plain sine window). The synthesis window is non-zero on the last two hops only, and
/// analysis × synthesis is a Hann window of two hops there, so with hop overlap-add unity gains
/// reconstruct the input exactly and the latency is one hop (half a frame).
///
/// Interference per bin k, per hop:
/// - residual echo `R = over · max(η_k·|Y_k|², λ_k·L_k, κ_k·X_k, ν_k·T, w·X_k)`, over = 6 (5 while the
///   near end talks, 2 where the caller marks the talker clear or the hop's own excess over the
///   interference is above `instantClearTalkerExcess`). Each factor is the regression of the error's
///   power |E_k|² on one predictor, over about a second of frames in which the far end talks (while the
///   near end talks too, at a rate in proportion to the echo's share of the error, see
///   `nearEndLearning`) (after the leakage estimate of J.-M. Valin, "On
///   adjusting the learning rate in frequency domain echo cancellation with double-talk", IEEE Trans.
///   ASLP 15(3), 2007, which speex computes once for all bins; here per bin). The regressions are
///   updated once per frame (on its second hop, whose window ends with the frame), and kept from
///   learning a talker the detector misses (`regressionErrorLimit`, `recentNearEndSeconds`):
///   - `Y` is the linear filter's echo estimate (η_k: its leakage; in the suppression of far-end single
///     talk at least the all-bin leakage, see `nearEndOwnLeakage`);
///   - `L` is a decaying sum of past |Y|² (the reverberation beyond the filter's length);
///   - `X` is the largest aligned-reference power in the span where the echo can be (`referencePeak`;
///     the kernel chooses the span);
///   - `T` is the echo estimate's power summed over bins (a loudspeaker's distortion spreads energy
///     across bins; weighted by 0.1).
///   While the linear filter has not converged (at the start and after a change of delay), `X` also
///   enters unweighted (w = 1), so the echo is held down before the filter has learned it.
/// - noise `N`: the minimum of the error's power smoothed over 50 ms (rises 2 dB/s, falls at once),
///   held while the analysis window holds a hop of digital silence.
///
/// Gain: the decision-directed a-priori SNR (Y. Ephraim and D. Malah, "Speech enhancement using a
/// minimum mean-square error short-time spectral amplitude estimator", IEEE Trans. ASSP 32(6), 1984;
/// smoothed over 95 ms, 31 ms while the near end talks) against R + 2N, G = ξ/(1 + ξ), with a floor
/// weighted between the echo floor (−45 dB; −18 dB while the near end talks) and the noise floor
/// (−15 dB) by the share of each in the interference. While the near end talks the over-subtraction is
/// 5 instead of 6, and 2 on a frame after one where the talker stood clearly above the interference:
/// the talker keeps more of itself where the echo estimate is uncertain. (The near-end values are
/// optional, see `init`.)
///
/// Time constants are in seconds, so they hold at any frame length and sample rate.
///
/// Cost at 48 kHz: per hop, three 1024-point real FFTs (512-point with a two-hop window) and about 30
/// flops per bin; per frame, about 100 flops per bin more for the regressions.
public struct ResidualEchoSuppressor {
    public let frameLength: Int
    /// Samples per analysis step: half a frame. Also the latency.
    public let hopLength: Int
    /// Samples in the analysis window: `windowHops` hops.
    public let windowLength: Int
    public let fftSize: Int
    public let binCount: Int
    /// Bins of 200 Hz … 4 kHz, where the coherence is measured.
    @usableFromInline let coherenceLow: Int
    @usableFromInline let coherenceHigh: Int
    @usableFromInline let fft: VoiceFFT
    @usableFromInline let analysisWindow: UnsafeMutablePointer<Float>
    /// The synthesis window's non-zero part: the last two hops of the analysis span.
    @usableFromInline let synthesisWindow: UnsafeMutablePointer<Float>
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
    /// 14 smoothed |D|², 15 smoothed |Y|², 16 and 17 smoothed D·Y* (D = E + Y, the microphone),
    /// 18–21 the regression factors η, λ, κ, ν of the latest frame, 22 each bin's own leakage (η before
    /// the broadband leakage's floor).
    @usableFromInline let state: UnsafeMutablePointer<Float>
    /// The latest hop's residual echo estimate per bin, from each bin's own leakage (the detector's
    /// measure; the suppression's while the near end talks, see `nearEndOwnLeakage`), and with the
    /// broadband leakage as the least leakage (the suppression's otherwise).
    @usableFromInline let estimates: UnsafeMutablePointer<Float>
    @usableFromInline let flooredEstimates: UnsafeMutablePointer<Float>
    @usableFromInline var frames = 0
    /// The latest hop whose samples were all zero: digital silence (a port not yet connected, a source
    /// muted by sending zeros). The noise estimate holds while the analysis window holds such a hop: a
    /// window half silent read the noise 3 dB low, and the minimum then took seconds to rise again.
    @usableFromInline var lastSilentHop = 0  // the empty window before the first hop counts as silent
    /// Hops the near end has been marked for without a break (the current one included).
    @usableFromInline var nearEndHops = 0
    /// Hops of `doubleTalkSettleSeconds`.
    @usableFromInline let settleHops: Int
    @usableFromInline var meanTotal: Float = 0
    @usableFromInline var meanTotal2: Float = 0
    @usableFromInline var meanErrorTotal: Float = 0
    @usableFromInline var meanErrorEcho: Float = 0
    @usableFromInline var globalLeakage: Float = 0
    /// Per-update rates and per-hop factors, from the time constants below.
    @usableFromInline let statisticsRate: Float
    @usableFromInline let coherenceRate: Float
    @usableFromInline let lateDecay: Float
    @usableFromInline let noiseRise: Float
    @usableFromInline let noiseSmoothing: Float
    @usableFromInline let priorSmoothing: Float
    @usableFromInline let nearEndPriorSmoothing: Float
    /// Time constant of the regressions' means (updated once per frame), in seconds.
    public static let statisticsSeconds = 0.5
    /// Time constant of the coherence's smoothing (updated once per frame), in seconds.
    public static let coherenceSeconds = 0.025
    /// Decay of the late-echo predictor, in dB per second (a reverberation time of 0.5 s).
    public static let lateDecayDbPerSecond = 125.0
    /// Rise of the noise floor's minimum tracking, in dB per second.
    public static let noiseRiseDbPerSecond = 2.0
    /// Time constant of the error's power smoothing before the noise floor's minimum tracking, in
    /// seconds.
    public static let noiseSmoothingSeconds = 0.05
    /// Time constant of the decision-directed a-priori SNR's smoothing, in seconds.
    public static let priorSeconds = 0.095
    /// The same while the near end talks: shorter, so the gain follows the talker's onsets.
    public static let nearEndPriorSeconds = 0.031
    /// Over-subtraction of the residual echo estimate.
    public var overSubtraction: Float = 6
    /// Over-subtraction of the residual echo estimate while the near end talks.
    public var doubleTalkOverSubtraction: Float
    /// Over-subtraction once the near end has been marked for `doubleTalkSettleSeconds` without a break.
    /// The detector now and then marks a stretch of far-end talk as the near end; those marks are short,
    /// and `doubleTalkOverSubtraction` holds the echo down through them. A talker who goes on is no such
    /// mark, and keeps more of itself (docs/DECISIONS.md). `process(settlesDoubleTalk: false)` keeps
    /// `doubleTalkOverSubtraction` however long the near end talks.
    public var settledDoubleTalkOverSubtraction: Float
    /// How long the near end must be marked without a break before `settledDoubleTalkOverSubtraction`
    /// applies, in seconds.
    public static let doubleTalkSettleSeconds = 0.1
    /// Over-subtraction while the near end talks and the caller marks the talker clear (`clearTalker`:
    /// far above the interference on the latest frame).
    public var clearTalkerOverSubtraction: Float
    /// Excess over the interference (noise and residual echo estimate, summed over bins) on a hop itself
    /// that suppresses the hop as a clear talker's, before any detector has seen it. Stricter than the
    /// caller's frame decision, which also checks the coherence with the echo (infinity: never).
    public var instantClearTalkerExcess: Float
    public var echoFloor: Float = 0.0056
    public var noiseFloor: Float = 0.18
    /// Largest leakage factor (echo estimate power to residual power).
    public var maximumLeakage: Float = 4
    /// Weight of the reference-power predictor of the residual echo (0 disables it).
    public var referenceCoupling: Float = 1
    /// Weight of the broadband (distortion) predictor of the residual echo (0 disables it).
    public var distortionWeight: Float = 0.1
    /// The echo floor while the near end talks (less suppression keeps the talker continuous).
    public var doubleTalkEchoFloor: Float = 0.12
    /// While the near end talks, the regressions learn at `nearEndLearning` × (echo estimate power /
    /// error power) of their rate, at most the full rate (0: they hold still).
    public var nearEndLearning: Float
    /// The most a bin's error power counts for in the regressions, in multiples of that bin's interference
    /// estimate (residual echo as the far-end suppression takes it, and noise, as of the frame's first
    /// hop; 0: no limit). A talker the detector has not marked yet stands 20–40 dB above the residual
    /// echo, and one such frame moved the means by tens of dB: a talker who started while the far end played raised the estimates 18 dB in
    /// four frames, which then hid the talker from the detector for a quarter of a second and, the
    /// regressions standing still while the far end is silent, until the next far-end talk. At 30× a
    /// frame of a talker moves them a few dB, while residual echo that really grew (a changed echo path)
    /// is followed as fast as without the limit (docs/DECISIONS.md).
    public var regressionErrorLimit: Float = 30
    /// For `recentNearEndSeconds` after the near end was last marked (quality: `nearEndLearning` > 0),
    /// far-end frames the detector did not mark teach the regressions in proportion to
    /// `errorEchoCoherence`: not at all below `coherentLearningLow`, at the full rate from
    /// `coherentLearningHigh`. In double talk the detector misses some of the talker's frames, whose
    /// error the echo estimate explains little (median 0.16; residual echo in far-end single talk 0.44);
    /// learned from, they raised the estimates 10–20 dB above the residual echo and hid more of the
    /// talker. Only after a mark: in far-end single talk, a far-end burst that leaves the filter behind
    /// reads as low, and is what the regressions must learn from (docs/DECISIONS.md).
    public static let recentNearEndSeconds = 0.5
    public static let coherentLearningLow: Float = 0.2
    public static let coherentLearningHigh: Float = 0.4
    @usableFromInline let recentNearEndFrames: Int
    @usableFromInline var framesSinceNearEnd = Int.max / 2
    /// Weight of the broadband leakage as the least per-bin leakage.
    public var globalLeakageWeight: Float = 1
    /// The broadband leakage is the least per-bin leakage only for the suppression in far-end single
    /// talk: the detector's excess, and the suppression while the near end talks, take each bin's own
    /// leakage. The floor keeps bins the far end seldom excites from being trusted to be cancelled; while
    /// the talker talks it took the talker down in just those bins, and it hid the talker's onsets from
    /// the detector (docs/DECISIONS.md). False: the floor everywhere.
    public var nearEndOwnLeakage: Bool
    /// Mean squares (per sample) over the latest frame: the error (post-filter input), the output, the
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
    /// The share of the error's power that the echo estimate explains linearly over the latest frames
    /// (its coherence with the error, weighted by the error's power): high while the error is residual
    /// echo, low while it is a talker, even one far below the echo that keeps `echoCoherence` high.
    public private(set) var errorEchoCoherence: Float = 1

    /// A suppressor for calls of `frameLength` samples (even) at `sampleRate`. `keepsNearEnd`: while the
    /// near end talks, over-subtract the residual echo 5× instead of 6× (1× once the talker has gone on
    /// for 100 ms, 2× for a clear talker) and smooth the a-priori SNR over `nearEndPriorSeconds`, so the
    /// talker keeps more of itself, and keep learning the residual echo (`nearEndLearning`), so a filter
    /// that double talk put off is followed;
    /// otherwise the far-end values hold and the regressions stand still while the near end talks.
    public init(frameLength: Int, sampleRate: Double, keepsNearEnd: Bool = true, windowHops: Int = 4) {
        precondition(frameLength >= 4 && frameLength % 2 == 0, "the frame must split into two hops")
        precondition(windowHops >= 2, "the synthesis window spans the last two hops")
        self.frameLength = frameLength
        let h = frameLength / 2
        hopLength = h
        windowLength = windowHops * h
        let n = windowLength
        var size = 16
        while size < n { size *= 2 }
        fftSize = size
        binCount = size / 2 + 1
        precondition(binCount % 4 == 1, "the per-bin loops take four bins at a time, then the last one")
        let hertzPerBin = sampleRate / Double(size)
        coherenceLow = max(1, Int(200 / hertzPerBin))
        coherenceHigh = min(binCount, max(coherenceLow + 1, Int(4000 / hertzPerBin)))
        let frameSeconds = Double(frameLength) / sampleRate
        let hopSeconds = Double(h) / sampleRate
        statisticsRate = Float(min(1, frameSeconds / Self.statisticsSeconds))
        recentNearEndFrames = Int((Self.recentNearEndSeconds / frameSeconds).rounded())
        coherenceRate = Float(min(1, frameSeconds / Self.coherenceSeconds))
        // Power factors: 10^(dB/10) is the amplitude gain of twice the level.
        lateDecay = Float(EffectMath.decibelsToGain(-2 * Self.lateDecayDbPerSecond * hopSeconds))
        noiseRise = Float(EffectMath.decibelsToGain(2 * Self.noiseRiseDbPerSecond * hopSeconds))
        noiseSmoothing = Float(min(1, hopSeconds / Self.noiseSmoothingSeconds))
        priorSmoothing = Float(EffectMath.exp(-hopSeconds / Self.priorSeconds))
        nearEndPriorSmoothing = Float(
            EffectMath.exp(-hopSeconds / (keepsNearEnd ? Self.nearEndPriorSeconds : Self.priorSeconds)))
        doubleTalkOverSubtraction = keepsNearEnd ? 5 : 6
        settledDoubleTalkOverSubtraction = keepsNearEnd ? 1 : 6
        settleHops = max(1, Int((Self.doubleTalkSettleSeconds / hopSeconds).rounded()))
        clearTalkerOverSubtraction = keepsNearEnd ? 2 : 6
        instantClearTalkerExcess = keepsNearEnd ? 20 : .infinity
        nearEndLearning = keepsNearEnd ? 0.003 : 0
        nearEndOwnLeakage = keepsNearEnd
        fft = VoiceFFT(size: size)
        // Analysis: sine rise over n − h samples, sine fall over h. Analysis × synthesis: a Hann window
        // over the last 2h samples, whose copies one hop apart sum to one.
        analysisWindow = .allocate(capacity: n)
        for i in 0..<n {
            let w =
                i < n - h
                ? EffectMath.sin(EffectMath.pi * (Double(i) + 0.5) / Double(2 * (n - h)))
                : EffectMath.sin(EffectMath.pi * (Double(i - (n - 2 * h)) + 0.5) / Double(2 * h))
            analysisWindow[i] = Float(w)
        }
        synthesisWindow = .allocate(capacity: 2 * h)
        for j in 0..<(2 * h) {
            let s = EffectMath.sin(EffectMath.pi * (Double(j) + 0.5) / Double(2 * h))
            synthesisWindow[j] = Float(s * s) / analysisWindow[n - 2 * h + j]
        }
        errorInput = .allocate(capacity: n)
        errorInput.initialize(repeating: 0, count: n)
        echoInput = .allocate(capacity: n)
        echoInput.initialize(repeating: 0, count: n)
        overlap = .allocate(capacity: h)
        overlap.initialize(repeating: 0, count: h)
        time = .allocate(capacity: size)
        time.initialize(repeating: 0, count: size)
        errorRe = .allocate(capacity: binCount)
        errorIm = .allocate(capacity: binCount)
        echoRe = .allocate(capacity: binCount)
        echoIm = .allocate(capacity: binCount)
        state = .allocate(capacity: 28 * binCount)
        state.initialize(repeating: 0, count: 28 * binCount)
        estimates = .allocate(capacity: binCount)
        estimates.initialize(repeating: 0, count: binCount)
        flooredEstimates = .allocate(capacity: binCount)
        flooredEstimates.initialize(repeating: 0, count: binCount)
    }

    public func deallocate() {
        fft.deallocate()
        analysisWindow.deallocate()
        synthesisWindow.deallocate()
        errorInput.deallocate()
        echoInput.deallocate()
        overlap.deallocate()
        time.deallocate()
        errorRe.deallocate()
        errorIm.deallocate()
        echoRe.deallocate()
        echoIm.deallocate()
        state.deallocate()
        estimates.deallocate()
        flooredEstimates.deallocate()
    }

    /// Windows the latest `windowLength` samples of `samples` into `time` (zero-padded) and transforms them.
    @inlinable
    func transform(_ samples: UnsafePointer<Float>, re: UnsafeMutablePointer<Float>, im: UnsafeMutablePointer<Float>) {
        for n in 0..<windowLength { time[n] = samples[n] * analysisWindow[n] }
        // The inverse transform of the previous hop wrote here: the padding must be zeros again.
        for n in windowLength..<fftSize { time[n] = 0 }
        fft.forward(time, re: re, im: im)
    }

    /// One frame: `error` (the linear canceller's output) and `echo` (its echo estimate), `frameLength`
    /// samples each; `referencePeak` (binCount values, see the type's comment) weighted by
    /// `referenceWeight`; writes `frameLength` samples delayed by one hop to `output`.
    /// `farEndActive` gates the regressions' update; `clearTalker` (with `nearEndActive`) selects
    /// `clearTalkerOverSubtraction`; `settlesDoubleTalk` false keeps `doubleTalkOverSubtraction` however
    /// long the near end talks (the processor's choice while two loudspeakers play two signals, whose
    /// linear stage leaves the echo only 18–26 dB down in double talk instead of about 33;
    /// docs/DECISIONS.md).
    public mutating func process(
        error: UnsafePointer<Float>, echo: UnsafePointer<Float>, referencePeak: UnsafePointer<Float>,
        referenceWeight: Float, farEndActive: Bool, nearEndActive: Bool, clearTalker: Bool,
        settlesDoubleTalk: Bool = true, noiseSuppression: Bool, output: UnsafeMutablePointer<Float>
    ) {
        let h = hopLength
        var sums: (input: Float, output: Float, noise: Float, echo: Float, excess: Float) = (0, 0, 0, 0, 0)
        for hop in 0..<2 {
            let last = hop == 1
            processHop(
                error: error + hop * h, echo: echo + hop * h, referencePeak: referencePeak,
                referenceWeight: referenceWeight, farEndActive: farEndActive, nearEndActive: nearEndActive,
                clearTalker: clearTalker, settlesDoubleTalk: settlesDoubleTalk,
                noiseSuppression: noiseSuppression, updateStatistics: last, sums: &sums,
                output: output + hop * h)
        }
        // Parseval with the window: Σ|X_k|² over half the bins ≈ fftSize · Σw²/2 · mean square, and
        // Σw² ≈ windowLength / 2; two hops.
        let scale = 2 / Float(fftSize * windowLength)
        inputPower = sums.input * scale
        outputPower = sums.output * scale
        noisePower = sums.noise * scale
        echoPower = sums.echo * scale
        excessPower = sums.excess * scale
    }

    /// One hop of `hopLength` samples; on the frame's last hop, also updates the regressions.
    mutating func processHop(
        error: UnsafePointer<Float>, echo: UnsafePointer<Float>, referencePeak: UnsafePointer<Float>,
        referenceWeight: Float, farEndActive: Bool, nearEndActive: Bool, clearTalker: Bool, settlesDoubleTalk: Bool,
        noiseSuppression: Bool, updateStatistics: Bool,
        sums: inout (input: Float, output: Float, noise: Float, echo: Float, excess: Float),
        output: UnsafeMutablePointer<Float>
    ) {
        let h = hopLength
        let n = windowLength
        // Slide the analysis buffers by one hop.
        for i in 0..<(n - h) {
            errorInput[i] = errorInput[i + h]
            echoInput[i] = echoInput[i + h]
        }
        var silent = true
        for i in 0..<h {
            errorInput[n - h + i] = error[i]
            echoInput[n - h + i] = echo[i]
            if error[i] != 0 { silent = false }
        }
        transform(errorInput, re: errorRe, im: errorIm)
        transform(echoInput, re: echoRe, im: echoIm)
        frames += 1
        if silent { lastSilentHop = frames }
        // The noise estimate learns only from windows without digital silence (see `lastSilentHop`).
        let tracksNoise = frames - lastSilentHop >= windowLength / h
        var total: Float = 0
        for k in 0..<binCount { total += echoRe[k] * echoRe[k] + echoIm[k] * echoIm[k] }
        total *= 1 / Float(binCount)
        if updateStatistics {
            updateRegressions(
                total: total, referencePeak: referencePeak, farEndActive: farEndActive, nearEndActive: nearEndActive)
        }
        // The residual echo estimate per bin, and this hop's excess over the interference (the
        // detector's measure, against the noise as of the previous hop): four bins at a time
        // (`VoiceLanes`: the same bits as bin by bin), then the last one (4m + 1 bins).
        let body = binCount & ~3
        var hopExcess: Float = 0
        var hopInterference: Float = 0
        var k = 0
        while k < body {
            estimateBins(
                at: k, VoiceAllLanes.self, total: total, referencePeak: referencePeak, referenceWeight: referenceWeight,
                excess: &hopExcess, interference: &hopInterference)
            k += 4
        }
        estimateBins(
            at: k, VoiceFirstLane.self, total: total, referencePeak: referencePeak, referenceWeight: referenceWeight,
            excess: &hopExcess, interference: &hopInterference)
        // A talker far above the interference on this very hop (an onset, which the detector's frame
        // decision reaches a frame later) is suppressed as a clear talker at once.
        let clearNow = frames > 1 && hopExcess > instantClearTalkerExcess * hopInterference
        let nearEnd = nearEndActive || clearNow
        nearEndHops = nearEnd ? nearEndHops + 1 : 0
        let doubleTalkOver =
            settlesDoubleTalk && nearEndHops >= settleHops
            ? settledDoubleTalkOverSubtraction : doubleTalkOverSubtraction
        let over = nearEnd ? (clearTalker || clearNow ? clearTalkerOverSubtraction : doubleTalkOver) : overSubtraction
        let residualFloor = nearEnd ? doubleTalkEchoFloor : echoFloor
        let suppressed = nearEnd ? estimates : flooredEstimates
        let dd = nearEnd ? nearEndPriorSmoothing : priorSmoothing
        let gain = HopGain(
            decay: lateDecay, over: over, suppressed: suppressed, tracksNoise: tracksNoise,
            noiseWeight: noiseSuppression ? 2 : 0, priorSmoothing: dd, residualFloor: residualFloor)
        var hopSums: (input: Float, output: Float, noise: Float, echo: Float, excess: Float) = (0, 0, 0, 0, 0)
        k = 0
        while k < body {
            applyGain(at: k, VoiceAllLanes.self, gain, sums: &hopSums)
            k += 4
        }
        applyGain(at: k, VoiceFirstLane.self, gain, sums: &hopSums)
        sums.input += hopSums.input
        sums.output += hopSums.output
        sums.noise += hopSums.noise
        sums.echo += hopSums.echo
        sums.excess += hopSums.excess
        fft.inverse(re: errorRe, im: errorIm, time)
        let start = n - 2 * h
        for i in 0..<h {
            output[i] = overlap[i] + time[start + i] * synthesisWindow[i]
            overlap[i] = time[start + h + i] * synthesisWindow[h + i]
        }
    }

    /// Once per frame (the current spectra span its last two frames): the coherence of the microphone
    /// with the echo estimate, and, while the far end talks, the regressions of |E|² on the predictors,
    /// which give the per-bin factors the hops use.
    mutating func updateRegressions(
        total: Float, referencePeak: UnsafePointer<Float>, farEndActive: Bool, nearEndActive: Bool
    ) {
        let meanPe = state
        let meanPy = state + binCount
        let meanPePy = state + 2 * binCount
        let meanPy2 = state + 3 * binCount
        let late = state + 6 * binCount
        let meanL = state + 7 * binCount
        let meanPeL = state + 8 * binCount
        let meanL2 = state + 9 * binCount
        let meanX = state + 10 * binCount
        let meanPeX = state + 11 * binCount
        let meanX2 = state + 12 * binCount
        let meanPeT = state + 13 * binCount
        let smoothDD = state + 14 * binCount
        let smoothYY = state + 15 * binCount
        let smoothRe = state + 16 * binCount
        let smoothIm = state + 17 * binCount
        let leakageFactor = state + 18 * binCount
        let lateFactor = state + 19 * binCount
        let couplingFactor = state + 20 * binCount
        let spreadFactor = state + 21 * binCount
        let ownLeakage = state + 22 * binCount
        let noise = state + 4 * binCount
        var a = statisticsRate
        let c = coherenceRate
        let smoothEE = state + 23 * binCount
        let smoothEYRe = state + 24 * binCount
        let smoothEYIm = state + 25 * binCount
        var coherent: Float = 0
        var echoWeight: Float = 0
        var explained: Float = 0
        var errorWeight: Float = 0
        for k in coherenceLow..<coherenceHigh {
            let eRe = errorRe[k]
            let eIm = errorIm[k]
            smoothEE[k] += c * (eRe * eRe + eIm * eIm - smoothEE[k])
            smoothEYRe[k] += c * (eRe * echoRe[k] + eIm * echoIm[k] - smoothEYRe[k])
            smoothEYIm[k] += c * (eIm * echoRe[k] - eRe * echoIm[k] - smoothEYIm[k])
        }
        for k in coherenceLow..<coherenceHigh {
            let dRe = errorRe[k] + echoRe[k]
            let dIm = errorIm[k] + echoIm[k]
            smoothDD[k] += c * (dRe * dRe + dIm * dIm - smoothDD[k])
            smoothYY[k] += c * (echoRe[k] * echoRe[k] + echoIm[k] * echoIm[k] - smoothYY[k])
            smoothRe[k] += c * (dRe * echoRe[k] + dIm * echoIm[k] - smoothRe[k])
            smoothIm[k] += c * (dIm * echoRe[k] - dRe * echoIm[k] - smoothIm[k])
            coherent += (smoothRe[k] * smoothRe[k] + smoothIm[k] * smoothIm[k]) / (smoothDD[k] + 1e-30)
            echoWeight += smoothYY[k]
            explained += (smoothEYRe[k] * smoothEYRe[k] + smoothEYIm[k] * smoothEYIm[k]) / (smoothYY[k] + 1e-30)
            errorWeight += smoothEE[k]
        }
        echoCoherence = echoWeight > 1e-20 ? coherent / echoWeight : 0
        errorEchoCoherence = errorWeight > 1e-20 ? explained / errorWeight : 0
        framesSinceNearEnd = nearEndActive ? 0 : min(framesSinceNearEnd + 1, Int.max / 2)
        guard farEndActive || frames <= 2 else { return }
        if farEndActive {
            var errorTotal: Float = 0
            for k in 0..<binCount { errorTotal += errorRe[k] * errorRe[k] + errorIm[k] * errorIm[k] }
            errorTotal *= 1 / Float(binCount)
            // While the near end talks, learn at a rate in proportion to the echo's share of the error:
            // next to nothing while the talker dominates, nearly full when the filter has diverged and
            // the error is echo (the leakage then jumps, and a frozen estimate would let it through).
            if nearEndActive {
                a *= min(1, nearEndLearning * total / (errorTotal + 1e-30))
            } else if nearEndLearning > 0 && framesSinceNearEnd <= recentNearEndFrames {
                let low = Self.coherentLearningLow
                let ramp = (errorEchoCoherence - low) / (Self.coherentLearningHigh - low)
                a *= min(1, max(0, ramp))
            }
            meanTotal += a * (total - meanTotal)
            meanTotal2 += a * (total * total - meanTotal2)
            meanErrorTotal += a * (errorTotal - meanErrorTotal)
            meanErrorEcho += a * (errorTotal * total - meanErrorEcho)
        }
        let totalVariance = meanTotal2 - meanTotal * meanTotal
        // The broadband leakage (one regression over all bins, as in speex's MDF): the least a bin's
        // leakage is taken to be, so bins the far end seldom excites are not trusted to be cancelled.
        let globalCovariance = meanErrorEcho - meanErrorTotal * meanTotal
        globalLeakage =
            totalVariance > 1e-30 ? min(max(globalCovariance / totalVariance, 0), 1) * globalLeakageWeight : 0
        for k in 0..<binCount {
            if farEndActive {
                var pe = errorRe[k] * errorRe[k] + errorIm[k] * errorIm[k]
                let limit = regressionErrorLimit * (flooredEstimates[k] + noise[k])
                if limit > 0 { pe = min(pe, limit) }
                let py = echoRe[k] * echoRe[k] + echoIm[k] * echoIm[k]
                // The late echo as it was before this hop (the hop loop adds this hop's |Y|² after).
                let l = late[k]
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
            let leakage: Float = variance > 1e-30 ? covariance / variance : 0
            ownLeakage[k] = min(max(leakage, 0.005), maximumLeakage)
            leakageFactor[k] = min(max(ownLeakage[k], globalLeakage), maximumLeakage)
            let lateVariance = meanL2[k] - meanL[k] * meanL[k]
            let lateCovariance = meanPeL[k] - meanPe[k] * meanL[k]
            let lateLeakage: Float = lateVariance > 1e-30 ? lateCovariance / lateVariance : 0
            lateFactor[k] = min(max(lateLeakage, 0), maximumLeakage)
            let referenceVariance = meanX2[k] - meanX[k] * meanX[k]
            let referenceCovariance = meanPeX[k] - meanPe[k] * meanX[k]
            let coupling: Float = referenceVariance > 1e-30 ? referenceCovariance / referenceVariance : 0
            couplingFactor[k] = min(max(coupling, 0), 1) * referenceCoupling
            let totalCovariance = meanPeT[k] - meanPe[k] * meanTotal
            let spread: Float = totalVariance > 1e-30 ? totalCovariance / totalVariance : 0
            spreadFactor[k] = min(max(spread, 0), maximumLeakage) * distortionWeight
        }
    }
}

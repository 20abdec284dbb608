// Control side (load time). The minimum-phase filters of `SOFADataset` and their delays, designed pair
// by pair: each ear's filter (`MinimumPhaseDesigner`, band levels fitted by `BandLevelFitter`), and the
// delays that give the pair the measured interaural delay (`HRIRDelayEstimator`); where a minimum-phase
// pair cannot, a pair that keeps the measured interaural phase (`PairSearch`).

#if canImport(Glibc)
    import Glibc
#endif

extension SOFADataset {
    /// Replaces each of the `pairs` measured pairs in `samples` (2 × `pairs` filters of `length` taps,
    /// onsets at `starts`) by minimum-phase filters of `span` taps in `ir`, and writes each filter's delay
    /// (frames, with the file's Data.Delay `fileDelay`) to `delays`; returns the largest delay.
    ///
    /// With `fitsBandLevels` each filter's band levels are then fitted to its measurement's
    /// (`BandLevelFitter`), over its first `span − reservedTaps` taps: the rest stay zero, so a slot that
    /// folds a fractional delay into the taps (`HRIRFractionalDelay`, 7 taps longer) cuts nothing.
    ///
    /// A pair that is the exact mirror image of one designed before (its ears equal that pair's, swapped)
    /// gets that pair's filters and delays, swapped: a symmetric set stays exactly symmetric, at half the
    /// cost.
    static func designMinimumPhasePairs(
        _ samples: [Float], pairs: Int, length: Int, span: Int, starts: [Int], sampleRate: Double,
        fitsBandLevels: Bool, reservedTaps: Int,
        ir: UnsafeMutablePointer<Float>, delays: UnsafeMutablePointer<Float>, fileDelay: (Int) -> Double
    ) -> Double {
        let mirrors = mirrorPairs(samples, pairs: pairs, length: length)
        var headDelays = [Double](repeating: 0, count: 2 * pairs)
        // 1/6-octave smoothing for the 64-tap filters (HRTF at 48 kHz); 1/12 octave from 2.1 ms up
        // (HRTF HQ's 128 taps), which follow a notch closely enough to keep it.
        let smoothing = Double(span) / sampleRate >= 2.1e-3 ? 1.0 / 12 : 1.0 / 6
        let designer = MinimumPhaseDesigner(
            inputLength: length, length: span, sampleRate: sampleRate, smoothingOctaves: smoothing,
            fitsBandLevels: fitsBandLevels, reservedTaps: fitsBandLevels ? reservedTaps : 0)
        let estimator = HRIRDelayEstimator(maximumLength: length, sampleRate: sampleRate)
        let itdRange = Int((1.5e-3 * sampleRate).rounded(.up))
        samples.withUnsafeBufferPointer { all in
            for pair in 0..<pairs {
                let (l, r) = (2 * pair, 2 * pair + 1)
                if let j = mirrors[pair], j < pair {
                    // The mirror image of a pair already designed: its ears swapped.
                    let (jl, jr) = (2 * j, 2 * j + 1)
                    (ir + l * span).update(from: ir + jr * span, count: span)
                    (ir + r * span).update(from: ir + jl * span, count: span)
                    headDelays[l] = headDelays[jr]
                    headDelays[r] = headDelays[jl]
                    continue
                }
                let range = -itdRange...itdRange
                var aligned = (0.0, 0.0)
                /// Designs ear `slot` (0 left, 1 right) with `lowDelay` and measures where it sits.
                var wholeLags = (0, 0)
                func design(_ slot: Int, lowDelay: Double, fit: Bool = false) {
                    let f = slot == 0 ? l : r
                    let source = all.baseAddress! + f * length
                    let lag = designer.design(
                        source, count: length, into: ir + f * span,
                        lags: (starts[f] - 8)...(starts[f] + span), lowDelay: lowDelay)
                    if slot == 0 { wholeLags.0 = lag } else { wholeLags.1 = lag }
                    if fit { designer.fitBandLevels(ir + f * span, to: source, count: length) }
                    measure(slot)
                }
                /// Where the short filter of ear `slot` sits on its original, to a fraction of a frame.
                func measure(_ slot: Int) {
                    let f = slot == 0 ? l : r
                    estimator.load(slot + 2, ir + f * span, count: span)
                    let lag = slot == 0 ? wholeLags.0 : wholeLags.1
                    let a = estimator.lag(slot + 2, slot, lowpass: false, range: (lag - 2)...(lag + 2))
                    if slot == 0 { aligned.0 = a } else { aligned.1 = a }
                }
                for slot in 0..<2 {
                    estimator.load(slot, all.baseAddress! + (slot == 0 ? l : r) * length, count: length)
                    design(slot, lowDelay: 0)
                }
                // The measured pair's interaural delays (cross-correlation lags), broadband and below
                // 1.5 kHz, and the same for the minimum-phase pair by itself.
                let target = (
                    estimator.lag(0, 1, lowpass: false, range: range),
                    estimator.lag(0, 1, lowpass: true, range: range)
                )
                var own = (
                    estimator.lag(2, 3, lowpass: false, range: range),
                    estimator.lag(2, 3, lowpass: true, range: range)
                )
                // A minimum-phase pair's low-frequency and broadband delays differ by what its
                // magnitudes imply, not by what the measurement's excess phase does. Where the two
                // differences disagree by more than a third of a frame, delay the low frequencies of
                // one ear against its high ones with an all-pass (by up to 4 frames; positive `shift`:
                // the right ear) until they agree.
                var shift = 0.0
                for _ in 0..<6 {
                    let mismatch = (target.1 - target.0) - (own.1 - own.0)
                    if abs(mismatch) < (shift == 0 ? 0.33 : 0.05) { break }
                    let next = min(max(shift + mismatch, -12), 12)
                    if next == shift { break }
                    if (next > 0) != (shift > 0), shift != 0 { design(shift > 0 ? 1 : 0, lowDelay: 0) }
                    shift = next
                    design(shift > 0 ? 1 : 0, lowDelay: abs(shift))
                    own = (
                        estimator.lag(2, 3, lowpass: false, range: range),
                        estimator.lag(2, 3, lowpass: true, range: range)
                    )
                }
                // Band levels fitted to the measurement's, then the lags measured again. Fitting moves the
                // phase a little; where that leaves the difference between the lags more than half a frame
                // off, correct the all-pass again (fitting each redesign).
                if fitsBandLevels {
                    for slot in 0..<2 {
                        let f = slot == 0 ? l : r
                        designer.fitBandLevels(ir + f * span, to: all.baseAddress! + f * length, count: length)
                        measure(slot)
                    }
                    own = (
                        estimator.lag(2, 3, lowpass: false, range: range),
                        estimator.lag(2, 3, lowpass: true, range: range)
                    )
                }
                for _ in 0..<(fitsBandLevels ? 3 : 0) {
                    let mismatch = (target.1 - target.0) - (own.1 - own.0)
                    if abs(mismatch) < 0.5 { break }
                    let next = min(max(shift + mismatch, -12), 12)
                    if next == shift { break }
                    if (next > 0) != (shift > 0), shift != 0 { design(shift > 0 ? 1 : 0, lowDelay: 0, fit: true) }
                    shift = next
                    design(shift > 0 ? 1 : 0, lowDelay: abs(shift), fit: true)
                    own = (
                        estimator.lag(2, 3, lowpass: false, range: range),
                        estimator.lag(2, 3, lowpass: true, range: range)
                    )
                }
                // The pair keeps the measured interaural delay: the mean of what the broadband and the
                // low-frequency lags ask for (which now differ as the measurement's do), but never more
                // than 0.45 frame from the low-frequency one, which localisation relies on. (Where the
                // far ear has two paths round the head the broadband peak of the measurement can sit
                // several frames from the low-frequency one, more than the all-pass above can follow.)
                let broadband = target.0 - own.0
                let low = target.1 - own.1
                let interaural = min(max(0.5 * (broadband + low), low - 0.45), low + 0.45)
                let lags = aligned
                let centre = 0.5 * (lags.0 + lags.1)
                headDelays[l] = centre - 0.5 * interaural
                headDelays[r] = centre + 0.5 * interaural
                // Where that leaves either lag more than 0.45 frame off (at the side-rear, where the
                // cross-spectrum narrows to the far ear's band near 3 kHz and the broadband peak is one
                // of several cycles 15 frames apart), look for a pair that keeps the measurement's
                // interaural phase (`InterauralCorrelationMatcher`).
                let error = max(abs(own.0 + interaural - target.0), abs(own.1 + interaural - target.1))
                if fitsBandLevels, error > Self.interauralTolerance {
                    let context = PairSearch(
                        all: all.baseAddress!, length: length, ir: ir, span: span, pair: (l, r), starts: starts,
                        minimumPhaseLags: wholeLags, target: target, range: range,
                        levelLimits: smoothing < 1.0 / 8 ? (0.4, 0.35, 0.3) : (0.8, 0.35, 0.3))
                    if let found = context.search(designer: designer, estimator: estimator, error: error) {
                        headDelays[l] = found.0
                        headDelays[r] = found.1
                    }
                }
                if fitsBandLevels {
                    balanceInterauralLevels(
                        designer: designer, left: ir + l * span, right: ir + r * span,
                        leftInput: all.baseAddress! + l * length, rightInput: all.baseAddress! + r * length,
                        count: length)
                }
            }
        }
        // Each pair moved as a whole by less than a quarter frame so that its delays add up to a whole
        // number of frames: their fractions are then f and 1 − f, which the fractional-delay kernel a
        // slot folds into the taps attenuates equally (its magnitude is the same for both), so its
        // roll-off towards Nyquist leaves the interaural level difference alone.
        var maximumDelay = 0.0
        for pair in 0..<pairs {
            let (l, r) = (2 * pair, 2 * pair + 1)
            var d = (headDelays[l] + fileDelay(l), headDelays[r] + fileDelay(r))
            let sum = d.0 + d.1
            let shift = 0.5 * (sum.rounded() - sum)
            d = (max(0, d.0 + shift), max(0, d.1 + shift))
            delays[l] = Float(d.0)
            delays[r] = Float(d.1)
            maximumDelay = max(maximumDelay, d.0, d.1)
        }
        return maximumDelay
    }

    /// Where a fitted pair's octave-band interaural level difference is off by more than
    /// `interauralLevelTolerance` (each ear's compromise between its third-octave and octave levels can
    /// leave the two ears' errors of opposite sign), fits both ears again with that octave's targets moved
    /// apart by the difference, half on each ear, up to three times, so the pair's level difference
    /// matches the measurement's.
    static func balanceInterauralLevels(
        designer: MinimumPhaseDesigner, left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>,
        leftInput: UnsafePointer<Float>, rightInput: UnsafePointer<Float>, count: Int
    ) {
        var offsets: [Double] = []
        for _ in 0..<3 {
            guard let el = designer.bandErrors(left, to: leftInput, count: count),
                let er = designer.bandErrors(right, to: rightInput, count: count)
            else { return }
            let d = zip(el.octaves, er.octaves).map { $0 - $1 }
            guard let worst = d.map(abs).max(), worst > (offsets.isEmpty ? interauralLevelTolerance : 0.2) else {
                return
            }
            if offsets.isEmpty { offsets = [Double](repeating: 0, count: d.count) }
            for o in d.indices where abs(d[o]) > 0.2 { offsets[o] -= 0.5 * d[o] }
            designer.fitBandLevels(left, to: leftInput, count: count, octaveOffsets: offsets)
            designer.fitBandLevels(right, to: rightInput, count: count, octaveOffsets: offsets.map { -$0 })
        }
    }

    /// The octave-band interaural level difference (dB) above which `balanceInterauralLevels` refits a pair.
    static let interauralLevelTolerance = 0.4

    /// For each pair, another pair whose left ear equals its right ear and whose right ear equals its left
    /// ear, sample for sample (nil: none).
    static func mirrorPairs(_ samples: [Float], pairs: Int, length: Int) -> [Int?] {
        func key(_ filter: Int) -> Int {
            var h = Hasher()
            for i in 0..<length { h.combine(samples[filter * length + i].bitPattern) }
            return h.finalize()
        }
        func equal(_ a: Int, _ b: Int) -> Bool {
            for i in 0..<length where samples[a * length + i] != samples[b * length + i] { return false }
            return true
        }
        var byLeft: [Int: [Int]] = [:]
        for pair in 0..<pairs { byLeft[key(2 * pair), default: []].append(pair) }
        return (0..<pairs).map { pair in
            byLeft[key(2 * pair + 1)]?.first { j in
                j != pair && equal(2 * j, 2 * pair + 1) && equal(2 * j + 1, 2 * pair)
            }
        }
    }
}

// Control side (load time). For the measured pairs whose minimum-phase version cannot have both the
// broadband and the low-frequency interaural delay of the measurement, other designs that keep the
// measurement's interaural phase, tried in order until one does.

#if canImport(Glibc)
    import Glibc
#endif

extension SOFADataset {
    /// Largest error (frames) of either interaural lag that a designed pair may predict.
    static let interauralTolerance = 0.45

    /// One pair's search: its measurement, its minimum-phase filters in `ir` (left at `pair.0`, right at
    /// `pair.1`, `span` taps each), their whole-frame lags on the measurement and the measured lags.
    struct PairSearch {
        let all: UnsafePointer<Float>
        let length: Int
        let ir: UnsafeMutablePointer<Float>
        let span: Int
        let pair: (Int, Int)
        let starts: [Int]
        let minimumPhaseLags: (Int, Int)
        /// The measurement's interaural lags, broadband and below 1.5 kHz.
        let target: (Double, Double)
        let range: ClosedRange<Int>
        /// The most a candidate may be off (dB): the worse ear's third-octave RMS, the octave-band and the
        /// broadband interaural level difference; never less than the minimum-phase pair's own.
        let levelLimits: (Double, Double, Double)

        enum Candidate {
            /// Both ears cut from the measurement, `offset` frames from their onsets.
            case cut(offset: Int)
            /// Ear `fixedSlot` (0 left) minimum-phase (`cutFixed`: cut from its onset), the other matched to
            /// the measured cross-correlation from `offset` frames after its onset, with `emphasis` on the
            /// broadband peak.
            case matched(cutFixed: Bool, fixedSlot: Int, offset: Int, emphasis: Double)
        }

        /// The candidates in the order tried: cheap and close to the measurement first.
        func candidates(louder: Int) -> [Candidate] {
            var list: [Candidate] = [.cut(offset: -2), .cut(offset: 0)]
            for (cutFixed, weights) in [(false, [0.0, 10, 100]), (true, [0.0, 10, 100, 1000]), (false, [1000.0])] {
                for fixedSlot in [louder, 1 - louder] {
                    for offset in [-4, -2, 0, 2, 4, 8] {
                        for emphasis in weights {
                            list.append(
                                .matched(cutFixed: cutFixed, fixedSlot: fixedSlot, offset: offset, emphasis: emphasis))
                        }
                    }
                }
            }
            return list
        }

        /// Tries the candidates until one predicts both lags within `good` frames; leaves the best pair
        /// found in `ir` and returns its delays (frames, before the file's Data.Delay), or nil (the
        /// minimum-phase pair, predicted `error` frames off, stays).
        func search(
            designer: MinimumPhaseDesigner, estimator: HRIRDelayEstimator, error: Double, good: Double = 0.25
        ) -> (Double, Double)? {
            let (l, r) = pair
            let active = designer.active
            let faded = max(1, active / 4)
            let minimumPhase = Array(UnsafeBufferPointer(start: ir + l * span, count: 2 * span))
            var best = minimumPhase
            var bestError = error
            var delays: (Double, Double)?
            func levelErrors() -> (Double, Double, Double) {
                guard let el = designer.bandErrors(ir + l * span, to: all + l * length, count: length),
                    let er = designer.bandErrors(ir + r * span, to: all + r * length, count: length)
                else { return (0, 0, 0) }
                let octave = zip(el.octaves, er.octaves).map { abs($0 - $1) }.max() ?? 0
                return (max(el.thirdOctaveRMS, er.thirdOctaveRMS), octave, abs(el.broadband - er.broadband))
            }
            let baseline = levelErrors()
            let limits = (
                max(baseline.0, levelLimits.0), max(baseline.1, levelLimits.1), max(baseline.2, levelLimits.2)
            )
            /// Measures the pair now in `ir` (tap 0 of each ear at measured sample `positions`) and keeps
            /// it when its levels are within the limits and its lags the closest so far.
            func evaluate(_ positions: (Double, Double)) {
                let levels = levelErrors()
                guard levels.0 <= limits.0, levels.1 <= limits.1, levels.2 <= limits.2 else { return }
                estimator.load(2, ir + l * span, count: span)
                estimator.load(3, ir + r * span, count: span)
                let own = (
                    estimator.lag(2, 3, lowpass: false, range: range),
                    estimator.lag(2, 3, lowpass: true, range: range)
                )
                let broadband = target.0 - own.0
                let low = target.1 - own.1
                let interaural = min(max(0.5 * (broadband + low), low - 0.45), low + 0.45)
                let e = max(abs(own.0 + interaural - target.0), abs(own.1 + interaural - target.1))
                guard e < bestError else { return }
                bestError = e
                best = Array(UnsafeBufferPointer(start: ir + l * span, count: 2 * span))
                let centre = 0.5 * (positions.0 + positions.1)
                delays = (centre - 0.5 * interaural, centre + 0.5 * interaural)
            }
            /// Filter f cut from its measurement from sample `base` on, faded out as the designer fades,
            /// band levels fitted.
            func cut(_ f: Int, from base: Int) {
                for i in 0..<span {
                    let m = i - (active - faded)
                    let w = i >= active ? 0 : m < 0 ? 1 : 0.5 + 0.5 * cos(Double.pi * Double(m + 1) / Double(faded + 1))
                    let source = base + i
                    ir[f * span + i] = source < length ? Float(Double(all[f * length + source]) * w) : 0
                }
                designer.fitBandLevels(ir + f * span, to: all + f * length, count: length)
            }
            func energy(_ f: Int) -> Double {
                var e = 0.0
                for i in 0..<length { e += Double(all[f * length + i]) * Double(all[f * length + i]) }
                return e
            }
            for candidate in candidates(louder: energy(l) >= energy(r) ? 0 : 1) {
                if bestError < good { break }
                switch candidate {
                case .cut(let offset):
                    let bases = (max(0, starts[l] + offset), max(0, starts[r] + offset))
                    cut(l, from: bases.0)
                    cut(r, from: bases.1)
                    evaluate((Double(bases.0), Double(bases.1)))
                case .matched(let cutFixed, let fixedSlot, let offset, let emphasis):
                    let (fixed, other) = fixedSlot == 0 ? (l, r) : (r, l)
                    var p = fixedSlot == 0 ? minimumPhaseLags.0 : minimumPhaseLags.1
                    if cutFixed {
                        p = max(0, starts[fixed] - 2)
                        cut(fixed, from: p)
                    } else {
                        minimumPhase.withUnsafeBufferPointer { m in
                            (ir + fixed * span).update(from: m.baseAddress! + (fixed - l) * span, count: span)
                        }
                    }
                    let q = max(0, starts[other] + offset)
                    // The broadband peak in the lags of fixed ⋆ other (from the fixed ear's tap 0 to the
                    // other's).
                    let peak = (fixedSlot == 0 ? target.0 : -target.0) - Double(q - p)
                    InterauralCorrelationMatcher.design(
                        fixed: ir + fixed * span, active: active, span: span, measuredFixed: all + fixed * length,
                        measuredOther: all + other * length, length: length, fixedStart: p, otherStart: q,
                        emphasis: emphasis > 0 ? (peak, emphasis) : nil, into: ir + other * span)
                    designer.fitBandLevels(ir + other * span, to: all + other * length, count: length)
                    evaluate(fixedSlot == 0 ? (Double(p), Double(q)) : (Double(q), Double(p)))
                }
            }
            (ir + l * span).update(from: best, count: 2 * span)
            return delays
        }
    }
}

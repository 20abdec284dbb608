// Control side. Loading steps of `SOFADataset` that rewrite libmysofa's arrays: resampling, onset
// alignment and trimming, and the left/right symmetry check.
import CMySofa

#if canImport(Glibc)
    import Glibc
#endif

extension SOFADataset {
    struct Prepared {
        var resampledLength: Int
        var filterLength: Int
        var maximumDelay: Double
    }

    /// Resamples, aligns and trims the IRs of `hrtf` in place (replacing Data.IR, Data.Delay, N and the
    /// sampling rate with malloc'd arrays that `mysofa_free` releases).
    static func prepare(
        _ hrtf: UnsafeMutablePointer<MYSOFA_HRTF>, path: String, sampleRate: Double, options: Options
    ) throws(SOFALoadError) -> Prepared {
        let m = Int(hrtf.pointee.M)
        let n = Int(hrtf.pointee.N)
        let filters = 2 * m
        let sourceRate = Double(hrtf.pointee.DataSamplingRate.values[0])
        guard let irValues = hrtf.pointee.DataIR.values, Int(hrtf.pointee.DataIR.elements) == filters * n else {
            throw SOFALoadError(path: path, reason: "Data.IR does not hold M × 2 × N values")
        }
        // 1. Resample (Data.Delay is in samples, AES69: scale it too).
        var samples: [Float]
        var length = n
        let ratio = sampleRate / sourceRate
        if sampleRate != sourceRate {
            do {
                (samples, length) = try HRIRResampler.resample(
                    irValues, count: filters, length: n, from: sourceRate, to: sampleRate)
            } catch {
                throw SOFALoadError(path: path, reason: error.reason)
            }
        } else {
            samples = Array(UnsafeBufferPointer(start: irValues, count: filters * n))
        }
        let delayCount = Int(hrtf.pointee.DataDelay.elements)
        let fileDelays = hrtf.pointee.DataDelay.values
        func fileDelay(_ filter: Int) -> Double {
            guard let fileDelays, delayCount > 0 else { return 0 }
            let index = delayCount >= filters ? filter : filter % delayCount
            return Double(fileDelays[index]) * ratio
        }
        // 2. Onset and tail of each filter by cumulative energy.
        let fraction = max(0, min(options.discardedEnergyFraction, 0.01))
        var starts = [Int](repeating: 0, count: filters)
        var span = 1
        for f in 0..<filters {
            let base = f * length
            var energy = 0.0
            for i in 0..<length { energy += Double(samples[base + i]) * Double(samples[base + i]) }
            let allowed = energy * fraction
            var start = 0
            var head = 0.0
            while start < length - 1 {
                let e = Double(samples[base + start]) * Double(samples[base + start])
                if head + e > allowed { break }
                head += e
                start += 1
            }
            var end = length
            var tail = 0.0
            while end > start + 1 {
                let e = Double(samples[base + end - 1]) * Double(samples[base + end - 1])
                if tail + e > allowed { break }
                tail += e
                end -= 1
            }
            starts[f] = start
            span = max(span, end - start)
        }
        // 3. New arrays: every filter cut to `span` taps from its onset (zero past the end), or replaced by
        //    its minimum-phase version.
        let trimmedSpan = span
        if options.minimumPhase {
            span = max(1, options.maximumFilterLength ?? 128)
        } else if let cap = options.maximumFilterLength {
            span = max(1, min(span, cap))
        }
        let ir = malloc(filters * span * MemoryLayout<Float>.stride)!.bindMemory(
            to: Float.self, capacity: filters * span)
        let delays = malloc(filters * MemoryLayout<Float>.stride)!.bindMemory(to: Float.self, capacity: filters)
        var maximumDelay = 0.0
        if options.minimumPhase {
            // 1/6-octave smoothing for the 64-tap filters (HRTF at 48 kHz); 1/12 octave from 2.1 ms up
            // (HRTF HQ's 128 taps), which follow a notch closely enough to keep it.
            let smoothing = Double(span) / sampleRate >= 2.1e-3 ? 1.0 / 12 : 1.0 / 6
            let designer = MinimumPhaseDesigner(
                inputLength: length, length: span, sampleRate: sampleRate,
                smoothingOctaves: smoothing)
            let estimator = HRIRDelayEstimator(maximumLength: length, sampleRate: sampleRate)
            let itdRange = Int((1.5e-3 * sampleRate).rounded(.up))
            samples.withUnsafeBufferPointer { all in
                for pair in 0..<m {
                    let (l, r) = (2 * pair, 2 * pair + 1)
                    let range = -itdRange...itdRange
                    var aligned = (0.0, 0.0)
                    /// Designs ear `slot` (0 left, 1 right) with `lowDelay` and measures where it sits.
                    func design(_ slot: Int, lowDelay: Double) {
                        let f = slot == 0 ? l : r
                        let source = all.baseAddress! + f * length
                        let lag = designer.design(
                            source, count: length, into: ir + f * span,
                            lags: (starts[f] - 8)...(starts[f] + span), lowDelay: lowDelay)
                        estimator.load(slot + 2, ir + f * span, count: span)
                        // Where the short filter sits on its original, to a fraction of a frame.
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
                    let dl = max(0, centre - 0.5 * interaural + fileDelay(l))
                    let dr = max(0, centre + 0.5 * interaural + fileDelay(r))
                    delays[l] = Float(dl)
                    delays[r] = Float(dr)
                    maximumDelay = max(maximumDelay, dl, dr)
                }
            }
        } else {
            let faded = span < trimmedSpan ? max(1, span / 4) : 0
            for f in 0..<filters {
                for i in 0..<span {
                    let source = starts[f] + i
                    let m = i - (span - faded)
                    let w = m < 0 ? 1 : Float(0.5 + 0.5 * cos(Double.pi * Double(m + 1) / Double(faded + 1)))
                    ir[f * span + i] = source < length ? samples[f * length + source] * w : 0
                }
                let d = Double(starts[f]) + fileDelay(f)
                delays[f] = Float(d)
                maximumDelay = max(maximumDelay, d)
            }
        }
        free(hrtf.pointee.DataIR.values)
        hrtf.pointee.DataIR.values = ir
        hrtf.pointee.DataIR.elements = UInt32(filters * span)
        free(hrtf.pointee.DataDelay.values)
        hrtf.pointee.DataDelay.values = delays
        hrtf.pointee.DataDelay.elements = UInt32(filters)
        hrtf.pointee.N = UInt32(span)
        hrtf.pointee.DataSamplingRate.values[0] = Float(sampleRate)
        return Prepared(resampledLength: length, filterLength: span, maximumDelay: maximumDelay)
    }

    /// True when every measurement (spherical positions: azimuth counter-clockwise in degrees, elevation,
    /// radius) has a mirror image at −azimuth whose right ear and delay equal its left ear and delay,
    /// within 1e-6 of the set's largest tap.
    static func isMirrorSymmetric(_ hrtf: UnsafeMutablePointer<MYSOFA_HRTF>) -> Bool {
        let m = Int(hrtf.pointee.M)
        let k = Int(hrtf.pointee.N)
        let c = Int(hrtf.pointee.C)
        guard c == 3, let positions = hrtf.pointee.SourcePosition.values,
            let ir = hrtf.pointee.DataIR.values, let delays = hrtf.pointee.DataDelay.values
        else { return false }
        var peak: Float = 0
        for i in 0..<(2 * m * k) { peak = max(peak, abs(ir[i])) }
        let tolerance = max(peak, 1e-30) * 1e-6
        // Index positions by rounded (azimuth, elevation, radius) so each mirror lookup is O(1).
        func key(_ azimuth: Float, _ elevation: Float, _ radius: Float) -> [Int] {
            var a = azimuth.truncatingRemainder(dividingBy: 360)
            if a < 0 { a += 360 }
            var ia = Int((a * 100).rounded())
            if ia == 36_000 { ia = 0 }
            return [ia, Int((elevation * 100).rounded()), Int((radius * 1000).rounded())]
        }
        var index: [[Int]: Int] = [:]
        for i in 0..<m { index[key(positions[3 * i], positions[3 * i + 1], positions[3 * i + 2])] = i }
        for i in 0..<m {
            guard let j = index[key(-positions[3 * i], positions[3 * i + 1], positions[3 * i + 2])] else {
                return false
            }
            let left = ir + 2 * i * k
            let mirroredRight = ir + (2 * j + 1) * k
            for t in 0..<k where abs(left[t] - mirroredRight[t]) > tolerance { return false }
            if abs(delays[2 * i] - delays[2 * j + 1]) > 1e-3 { return false }
        }
        return true
    }
}

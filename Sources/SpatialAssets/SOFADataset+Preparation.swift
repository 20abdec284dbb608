// Control side. Loading steps of `SOFADataset` that rewrite libmysofa's arrays: resampling, onset
// alignment and trimming, and the left/right symmetry check.
import AudioDSP
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
            maximumDelay = designMinimumPhasePairs(
                samples, pairs: m, length: length, span: span, starts: starts, sampleRate: sampleRate,
                fitsBandLevels: true, reservedTaps: HRIRFractionalDelay.taps - 1, ir: ir, delays: delays,
                fileDelay: fileDelay)
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

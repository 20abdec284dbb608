// Control side. Resamples a set of equally long impulse responses with libsoxr (allocates; may take
// tens of milliseconds for a whole HRTF set).
import CSoxr

/// Band-limited resampling of impulse responses to the engine rate (libsoxr, `SOXR_HQ`: linear phase,
/// 20-bit precision; soxr removes its filter delay, so an onset at n lands at n × target/source).
///
/// An impulse response sampled at a higher rate has more taps per second, so convolving with it sums
/// more terms: the samples are scaled by source/target to keep the filter's frequency response (what
/// libmysofa's own `mysofa_resample` does). Output length: round(N × target/source).
enum HRIRResampler {
    /// `count` responses of `length` taps each, contiguous in `input`; returns them resampled, contiguous,
    /// and the new length. Throws a description of soxr's complaint.
    static func resample(
        _ input: UnsafePointer<Float>, count: Int, length: Int, from sourceRate: Double, to targetRate: Double
    ) throws(SOFALoadError) -> (samples: [Float], length: Int) {
        let newLength = max(1, Int((Double(length) * targetRate / sourceRate).rounded()))
        var error: soxr_error_t?
        var io = soxr_io_spec(SOXR_FLOAT32_I, SOXR_FLOAT32_I)
        var quality = soxr_quality_spec(UInt(SOXR_HQ), 0)
        guard let soxr = soxr_create(sourceRate, targetRate, 1, &error, &io, &quality, nil) else {
            throw SOFALoadError(path: "", reason: "soxr_create: \(error.map { String(cString: $0) } ?? "failed")")
        }
        defer { soxr_delete(soxr) }
        let capacity = newLength + 256
        var scratch = [Float](repeating: 0, count: capacity)
        var output = [Float](repeating: 0, count: count * newLength)
        let scale = Float(sourceRate / targetRate)
        for i in 0..<count {
            var produced = 0
            let failure: soxr_error_t? = scratch.withUnsafeMutableBufferPointer { out in
                var consumed = 0
                var made = 0
                if let e = soxr_process(soxr, input + i * length, length, &consumed, out.baseAddress, capacity, &made) {
                    return e
                }
                produced = made
                // Flush the filter tail (input nil) until soxr has nothing more or the buffer is full.
                while produced < capacity {
                    made = 0
                    if let e = soxr_process(soxr, nil, 0, nil, out.baseAddress! + produced, capacity - produced, &made)
                    {
                        return e
                    }
                    if made == 0 { break }
                    produced += made
                }
                return nil
            }
            if let failure { throw SOFALoadError(path: "", reason: "soxr: \(String(cString: failure))") }
            guard produced >= newLength else {
                throw SOFALoadError(path: "", reason: "soxr produced \(produced) of \(newLength) samples")
            }
            for n in 0..<newLength { output[i * newLength + n] = scratch[n] * scale }
            soxr_clear(soxr)
        }
        return (output, newLength)
    }
}

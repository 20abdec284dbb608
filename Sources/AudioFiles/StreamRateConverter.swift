// Disk thread (created on the control side). Sample-rate conversion of a stream as it decodes:
// soxr in streaming mode, pulling interleaved source frames on demand.

import CSoxr

/// Converts interleaved frames from one rate to another, block by block.
///
/// soxr's streaming mode is delay-compensated: after the final flush the output of N source
/// frames holds round(N × target / source) frames, aligned with the source, as
/// `SampleRateConverter` (one-shot) gives. Quality `SOXR_HQ` (20 bits), as for loading.
/// One thread at a time.
final class StreamRateConverter {
    let channelCount: Int
    private let path: String
    private let targetSampleRate: Double
    private let resampler: soxr_t
    /// Interleaved source frames pulled but not yet consumed by soxr.
    private var input: [Float]
    private var inputFrames = 0
    private var inputOffset = 0
    private var sourceEnded = false
    private var flushed = false

    /// - Throws: `.rateConversionFailed` when soxr refuses the rates.
    init(from sourceRate: Double, to targetRate: Double, channelCount: Int, path: String) throws(AudioFileError) {
        self.channelCount = channelCount
        self.path = path
        targetSampleRate = targetRate
        var error: soxr_error_t?
        var io = soxr_io_spec(SOXR_FLOAT32_I, SOXR_FLOAT32_I)
        var quality = soxr_quality_spec(UInt(SOXR_HQ), 0)
        guard let made = soxr_create(sourceRate, targetRate, UInt32(channelCount), &error, &io, &quality, nil) else {
            throw .rateConversionFailed(
                path: path, targetSampleRate: targetRate,
                reason: error.map { String(cString: $0) } ?? "soxr_create failed")
        }
        resampler = made
        input = [Float](repeating: 0, count: 4096 * channelCount)
    }

    deinit { soxr_delete(resampler) }

    /// Bytes of the source scratch (soxr's own filter state not counted).
    var bufferBytes: Int { input.count * MemoryLayout<Float>.size }

    /// Forgets all history, ready for a signal that starts afresh.
    func reset() {
        soxr_clear(resampler)
        inputFrames = 0
        inputOffset = 0
        sourceEnded = false
        flushed = false
    }

    /// Produces up to `frames` converted interleaved frames into `output`, pulling source frames
    /// from `source` (which returns 0 at its end); returns 0 once the source has ended and the
    /// filter's tail has been flushed.
    func read(
        into output: UnsafeMutablePointer<Float>, frames: Int,
        from source: (UnsafeMutablePointer<Float>, Int) throws(AudioFileError) -> Int
    ) throws(AudioFileError) -> Int {
        guard frames > 0 else { return 0 }
        while true {
            if inputOffset >= inputFrames && !sourceEnded {
                let capacity = input.count / channelCount
                let got = try input.withUnsafeMutableBufferPointer { (buffer) throws(AudioFileError) -> Int in
                    try source(buffer.baseAddress!, capacity)
                }
                inputFrames = got
                inputOffset = 0
                if got == 0 { sourceEnded = true }
            }
            var consumed = 0
            var made = 0
            let error: soxr_error_t?
            if sourceEnded {
                if flushed { return 0 }
                // A null input tells soxr the signal has ended: it flushes its filter.
                error = soxr_process(resampler, nil, 0, nil, output, frames, &made)
                if made == 0 { flushed = true }
            } else {
                error = input.withUnsafeBufferPointer { buffer in
                    soxr_process(
                        resampler, buffer.baseAddress! + inputOffset * channelCount, inputFrames - inputOffset,
                        &consumed, output, frames, &made)
                }
                inputOffset += consumed
            }
            if let error {
                throw .rateConversionFailed(
                    path: path, targetSampleRate: targetSampleRate, reason: String(cString: error))
            }
            if made > 0 || flushed { return made }
        }
    }
}

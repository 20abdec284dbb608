// Control side. One-shot sample-rate conversion of in-memory audio with libsoxr. Allocates and
// may take milliseconds per second of audio; never call it from the render thread.

import CSoxr

/// Converts `AudioData` to another sample rate in one pass with libsoxr.
///
/// Algorithm: soxr's band-limited resampler (Robs, "The SoX Resampler library", libsoxr 0.1.3,
/// https://sourceforge.net/p/soxr/), called through `soxr_oneshot`. `.high` is `SOXR_HQ`:
/// 20-bit precision (≈ -120 dB aliasing/imaging), linear phase, pass band to 91.3 % of the lower
/// Nyquist frequency. Linear phase keeps transients symmetric and soxr removes the filter delay,
/// so sample n of the input lands at n × target / source in the output.
///
/// I/O format: split (planar) float32, `SOXR_FLOAT32_S`: one input and one output buffer per
/// channel, matching `AudioData`'s layout so no interleaving pass is needed.
///
/// Output length: exactly `outputFrameCount(inputFrames:sourceRate:targetRate:)` =
/// `round(frames × target / source)`. The input is fed as one final block (soxr flushes its
/// filter tail), so nothing is lost at the end and nothing is prepended at the start.
public struct SampleRateConverter: Sendable, Equatable {
    /// soxr quality recipe.
    public enum Quality: Sendable, Equatable {
        /// `SOXR_MQ`: 16-bit precision; for previews.
        case medium
        /// `SOXR_HQ`: 20-bit precision; the default, beyond what a 16-bit source can show.
        case high
        /// `SOXR_VHQ`: 28-bit precision; for 24-bit masters that will be processed further.
        case veryHigh
    }

    /// The recipe every conversion uses.
    public var quality: Quality

    public init(quality: Quality = .high) {
        self.quality = quality
    }

    /// Frames produced for `inputFrames` frames: `round(inputFrames × targetRate / sourceRate)`
    /// (halves round away from zero). Rates in Hz, both > 0.
    public static func outputFrameCount(inputFrames: Int, sourceRate: Double, targetRate: Double) -> Int {
        Int((Double(inputFrames) * targetRate / sourceRate).rounded())
    }

    /// Returns `data` resampled to `targetSampleRate`.
    ///
    /// - Parameters:
    ///   - data: input with a positive, finite `sampleRate` and equal-length channels.
    ///   - targetSampleRate: output rate in Hz; positive and finite. The ratio target/source must
    ///     lie within [1/256, 256] (soxr's practical range; wider ratios are refused here).
    /// - Returns: a copy at the new rate, `outputFrameCount(…)` frames long. When the rates are
    ///   equal, `data` is returned unchanged.
    /// - Throws: `SampleRateConversionError` for invalid rates, unequal channel lengths or a soxr
    ///   failure.
    public func convert(_ data: AudioData, to targetSampleRate: Double) throws(SampleRateConversionError)
        -> AudioData
    {
        let sourceRate = data.sampleRate
        guard sourceRate.isFinite, sourceRate > 0 else {
            throw SampleRateConversionError(reason: "source sample rate must be positive, not \(sourceRate) Hz")
        }
        guard targetSampleRate.isFinite, targetSampleRate > 0 else {
            throw SampleRateConversionError(
                reason: "target sample rate must be positive, not \(targetSampleRate) Hz")
        }
        let ratio = targetSampleRate / sourceRate
        guard ratio >= 1.0 / 256, ratio <= 256 else {
            throw SampleRateConversionError(
                reason: "ratio \(targetSampleRate) / \(sourceRate) Hz is outside [1/256, 256]")
        }
        guard data.hasEqualChannelLengths else {
            throw SampleRateConversionError(reason: "channels have different lengths")
        }
        if targetSampleRate == sourceRate { return data }

        let channelCount = data.channelCount
        let inputFrames = data.frameCount
        let outputFrames = Self.outputFrameCount(
            inputFrames: inputFrames, sourceRate: sourceRate, targetRate: targetSampleRate)
        guard channelCount > 0, outputFrames > 0 else {
            return AudioData(
                channels: [[Float]](repeating: [], count: channelCount), sampleRate: targetSampleRate)
        }

        // soxr_oneshot stops short when the output space equals the exact count and the ideal
        // length is fractional (48 k → 8 k, 20 000 frames gives 2 326 of 3 333), so give it room;
        // with room it drains to exactly `outputFrames`.
        let outputCapacity = outputFrames + 64
        // Planar buffers with stable addresses for soxr: input copied in, output copied out.
        let input = UnsafeMutableBufferPointer<Float>.allocate(capacity: max(1, inputFrames * channelCount))
        let output = UnsafeMutableBufferPointer<Float>.allocate(capacity: outputCapacity * channelCount)
        defer {
            input.deallocate()
            output.deallocate()
        }
        for (index, channel) in data.channels.enumerated() {
            _ = UnsafeMutableBufferPointer(rebasing: input[(index * inputFrames)..<((index + 1) * inputFrames)])
                .initialize(from: channel)
        }
        output.initialize(repeating: 0)
        let inputPointers: [UnsafePointer<Float>?] = (0..<channelCount).map {
            UnsafePointer(input.baseAddress! + $0 * inputFrames)
        }
        let outputPointers: [UnsafeMutablePointer<Float>?] = (0..<channelCount).map {
            output.baseAddress! + $0 * outputCapacity
        }

        var ioSpec = soxr_io_spec(SOXR_FLOAT32_S, SOXR_FLOAT32_S)
        var qualitySpec = soxr_quality_spec(quality.recipe, 0)
        var runtimeSpec = soxr_runtime_spec(1)
        var inputDone = 0
        var outputDone = 0
        let failure: soxr_error_t? = inputPointers.withUnsafeBufferPointer { inputs in
            outputPointers.withUnsafeBufferPointer { outputs in
                soxr_oneshot(
                    sourceRate, targetSampleRate, UInt32(channelCount),
                    UnsafeRawPointer(inputs.baseAddress), inputFrames, &inputDone,
                    UnsafeMutableRawPointer(mutating: outputs.baseAddress), outputCapacity, &outputDone,
                    &ioSpec, &qualitySpec, &runtimeSpec)
            }
        }
        if let failure {
            throw SampleRateConversionError(reason: "soxr: \(String(cString: failure))")
        }
        guard outputDone >= outputFrames else {
            throw SampleRateConversionError(
                reason: "soxr produced \(outputDone) frames, expected \(outputFrames)")
        }
        let channels = (0..<channelCount).map { index in
            Array(output[(index * outputCapacity)..<(index * outputCapacity + outputFrames)])
        }
        return AudioData(channels: channels, sampleRate: targetSampleRate)
    }
}

extension SampleRateConverter.Quality {
    /// soxr recipe constant for `soxr_quality_spec`.
    fileprivate var recipe: UInt {
        switch self {
        case .medium: UInt(SOXR_MQ)
        case .high: UInt(SOXR_HQ)
        case .veryHigh: UInt(SOXR_VHQ)
        }
    }
}

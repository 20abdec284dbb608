// Control side. Deinterleaved 32-bit float PCM held in memory: what the reader returns, the
// writer and the sample-rate converter accept. Never touched by the render thread directly.

/// Deinterleaved PCM audio: one `[Float]` per channel, all of the same length.
///
/// Samples are nominally in [-1, 1); values outside that range are kept as they are (the writer
/// clips them only when it stores integer samples).
///
/// Invariant: every element of `channels` has `frameCount` samples. The initializer does not
/// enforce it; `AudioFileWriter` and `SampleRateConverter` check it and throw when it is broken.
public struct AudioData: Sendable, Equatable {
    /// One array of samples per channel (index 0 = left for stereo).
    public var channels: [[Float]]

    /// Frames per second, in Hz. Positive and finite for any value produced by this module.
    public var sampleRate: Double

    /// - Parameters:
    ///   - channels: one array per channel, all of the same length.
    ///   - sampleRate: frames per second, in Hz (> 0).
    public init(channels: [[Float]], sampleRate: Double) {
        self.channels = channels
        self.sampleRate = sampleRate
    }

    /// Number of channels (0 only for a value built by hand with no channels).
    public var channelCount: Int { channels.count }

    /// Number of frames (samples per channel); the length of the first channel.
    public var frameCount: Int { channels.first?.count ?? 0 }

    /// Length in seconds: `frameCount / sampleRate` (0 when the rate is not positive).
    public var duration: Double {
        sampleRate > 0 ? Double(frameCount) / sampleRate : 0
    }

    /// True when every channel has the same number of frames.
    var hasEqualChannelLengths: Bool {
        let count = frameCount
        return channels.allSatisfy { $0.count == count }
    }
}

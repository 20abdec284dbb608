// Control side owns it; the render thread reads its samples through raw pointers while a player uses it.

/// Where a buffer's samples came from, so a graph can be saved as a patch again.
public enum SampleBufferOrigin: Sendable, Equatable {
    /// Decoded from a file (the region counts the file's own frames; nil count = to the end).
    case file(path: String, startFrame: Int, frameCount: Int?)
    /// Synthesized (the patch format's `generate:` fields).
    case generated(waveform: String, frequency: Double?, duration: Double, amplitude: Double, channelCount: Int)
    /// Made in memory by code; cannot be saved.
    case memory
}

/// Immutable planar audio at the engine rate, preloaded for players.
///
/// Freed only on the control side, after the render thread has consumed every command that pointed
/// at it (see `Graveyard`).
public final class SampleBuffer: @unchecked Sendable {
    // @unchecked: immutable samples in raw storage, freed only once nothing can reach them (Graveyard).
    public let name: String
    public let channelCount: Int
    public let frameCount: Int
    public let sampleRate: Double
    public let origin: SampleBufferOrigin
    /// The rate of the file the samples were decoded from (nil: made at the engine rate), so a segment
    /// given in the file's own frames can be found in the converted samples.
    public let sourceSampleRate: Double?
    /// Channel start pointers (`channelCount` of them).
    let channelPointers: UnsafeMutablePointer<UnsafeMutablePointer<Float>>
    private let storage: UnsafeMutablePointer<Float>

    /// Copies `channels` (planar; shorter channels are padded with silence). Requires at least one channel.
    public init(
        name: String, channels: [[Float]], sampleRate: Double, origin: SampleBufferOrigin = .memory,
        sourceSampleRate: Double? = nil
    ) {
        self.name = name
        self.sourceSampleRate = sourceSampleRate
        self.origin = origin
        self.sampleRate = sampleRate
        channelCount = max(1, channels.count)
        frameCount = channels.map(\.count).max() ?? 0
        storage = .allocate(capacity: max(1, channelCount * frameCount))
        storage.initialize(repeating: 0, count: max(1, channelCount * frameCount))
        channelPointers = .allocate(capacity: channelCount)
        for c in 0..<channelCount {
            let start = storage + c * frameCount
            channelPointers[c] = start
            if c < channels.count {
                channels[c].withUnsafeBufferPointer { src in
                    if let base = src.baseAddress { start.update(from: base, count: src.count) }
                }
            }
        }
    }

    deinit {
        channelPointers.deallocate()
        storage.deallocate()
    }

    /// A copy of channel `index` (for tests and tools).
    /// True when `other` holds the same samples, bit for bit, at the same rate: a hot reload keeps a
    /// buffer whose audio did not change rather than hand its players a copy.
    public func hasSameAudio(as other: SampleBuffer) -> Bool {
        guard channelCount == other.channelCount, frameCount == other.frameCount, sampleRate == other.sampleRate
        else { return false }
        for i in 0..<(channelCount * frameCount) where storage[i].bitPattern != other.storage[i].bitPattern {
            return false
        }
        return true
    }

    public func channel(_ index: Int) -> [Float] {
        Array(UnsafeBufferPointer(start: channelPointers[index], count: frameCount))
    }
}

// Control side owns it; the render thread reads its samples through raw pointers while a player uses it.

/// Immutable planar audio at the engine rate, preloaded for players.
///
/// Freed only on the control side, after the render thread has consumed every command that pointed
/// at it (see `Graveyard`).
public final class SampleBuffer: @unchecked Sendable {
    public let name: String
    public let channelCount: Int
    public let frameCount: Int
    public let sampleRate: Double
    /// Channel start pointers (`channelCount` of them).
    let channelPointers: UnsafeMutablePointer<UnsafeMutablePointer<Float>>
    private let storage: UnsafeMutablePointer<Float>

    /// Copies `channels` (planar; shorter channels are padded with silence). Requires at least one channel.
    public init(name: String, channels: [[Float]], sampleRate: Double) {
        self.name = name
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
    public func channel(_ index: Int) -> [Float] {
        Array(UnsafeBufferPointer(start: channelPointers[index], count: frameCount))
    }
}

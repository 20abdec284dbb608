// Render side. State and kernel of a buffer player: reads a preloaded region once or looping.


/// What a player plays: a region of a preloaded, engine-rate sample buffer.
public struct PlayerMaterial: BitwiseCopyable {
    /// Channel start pointers of the buffer (owned by a `SampleBuffer` on the control side).
    public var channels: UnsafePointer<UnsafeMutablePointer<Float>>?
    public var channelCount: Int
    /// First frame of the region inside the buffer.
    public var regionStart: Int
    /// Frames in the region (> 0 when `channels` is non-nil).
    public var regionLength: Int
    public var isLooping: Bool

    @inlinable
    public init(channels: UnsafePointer<UnsafeMutablePointer<Float>>?, channelCount: Int, regionStart: Int,
                regionLength: Int, isLooping: Bool) {
        self.channels = channels
        self.channelCount = channelCount
        self.regionStart = regionStart
        self.regionLength = regionLength
        self.isLooping = isLooping
    }

    /// No material: the player outputs silence.
    public static var none: PlayerMaterial {
        PlayerMaterial(channels: nil, channelCount: 0, regionStart: 0, regionLength: 0, isLooping: false)
    }
}

/// A player's transport: material, read position and whether it runs.
public struct PlayerState: BitwiseCopyable {
    public var material: PlayerMaterial = .none
    /// Frames already played inside the region.
    public var position: Int = 0
    public var isPlaying: Bool = false
    /// Stable node number used in events.
    public var nodeID: Int32

    public init(nodeID: Int32) { self.nodeID = nodeID }

    /// Writes `frames` frames into `bus` and advances. When a non-looping region ends during this call
    /// the player stops and rewinds, and the return value is the offset of the first frame after the
    /// region; otherwise -1.
    @inlinable
    public mutating func render(into bus: BusRef, frames: Int) -> Int {
        for c in 0..<bus.channelCount { MixKernel.clear(bus.channel(c), count: frames) }
        guard isPlaying, let source = material.channels, material.regionLength > 0 else { return -1 }
        var written = 0
        while written < frames {
            let count = min(frames &- written, material.regionLength &- position)
            let readStart = material.regionStart &+ position
            let channels = min(bus.channelCount, material.channelCount)
            for c in 0..<channels {
                MixKernel.copy(source[c] + readStart, to: bus.channel(c) + written, count: count)
            }
            written &+= count
            position &+= count
            if position >= material.regionLength {
                position = 0
                if !material.isLooping {
                    isPlaying = false
                    return written
                }
            }
        }
        return -1
    }
}

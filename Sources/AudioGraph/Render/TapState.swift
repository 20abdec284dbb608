// Both sides. A tap's audio ring: the render thread pushes interleaved frames, the control side pops.
import AudioDSP
import Synchronization

/// The render→control channel of one tap. Owned by the control side's tap record; the render thread
/// uses it through an `Unmanaged` reference and never retains it.
public final class TapRing: @unchecked Sendable {
    // @unchecked: one writer (the render thread) and one reader (poll), ordered by its atomics.
    /// Interleaved samples (frames × channelCount).
    public let samples: SPSCQueue<Float>
    public let channelCount: Int
    /// Frames the render side dropped because the control side fell behind.
    public let droppedFrames = Atomic<Int>(0)

    public init(channelCount: Int, capacityFrames: Int) {
        self.channelCount = channelCount
        samples = SPSCQueue(minimumCapacity: capacityFrames * channelCount)
    }

    deinit { samples.deallocate() }
}

/// Render-side state of a tap step: the ring and a scratch buffer for interleaving one sub-block.
public struct TapState: BitwiseCopyable {
    public var ring: Unmanaged<TapRing>
    public var scratch: UnsafeMutablePointer<Float>
    public var channelCount: Int
}

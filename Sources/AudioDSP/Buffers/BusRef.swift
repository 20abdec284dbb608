// Render side. A non-owning view of one node output bus inside a program's buffer slab.

/// Planar audio for one bus: `channelCount` channels of `stride` samples each, starting at `data`.
public struct BusRef: BitwiseCopyable {
    /// First sample of channel 0.
    public var data: UnsafeMutablePointer<Float>
    /// Channels on this bus (1...64).
    public var channelCount: Int
    /// Distance in samples between channel starts (the program's maximum sub-block).
    public var stride: Int

    @inlinable
    public init(data: UnsafeMutablePointer<Float>, channelCount: Int, stride: Int) {
        self.data = data
        self.channelCount = channelCount
        self.stride = stride
    }

    /// The first sample of channel `index`.
    @inlinable
    public func channel(_ index: Int) -> UnsafeMutablePointer<Float> { data + index &* stride }
}

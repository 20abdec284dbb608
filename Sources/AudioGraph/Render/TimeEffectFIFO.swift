// Render side (serving) and control side (allocation). The output FIFO of a time effect.
import AudioDSP

/// One sub-block of a time effect's output, pulled from the kernel in fixed quanta of `maxBlockFrames`
/// and served in whatever pieces the host's periods and timed commands cut the sub-blocks into, so the
/// kernel (and the chain it clocks) sees the same sequence of calls whatever the host block size.
public struct TimeEffectFIFO: BitwiseCopyable {
    /// `channelCount × maxBlockFrames` samples.
    public var bus: BusRef
    /// Frames not yet served, starting at `readOffset`.
    public var available: Int
    public var readOffset: Int

    /// Control side.
    static func allocate(channelCount: Int, maxBlockFrames: Int) -> UnsafeMutablePointer<TimeEffectFIFO> {
        let storage = UnsafeMutablePointer<Float>.allocate(capacity: max(1, channelCount * maxBlockFrames))
        storage.initialize(repeating: 0, count: max(1, channelCount * maxBlockFrames))
        let fifo = UnsafeMutablePointer<TimeEffectFIFO>.allocate(capacity: 1)
        fifo.initialize(
            to: TimeEffectFIFO(
                bus: BusRef(data: storage, channelCount: channelCount, stride: maxBlockFrames),
                available: 0, readOffset: 0))
        return fifo
    }

    /// Control side, once no program references it.
    static func free(_ fifo: UnsafeMutablePointer<TimeEffectFIFO>) {
        fifo.pointee.bus.data.deallocate()
        fifo.deinitialize(count: 1)
        fifo.deallocate()
    }
}

// Control side. Taps: copies of a node's output bus handed to control-side code without blocking audio.
import AudioDSP

/// A block of tapped audio, delivered on the thread that calls `Engine.poll()`.
public struct TapBuffer: Sendable {
    /// Planar samples, `frameCount` per channel.
    public var channels: [[Float]]
    public var frameCount: Int
    /// Index of the block's first frame in the tap's stream (0 for the first delivered frame).
    public var streamFrame: Int
}

/// A tap's control-side record: its ring, its render state and its delivery handler.
final class TapRecord {
    let id: Int
    let node: String
    let frameCount: Int
    let handler: @Sendable (TapBuffer) -> Void
    let ring: TapRing
    let state: UnsafeMutablePointer<TapState>
    private var pending: [Float] = []
    private var delivered = 0
    private var reportedDrops = 0

    init(
        id: Int, node: String, channelCount: Int, frameCount: Int, capacityFrames: Int, maxBlockFrames: Int,
        handler: @escaping @Sendable (TapBuffer) -> Void
    ) {
        self.id = id
        self.node = node
        self.frameCount = frameCount
        self.handler = handler
        ring = TapRing(channelCount: channelCount, capacityFrames: capacityFrames)
        let scratch = UnsafeMutablePointer<Float>.allocate(capacity: maxBlockFrames * channelCount)
        scratch.initialize(repeating: 0, count: maxBlockFrames * channelCount)
        state = .allocate(capacity: 1)
        state.initialize(
            to: TapState(ring: Unmanaged.passUnretained(ring), scratch: scratch, channelCount: channelCount))
    }

    deinit {
        state.pointee.scratch.deallocate()
        state.deallocate()
    }

    /// Pops what the render thread wrote and cuts it into `frameCount`-frame blocks; with
    /// `includingPartial`, what is left after them becomes one shorter last block.
    /// Returns the blocks and the number of newly dropped frames.
    func drain(includingPartial: Bool = false) -> (blocks: [TapBuffer], newlyDropped: Int) {
        let channels = ring.channelCount
        var chunk = [Float](repeating: 0, count: 4096 * channels)
        while true {
            let n = chunk.withUnsafeMutableBufferPointer { ring.samples.pop(into: $0) }
            if n == 0 { break }
            pending.append(contentsOf: chunk[0..<n])
        }
        var blocks: [TapBuffer] = []
        let blockSamples = frameCount * channels
        var consumed = 0
        while pending.count - consumed >= blockSamples || (includingPartial && pending.count > consumed) {
            let frames = min(frameCount, (pending.count - consumed) / channels)
            var planar = [[Float]](repeating: [Float](repeating: 0, count: frames), count: channels)
            for f in 0..<frames {
                for c in 0..<channels { planar[c][f] = pending[consumed + f * channels + c] }
            }
            blocks.append(TapBuffer(channels: planar, frameCount: frames, streamFrame: delivered))
            delivered += frames
            consumed += frames * channels
        }
        if consumed > 0 { pending.removeFirst(consumed) }
        let dropped = ring.droppedFrames.load(ordering: .relaxed)
        let newly = dropped - reportedDrops
        reportedDrops = dropped
        return (blocks, newly)
    }
}

// Render side (written by commands, read by mixers). A source node's mixing settings as gain ramps.

/// The AVAudioMixing settings of a source node (volume and pan), held by the source so they travel
/// with it from mixer to mixer.
///
/// The control side turns volume and pan into three gain targets: `left`/`right` for a stereo
/// destination (pan law chosen by the source's channel count) and `mono` for any other destination.
/// The source's own step calls `beginChunk`, which records the ramps as they stand at the start of the
/// chunk and advances them; every mixer that consumes the source evaluates the same snapshot, so
/// fan-out to several mixers gives identical gains and the ramps advance exactly once per frame.
public struct MixingState: BitwiseCopyable {
    public var left: ParameterRamp
    public var right: ParameterRamp
    public var mono: ParameterRamp
    public var chunkLeft: ParameterRamp
    public var chunkRight: ParameterRamp
    public var chunkMono: ParameterRamp

    public init(left: Float, right: Float, mono: Float) {
        self.left = ParameterRamp(left)
        self.right = ParameterRamp(right)
        self.mono = ParameterRamp(mono)
        chunkLeft = self.left
        chunkRight = self.right
        chunkMono = self.mono
    }

    /// Snapshots the ramps for consumers of this chunk, then advances them by `frames`.
    @inlinable
    public mutating func beginChunk(frames: Int) {
        chunkLeft = left
        chunkRight = right
        chunkMono = mono
        left.advance(frames: frames)
        right.advance(frames: frames)
        mono.advance(frames: frames)
    }
}

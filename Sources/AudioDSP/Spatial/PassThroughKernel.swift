// Render side. The "stereo pass-through" algorithm and the bypass source mode: channels copied onto the
// output without localisation, with a gliding gain.

/// Channel-to-channel copy with gain (AVAudio3DMixingRenderingAlgorithm.stereoPassThrough and
/// AVAudio3DMixingSourceMode.bypass).
///
/// Input channel c goes to output channel c for c < min(input, output) channels; further input channels
/// are dropped. A mono input into a bus of two or more channels goes to channels 0 and 1, each at the
/// full gain (the mono up-mix of AVAudioMixerNode: a copy to both sides, not an equal-power pan).
/// For bypass, the caller passes gain 1 and skips distance, occlusion, obstruction and reverb
/// (AVAudio3DMixingSourceMode.bypass has none of them).
/// Cost: one multiply-add per sample per channel; no latency; no memory.
public struct PassThroughKernel: BitwiseCopyable {
    @usableFromInline var gain = ParameterRamp(1)
    @usableFromInline var hasStarted = false

    @inlinable
    public init(gain: Float = 1) {
        self.gain = ParameterRamp(gain)
    }

    /// Glides the gain to `newGain` over `rampFrames` (0 jumps; before the first `process` at once).
    @inlinable
    public mutating func setGain(_ newGain: Float, rampFrames: Int) {
        gain.ramp(to: newGain, frames: hasStarted ? rampFrames : 0)
    }

    /// Adds `input`'s channels to `output` as described on the type.
    @inlinable
    public mutating func process(input: BusRef, output: BusRef, frames: Int) {
        hasStarted = true
        if input.channelCount == 1 && output.channelCount >= 2 {
            var second = gain
            MixKernel.accumulate(input.channel(0), into: output.channel(0), count: frames, gain: &gain)
            MixKernel.accumulate(input.channel(0), into: output.channel(1), count: frames, gain: &second)
            return
        }
        let shared = min(input.channelCount, output.channelCount)
        let start = gain
        for c in 0..<shared {
            gain = start
            MixKernel.accumulate(input.channel(c), into: output.channel(c), count: frames, gain: &gain)
        }
        if shared == 0 { gain.advance(frames: frames) }
    }

    @inlinable
    public mutating func reset() { gain.jump(to: gain.target) }
}

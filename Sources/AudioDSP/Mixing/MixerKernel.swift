// Render side. The mixer's summing kernel: sources with their mixing gains into one bus.

/// Sums mixer inputs into an output bus, applying each source's snapshot gains, each connection's
/// fade (so connecting and disconnecting never click) and the mixer's output volume.
public enum MixerKernel {
    /// Channel rules (source channels → mixer channels):
    /// - 1 → 2: equal-power pan (`left`/`right` gains); 2 → 2: equal-power balance (same gains);
    /// - n → 1: average of the source channels (`mono` gain);
    /// - 1 → n (n ≠ 2): the source on every channel (`mono` gain);
    /// - otherwise channel i → channel i for i < min(n, m) (`mono` gain).
    @inlinable
    public static func mix(
        _ inputs: UnsafeBufferPointer<MixerInput>, into bus: BusRef, outputVolume: inout ParameterRamp,
        frames: Int
    ) {
        let outCount = bus.channelCount
        for c in 0..<outCount { MixKernel.clear(bus.channel(c), count: frames) }
        for input in inputs {
            let source = input.source
            let mixing = input.mixing
            let inCount = source.channelCount
            let fade = input.fade.pointee
            if outCount == 2 && inCount <= 2 {
                var left = mixing.pointee.chunkLeft
                var right = mixing.pointee.chunkRight
                var fadeLeft = fade
                var fadeRight = fade
                let second = inCount == 2 ? source.channel(1) : source.channel(0)
                MixKernel.accumulate(
                    source.channel(0), into: bus.channel(0), count: frames, gain: &left, fade: &fadeLeft)
                MixKernel.accumulate(second, into: bus.channel(1), count: frames, gain: &right, fade: &fadeRight)
            } else if outCount == 1 {
                let scale = 1 / Float(inCount)
                for c in 0..<inCount {
                    var gain = mixing.pointee.chunkMono
                    var f = fade
                    MixKernel.accumulate(
                        source.channel(c), into: bus.channel(0), count: frames, gain: &gain, fade: &f,
                        scale: scale)
                }
            } else if inCount == 1 {
                for c in 0..<outCount {
                    var gain = mixing.pointee.chunkMono
                    var f = fade
                    MixKernel.accumulate(source.channel(0), into: bus.channel(c), count: frames, gain: &gain, fade: &f)
                }
            } else {
                for c in 0..<min(inCount, outCount) {
                    var gain = mixing.pointee.chunkMono
                    var f = fade
                    MixKernel.accumulate(source.channel(c), into: bus.channel(c), count: frames, gain: &gain, fade: &f)
                }
            }
            // The fade belongs to this connection alone, so the mixer advances it.
            input.fade.pointee.advance(frames: frames)
        }
        for c in 0..<outCount {
            var gain = outputVolume
            MixKernel.scale(bus.channel(c), count: frames, gain: &gain)
        }
        outputVolume.advance(frames: frames)
    }
}

// Render side: process, reset (no allocation, no locks). Plain value state.

/// Automatic gain control for the near-end talker: brings its active speech level to −26 dBFS.
///
/// The speech level is a running mean square over frames the caller marks as near-end speech
/// (time constant 0.4 s, in the power domain), so pauses, echo and noise do not pull it down. The gain
/// target is `target − level`, clamped to −12 … +30 dB; the applied gain glides toward it at 12 dB/s
/// up, only on speech frames (so the noise between words is not raised while nobody talks), and at
/// 40 dB/s down on any frame, interpolated linearly across each frame, and is cut at once when a
/// frame's peak would pass −1 dBFS. Cost: 3 flops per sample.
public struct VoiceAGC {
    public let frameLength: Int
    public let framesPerSecond: Float
    public var targetDbfs: Float = -26
    public var maximumGainDb: Float = 30
    public var minimumGainDb: Float = -12
    /// Mean square of near-end speech frames; 0 before the first one.
    @usableFromInline var speechPower: Float = 0
    @usableFromInline var gainDb: Float = 0

    public init(frameLength: Int, sampleRate: Double) {
        self.frameLength = frameLength
        framesPerSecond = Float(sampleRate) / Float(frameLength)
    }

    /// The gain currently applied, in dB.
    public var currentGainDb: Float { gainDb }

    public mutating func reset() {
        speechPower = 0
        gainDb = 0
    }

    /// Applies the gain in place to `channelCount` channels of one frame. `speech` marks a frame of
    /// near-end speech (it then updates the level).
    @inlinable
    public mutating func process(
        _ channels: UnsafePointer<UnsafeMutablePointer<Float>>, channelCount: Int, speech: Bool
    ) {
        let f = frameLength
        var peak: Float = 0
        var power: Float = 0
        for c in 0..<channelCount {
            let x = channels[c]
            for n in 0..<f {
                power += x[n] * x[n]
                peak = max(peak, abs(x[n]))
            }
        }
        power /= Float(f * channelCount)
        if speech && power > 1e-9 {
            let a = min(1, 1 / (0.4 * framesPerSecond))
            speechPower = speechPower == 0 ? power : speechPower + a * (power - speechPower)
        }
        var targetGain = gainDb
        if speechPower > 0 {
            let level = Float(10 * EffectMath.log(Double(speechPower)) / EffectMath.log(10))
            targetGain = min(max(targetDbfs - level, minimumGainDb), maximumGainDb)
        }
        let up = speech ? 12 / framesPerSecond : 0
        let down = 40 / framesPerSecond
        var next = gainDb + min(max(targetGain - gainDb, -down), up)
        // Peak protection: the frame's peak stays below −1 dBFS.
        if peak > 0 {
            let peakDb = Float(20 * EffectMath.log(Double(peak)) / EffectMath.log(10))
            next = min(next, -1 - peakDb)
        }
        // A cut applies at once; a rise glides across the frame.
        let g0 = Float(EffectMath.decibelsToGain(Double(min(gainDb, next))))
        let g1 = Float(EffectMath.decibelsToGain(Double(next)))
        let step = (g1 - g0) / Float(f)
        for c in 0..<channelCount {
            let x = channels[c]
            var g = g0
            for n in 0..<f {
                g += step
                x[n] *= g
            }
        }
        gainDb = next
    }
}

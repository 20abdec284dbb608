// Render side (process, setPitchRatio, reset) and control side (init, deallocate). Applies a Doppler
// pitch ratio to a pushed stream as a delay line read at a gliding rate.

/// A variable-rate reader: the per-source Doppler stage for streams the graph pushes at a fixed rate.
///
/// The input is written into a delay line and read at a position that advances by `ratio` frames per
/// output frame, so the delay changes by (1 − ratio) per frame and the output's pitch is ratio × the
/// input's. That is exactly what a moving source does physically (a time-varying propagation delay);
/// reads use 4-point cubic Hermite interpolation. The ratio glides linearly per sample over the ramp
/// given with each update, so the read position is smooth (continuous, with continuous slope between
/// updates): pitch changes never click.
///
/// Raising the pitch consumes delay, so the line starts at `headroomSeconds` of delay (the stage's
/// latency) and lowering the pitch builds delay up to `maximumDelaySeconds`. Within 5 ms (or half the
/// headroom, if less) of either limit the deviation from rate 1 is scaled down in proportion to the
/// distance left, so the delay approaches the limit exponentially and the pitch glides back to normal
/// instead of snapping (a snap would be a corner in the waveform). A ratio of
/// exactly 1 (Doppler off or a resting source) lets the delay drift back to the headroom at 0.2 % rate
/// (3.5 cents, below the pitch discrimination threshold). Ratios are clamped to 0.5 … 2 (one octave,
/// AVAudio3DMixing's `rate` range); `DopplerShift` gives +∞ for a source at the speed of sound, which
/// becomes 2.
///
/// For a buffer player the same ratio can instead scale the playback rate, with no latency (OpenAL
/// Soft's approach); this stage is for live or generated input.
/// Cost: one cubic read (≈ 15 flops) per sample. Memory: `maximumDelaySeconds` of mono audio.
/// Thread contract: `init`/`deallocate` on the control side; the rest is RT-safe.
public struct DopplerResampler: BitwiseCopyable {
    public let sampleRate: Double
    /// Nominal delay in frames (the latency at rest).
    public let headroomFrames: Double
    /// Width of the soft zone at each end of the delay range, frames.
    @usableFromInline let softZone: Double
    @usableFromInline var line: FractionalDelayLine
    /// Current delay in frames.
    @usableFromInline var delay: Double
    @usableFromInline var ratio = LinearRamp<Double>(1)
    @usableFromInline var hasStarted = false

    @inlinable public static var minimumRatio: Double { 0.5 }
    @inlinable public static var maximumRatio: Double { 2 }
    /// Rate offset used to drift back to the headroom when the ratio is exactly 1.
    @inlinable public static var recentringRate: Double { 0.002 }

    /// Control side. Allocates `maximumDelaySeconds` of delay line (≥ headroom + 0.1 s).
    public init(sampleRate: Double, headroomSeconds: Double = 0.05, maximumDelaySeconds: Double = 1) {
        precondition(sampleRate > 0 && headroomSeconds >= 0 && maximumDelaySeconds > 0)
        self.sampleRate = sampleRate
        headroomFrames = max(FractionalDelayLine.minimumDelay, headroomSeconds * sampleRate)
        line = FractionalDelayLine(maximumDelay: max(maximumDelaySeconds, headroomSeconds + 0.1) * sampleRate)
        delay = headroomFrames
        softZone = max(1, min(0.005 * sampleRate, (headroomFrames - FractionalDelayLine.minimumDelay) / 2))
    }

    /// Control side. Frees the delay line.
    public func deallocate() { line.deallocate() }

    /// The current delay through the stage, in frames (its latency right now).
    @inlinable public var delayFrames: Double { delay }

    /// The current read rate (pitch ratio).
    @inlinable public var pitchRatio: Double { ratio.value }

    /// Glides the read rate to `newRatio` (clamped to 0.5 … 2; NaN is ignored) over `rampFrames`.
    @inlinable
    public mutating func setPitchRatio(_ newRatio: Double, rampFrames: Int) {
        guard !newRatio.isNaN else { return }
        let r = min(max(newRatio, Self.minimumRatio), Self.maximumRatio)
        ratio.ramp(to: r, frames: hasStarted ? max(0, rampFrames) : 0)
    }

    /// Writes `frames` resampled samples of `input` to `output` (which may be `input`).
    @inlinable
    public mutating func process(input: UnsafePointer<Float>, output: UnsafeMutablePointer<Float>, frames: Int) {
        hasStarted = true
        let lowest = FractionalDelayLine.minimumDelay
        let highest = line.maximumDelay
        for i in 0..<frames {
            line.write(input[i])
            output[i] = line.read(delay: delay)
            var r = ratio.value
            _ = ratio.tick()
            if r == 1 && !ratio.isRamping && delay != headroomFrames {
                let offset = delay - headroomFrames
                let step = Self.recentringRate
                r = offset > 0 ? 1 + min(step, offset) : 1 - min(step, -offset)
            }
            // Soft limits: near an end, shrink the step towards it in proportion to the room left.
            var step = 1 - r
            if step < 0 {
                step *= min(1, (delay - lowest) / softZone)
            } else if step > 0 {
                step *= min(1, (highest - delay) / softZone)
            }
            delay = min(max(delay + step, lowest), highest)
        }
    }

    /// Clears the line, returns the delay to the headroom and the rate to its target.
    @inlinable
    public mutating func reset() {
        line.reset()
        delay = headroomFrames
        ratio.ramp(to: ratio.target, frames: 0)
    }
}

// Render side. Pieces shared by the effect kernels: the bypass crossfade, the control tick and the
// denormal flush (control-rate glides are `LinearRamp<Double>`s advanced with `tick()`).

/// Frames between coefficient updates while a filter parameter glides. Filters recompute their
/// coefficients on this fixed grid of the kernel's own frame count, never at block boundaries, so the
/// output does not depend on how the host splits its blocks.
public enum EffectTiming {
    /// Control tick in frames.
    @inlinable public static var tickFrames: Int { 16 }
    /// Glide time of gains, mixes and filter parameters, in seconds.
    @inlinable public static var glideSeconds: Double { 0.02 }
    /// Bypass crossfade time, in seconds.
    @inlinable public static var bypassSeconds: Double { 0.01 }
    /// Fade out (then in) around a preset change, in seconds.
    @inlinable public static var presetFadeSeconds: Double { 0.02 }

    /// `seconds` at `sampleRate`, rounded up to whole control ticks (at least one).
    @inlinable
    public static func ticks(seconds: Double, sampleRate: Double) -> Int {
        let frames = seconds * sampleRate
        let ticks = Int(frames / Double(tickFrames)) &+ 1
        return max(1, ticks)
    }

    /// `seconds` at `sampleRate` in whole frames (at least one).
    @inlinable
    public static func frames(seconds: Double, sampleRate: Double) -> Int {
        max(1, Int(seconds * sampleRate + 0.5))
    }
}

/// Flushes values too small to matter to exact zero, so recursive state never decays into subnormals
/// (which are 10–100× slower on x86 when the host has not set flush-to-zero, and which the robustness
/// test forbids in the output).
public enum Denormal {
    /// `x`, or 0 when |x| < 1e-30 (Double state: its Float output then stays normal or zero).
    @inlinable
    public static func flush(_ x: Double) -> Double { x.magnitude < 1e-30 ? 0 : x }

    /// `x`, or 0 when |x| < 1e-20 (Float state: 200 dB below full scale).
    @inlinable
    public static func flush(_ x: Float) -> Float { x.magnitude < 1e-20 ? 0 : x }
}

/// A click-free switch between a kernel's processed output and its dry input (`bypass`).
///
/// `amount` is 0 for processed and 1 for dry, and glides over `EffectTiming.bypassSeconds`. Once it has
/// settled at 1 the kernel does no work and its output is its input, bit for bit. Leaving a settled
/// bypass returns `true` from `set` so the kernel clears its stale tails before it fades back in.
public struct BypassCrossfade: BitwiseCopyable {
    @usableFromInline var amount: ParameterRamp
    @usableFromInline let fadeFrames: Int
    @usableFromInline var requested: Bool
    /// The requested state (the crossfade may still be moving towards it).
    @inlinable public var isBypassed: Bool { requested }

    @inlinable
    public init(sampleRate: Double) {
        amount = ParameterRamp(0)
        fadeFrames = EffectTiming.frames(seconds: EffectTiming.bypassSeconds, sampleRate: sampleRate)
        requested = false
    }

    /// True when the output is exactly the input and the kernel may skip its processing.
    @inlinable public var isFullyBypassed: Bool { !amount.isRamping && amount.value == 1 }

    /// True when the output is exactly the processed signal.
    @inlinable public var isFullyActive: Bool { !amount.isRamping && amount.value == 0 }

    /// Starts the crossfade. Returns true when the kernel leaves a settled bypass and must `reset()`.
    @inlinable
    public mutating func set(_ bypassed: Bool) -> Bool {
        let wasFullyBypassed = isFullyBypassed
        requested = bypassed
        amount.ramp(to: bypassed ? 1 : 0, frames: fadeFrames)
        return wasFullyBypassed && !bypassed
    }

    /// Jumps to the requested state with no fade (only for a kernel that is not yet running).
    @inlinable
    public mutating func jump(_ bypassed: Bool) {
        requested = bypassed
        amount.jump(to: bypassed ? 1 : 0)
    }

    /// Mixes `count` samples of `processed` (in place) with `dry` by the crossfade, without advancing
    /// it: call once per channel, then `advance(frames:)` once.
    @inlinable
    public func mix(processed: UnsafeMutablePointer<Float>, dry: UnsafePointer<Float>, count: Int) {
        var ramp = amount
        if ramp.isRamping {
            // The ends are exact (b = 1 gives dry, b = 0 processed) so a ramp ending inside a block
            // gives the same samples as one ending at a block boundary.
            for i in 0..<count {
                let b = ramp.next()
                if b == 1 {
                    processed[i] = dry[i]
                } else if b != 0 {
                    processed[i] += (dry[i] - processed[i]) * b
                }
            }
        } else if ramp.value == 1 {
            MixKernel.copy(dry, to: processed, count: count)
        }
    }

    @inlinable
    public mutating func advance(frames: Int) { amount.advance(frames: frames) }
}

/// Copies the channels of `input` into `output` when they are different buffers (bypass path).
@inlinable
func copyBus(_ input: BusRef, to output: BusRef, channelCount: Int, frames: Int) {
    for c in 0..<channelCount where input.channel(c) != output.channel(c) {
        MixKernel.copy(input.channel(c), to: output.channel(c), count: frames)
    }
}

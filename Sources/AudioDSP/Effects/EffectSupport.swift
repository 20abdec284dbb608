// Render side. Pieces shared by the effect kernels: the control tick, the denormal flush, the bypass
// crossfade and the wet/dry stage built on it (control-rate glides are `LinearRamp<Double>`s advanced
// with `tick()`).

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

/// The wet/dry glue every effect kernel shares: a dry copy of the input, the wet/dry mix ramp and the
/// bypass crossfade. A kernel's `process` uses it in this order:
///
///     guard wetDry.begin(input: input, output: output, frames: frames) else { return }  // settled bypass
///     for i in 0..<frames {
///         let m = wetDry.wetDryMix.next()
///         // per channel: output[c][i] = WetDryBypass.mix(dry: wetDry.dry[…], wet: y, amount: m)
///     }
///     wetDry.finish(output: output, frames: frames)  // bypass crossfade against the dry copy
///
/// The time effects, which read their dry path from their own history, use only `dry`, `bypass` and
/// `finish`. Kernels without a wet/dry parameter never advance `wetDryMix`.
///
/// Thread contract: `init`/`deallocate` on the control side; everything else is RT-safe.
public struct WetDryBypass: BitwiseCopyable {
    public let channelCount: Int
    public let maxBlockFrames: Int
    /// Dry copy of the input, `channelCount × maxBlockFrames`, channel `c` at `c · maxBlockFrames`.
    public let dry: UnsafeMutablePointer<Float>
    /// Processed ↔ dry crossfade (`EffectTiming.bypassSeconds`).
    public var bypass: BypassCrossfade
    /// 0 = dry only … 1 = processed only, one step per sample.
    public var wetDryMix: ParameterRamp

    /// Control side. Allocates the dry copy; `wetDryMix` is the starting mix (0 … 1).
    public init(sampleRate: Double, maxBlockFrames: Int, channelCount: Int, wetDryMix: Float = 1) {
        self.channelCount = channelCount
        self.maxBlockFrames = maxBlockFrames
        dry = .allocate(capacity: channelCount * maxBlockFrames)
        dry.initialize(repeating: 0, count: channelCount * maxBlockFrames)
        bypass = BypassCrossfade(sampleRate: sampleRate)
        self.wetDryMix = ParameterRamp(wetDryMix)
    }

    /// Control side. Frees the dry copy; the stage must not be used afterwards.
    public func deallocate() { dry.deallocate() }

    @inlinable public var isBypassed: Bool { bypass.isBypassed }

    /// The dry copy of channel `c`.
    @inlinable
    public func dryChannel(_ c: Int) -> UnsafeMutablePointer<Float> { dry + c &* maxBlockFrames }

    /// The dry copy as a bus.
    @inlinable
    public var dryBus: BusRef { BusRef(data: dry, channelCount: channelCount, stride: maxBlockFrames) }

    /// Sets the wet/dry mix in percent (0 dry … 100 wet; clamped; NaN ignored), ramping over `frames`.
    @inlinable
    public mutating func setWetDryMix(percent: Double, frames: Int) {
        guard !percent.isNaN else { return }
        wetDryMix.ramp(to: Float(EffectMath.clamp(percent, 0, 100) / 100), frames: frames)
    }

    /// Requests bypass (true) or processing: jumps before the kernel has started, crossfades after.
    /// Returns true when the kernel leaves a settled bypass and must clear its stale state (`reset()`).
    @inlinable
    public mutating func setBypass(_ bypassed: Bool, hasStarted: Bool) -> Bool {
        if !hasStarted {
            bypass.jump(bypassed)
            return false
        }
        return bypass.set(bypassed)
    }

    /// Start of `process` for a kernel that reads its input from `dry` (so `input` and `output` may be
    /// the same bus). Settled in bypass, copies `input` to `output` and returns false: the kernel does
    /// nothing more. Otherwise copies `input` into `dry` and returns true.
    @inlinable
    public func begin(input: BusRef, output: BusRef, frames: Int) -> Bool {
        if bypass.isFullyBypassed {
            copyBus(input, to: output, channelCount: channelCount, frames: frames)
            return false
        }
        for c in 0..<channelCount {
            MixKernel.copy(input.channel(c), to: dry + c &* maxBlockFrames, count: frames)
        }
        return true
    }

    /// Start of `process` for a kernel that works in place in `output`: as `begin`, but copies `input`
    /// to `output`, and into `dry` only while the bypass crossfade needs it.
    @inlinable
    public func beginInPlace(input: BusRef, output: BusRef, frames: Int) -> Bool {
        if bypass.isFullyBypassed {
            copyBus(input, to: output, channelCount: channelCount, frames: frames)
            return false
        }
        let needsDry = !bypass.isFullyActive
        for c in 0..<channelCount {
            if needsDry { MixKernel.copy(input.channel(c), to: dry + c &* maxBlockFrames, count: frames) }
            if input.channel(c) != output.channel(c) {
                MixKernel.copy(input.channel(c), to: output.channel(c), count: frames)
            }
        }
        return true
    }

    /// End of `process`: while the bypass crossfade is not settled on processed, mixes `frames` samples
    /// of every channel of `output` (in place) with `dry`; then advances the crossfade by `frames`.
    @inlinable
    public mutating func finish(output: BusRef, frames: Int) {
        if !bypass.isFullyActive {
            for c in 0..<channelCount {
                bypass.mix(processed: output.channel(c), dry: dry + c &* maxBlockFrames, count: frames)
            }
        }
        bypass.advance(frames: frames)
    }

    /// One sample of the wet/dry mix, `dry·(1 − m) + wet·m`, always in this order of operations.
    @inlinable @inline(__always)
    public static func mix(dry x: Float, wet: Float, amount m: Float) -> Float { x * (1 - m) + wet * m }
}

/// A click-free switch between factory presets, for kernels whose state cannot change preset in flight.
///
/// A request fades the wet output out (`outputFade`, `EffectTiming.presetFadeSeconds`). Once it is
/// silent, `switchesNow()` makes the pending preset current and returns true, so the kernel loads the
/// preset's settings and clears the state it feeds; then the output fade is back at 1 and the kernel's
/// input fades in (`inputFade`), so no stage restarts with a step. Before the kernel has started, a
/// request applies at once. The kernel reads both fades once per frame, after `switchesNow()`.
public struct PresetSwitch: BitwiseCopyable {
    /// The preset the kernel is running.
    public var current: Int
    /// The preset waiting for the fade-out, or −1.
    @usableFromInline var pending = -1
    /// Gain on the wet output: 1, gliding to 0 before a switch.
    public var outputFade = ParameterRamp(1)
    /// Gain on the kernel's input: 1, gliding from 0 after a switch.
    public var inputFade = ParameterRamp(1)
    @usableFromInline let fadeFrames: Int

    /// Control side. Starts on preset `current`.
    public init(current: Int, sampleRate: Double) {
        self.current = current
        fadeFrames = EffectTiming.frames(seconds: EffectTiming.presetFadeSeconds, sampleRate: sampleRate)
    }

    /// The pending preset, or the current one when none is pending.
    @inlinable public var requested: Int { pending >= 0 ? pending : current }

    /// Requests `preset`. Returns true when it became current at once (the kernel has not started): the
    /// kernel then loads its settings. Otherwise the switch waits for the output to fade out.
    @inlinable
    public mutating func request(_ preset: Int, hasStarted: Bool) -> Bool {
        if !hasStarted {
            current = preset
            pending = -1
            return true
        }
        if preset == current && pending < 0 { return false }
        pending = preset
        outputFade.ramp(to: 0, frames: fadeFrames)
        return false
    }

    /// Once per frame: true when a pending preset has just become current (the output has faded out), and
    /// the kernel must load its settings and clear its state before reading the fades. Always inlined:
    /// the per-frame test is two loads, and a call here would keep the kernel's loop from holding its
    /// own fields in registers.
    @inlinable @inline(__always)
    public mutating func switchesNow() -> Bool {
        if pending < 0 || outputFade.isRamping { return false }
        makePendingCurrent()
        return true
    }

    /// The switch itself (rare: once per preset change).
    @inlinable
    mutating func makePendingCurrent() {
        current = pending
        pending = -1
        outputFade.jump(to: 1)
        inputFade.jump(to: 0)
        inputFade.ramp(to: 1, frames: fadeFrames)
    }
}

/// Copies the channels of `input` into `output` when they are different buffers (bypass path).
@inlinable
func copyBus(_ input: BusRef, to output: BusRef, channelCount: Int, frames: Int) {
    for c in 0..<channelCount where input.channel(c) != output.channel(c) {
        MixKernel.copy(input.channel(c), to: output.channel(c), count: frames)
    }
}

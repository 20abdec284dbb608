// Render side (process, set…, reset) and control side (init, deallocate). A feedback delay after
// AVAudioUnitDelay: gliding fractional delay time, feedback through a one-pole low-pass, wet/dry mix.

/// One-pole low-pass from the bilinear transform of H(s) = ωc/(s + ωc), prewarped so the −3 dB point
/// is exactly at the cutoff (J. O. Smith, *Introduction to Digital Filters*, "Bilinear Transformation";
/// U. Zölzer, *DAFX*, 2nd ed., §2.2.1): with K = tan(π·fc/fs), H(z) = K/(1+K) · (1 + z⁻¹)/(1 + (K−1)/(K+1) z⁻¹).
/// Valid for 0 < fc ≤ fs/2; at fc = fs/2 it is exactly the identity. Double state.
public struct OnePoleLowPass: BitwiseCopyable {
    @usableFromInline var b: Double = 1
    @usableFromInline var a1: Double = 1
    @usableFromInline var state: Double = 0

    @inlinable
    public init() {}

    /// Sets the cutoff in Hz (clamped to 1 Hz … fs/2).
    @inlinable
    public mutating func setCutoff(_ hertz: Double, sampleRate: Double) {
        let w = EffectMath.pi * EffectMath.clamp(hertz, 1, sampleRate / 2) / sampleRate
        if w >= EffectMath.pi / 2 {
            b = 1
            a1 = 1
            return
        }
        // K/(1+K) and (K−1)/(K+1) written with sin and cos so nothing overflows near fc = fs/2.
        let (s, c) = EffectMath.sinCos(w)
        b = s / (s + c)
        a1 = (s - c) / (s + c)
    }

    /// Filters one sample (transposed direct form II: y = b·x + z, z ← b·x − a1·y).
    @inlinable
    public mutating func process(_ x: Double) -> Double {
        let y = b * x + state
        state = Denormal.flush(b * x - a1 * y)
        return y
    }

    @inlinable
    public mutating func reset() { state = 0 }
}

/// Feedback delay (AVAudioUnitDelay).
///
/// Per channel: `s(n) = x(n) + feedback · LP(y(n))`, `y(n) = s(n − d)`, out = dry·(1 − mix) + y·mix.
/// The read at the fractional delay d uses 4-point, 3rd-order Hermite (Catmull–Rom) interpolation
/// (O. Niemitalo, "Polynomial Interpolators for High-Quality Resampling of Oversampled Audio", 2001,
/// §"4-point, 3rd-order Hermite"), which returns the stored sample exactly at integer delays. Below two
/// frames the interpolator would need s(n) and s(n+1), which do not exist yet; they are taken as x(n),
/// so d = 0 gives y = x (the loop then has no audible feedback).
///
/// Delay-time changes glide: d moves linearly at most 0.5 frame per frame (the echo's pitch bends by at
/// most ×0.5…×1.5, like tape), and over at least 50 ms, so a change never produces a step in the output.
/// Feedback and wet/dry glide over 20 ms; the low-pass cutoff glides in log frequency over 20 ms
/// (coefficients on the 16-frame tick). The loop is clamped to ±16 (+24 dBFS), so feedback at ±100 %
/// with an interpolator gain slightly above one cannot run away.
///
/// Thread contract: `init`/`deallocate` on the control side; the rest is RT-safe.
/// Ranges: delay time 0 … 2 s, feedback −100 … 100 %, cutoff 10 Hz … fs/2, wet/dry 0 … 100 %.
/// Cost: about 25 flops per sample per channel; memory 2 s per channel (rounded up to a power of two).
public struct DelayKernel {
    @inlinable public static var maximumDelaySeconds: Double { 2 }
    /// Largest rate of change of the delay during a glide, in frames per frame.
    @inlinable public static var maximumGlideSlope: Double { 0.5 }
    /// Shortest delay-time glide, in seconds.
    @inlinable public static var minimumGlideSeconds: Double { 0.05 }

    public let sampleRate: Double
    public let maxBlockFrames: Int
    public let channelCount: Int
    /// Ring buffers, `channelCount × lineLength`.
    @usableFromInline let lines: UnsafeMutablePointer<Float>
    @usableFromInline let lineLength: Int
    @usableFromInline let lineMask: Int
    @usableFromInline var writeIndex = 0
    @usableFromInline let filters: UnsafeMutablePointer<OnePoleLowPass>
    /// Delay in frames, gliding per frame.
    @usableFromInline var delay: LinearRamp<Double>
    @usableFromInline var feedback = ParameterRamp(0.5)
    @usableFromInline var logCutoff: LinearRamp<Double>
    @usableFromInline var cutoffTarget: Double
    /// Dry copy, wet/dry mix (default 100 %) and bypass crossfade.
    @usableFromInline var wetDry: WetDryBypass
    @usableFromInline var tickCountdown = 0
    @usableFromInline var hasStarted = false
    @usableFromInline let glideFrames: Int
    @usableFromInline let glideTicks: Int

    /// Control side. Allocates 2 s of delay line per channel.
    /// Defaults (AVAudioUnitDelay): delay 1 s, feedback 50 %, cutoff 15 kHz, wet/dry 100 %.
    public init(sampleRate: Double, maxBlockFrames: Int, channelCount: Int) {
        precondition(sampleRate > 0 && maxBlockFrames > 0 && channelCount >= 1)
        self.sampleRate = sampleRate
        self.maxBlockFrames = maxBlockFrames
        self.channelCount = channelCount
        let needed = Int(Self.maximumDelaySeconds * sampleRate) + 8
        var length = 1
        while length < needed { length <<= 1 }
        lineLength = length
        lineMask = length - 1
        lines = .allocate(capacity: channelCount * length)
        lines.initialize(repeating: 0, count: channelCount * length)
        filters = .allocate(capacity: channelCount)
        filters.initialize(repeating: OnePoleLowPass(), count: channelCount)
        delay = LinearRamp(sampleRate)
        cutoffTarget = min(15000, sampleRate / 2)
        logCutoff = LinearRamp<Double>(EffectMath.log2(cutoffTarget))
        wetDry = WetDryBypass(sampleRate: sampleRate, maxBlockFrames: maxBlockFrames, channelCount: channelCount)
        glideFrames = EffectTiming.frames(seconds: EffectTiming.glideSeconds, sampleRate: sampleRate)
        glideTicks = EffectTiming.ticks(seconds: EffectTiming.glideSeconds, sampleRate: sampleRate)
        for c in 0..<channelCount { filters[c].setCutoff(cutoffTarget, sampleRate: sampleRate) }
    }

    /// Control side. Frees the buffers; the kernel must not be used afterwards.
    public func deallocate() {
        lines.deallocate()
        filters.deallocate()
        wetDry.deallocate()
    }

    // MARK: Parameters (render side; before the first `process` they apply without gliding)

    /// Target delay time in seconds.
    @inlinable public var delayTime: Double { delay.target / sampleRate }
    @inlinable public var isBypassed: Bool { wetDry.isBypassed }

    /// Sets the delay time in seconds (clamped to 0 … 2). Glides as described on the type.
    @inlinable
    public mutating func setDelayTime(_ seconds: Double) {
        guard !seconds.isNaN else { return }
        let target = EffectMath.clamp(seconds, 0, Self.maximumDelaySeconds) * sampleRate
        let distance = (target - delay.value).magnitude
        if !hasStarted || distance == 0 {
            delay.jump(to: target)
            return
        }
        let minimum = Self.minimumGlideSeconds * sampleRate
        let frames = max(minimum, distance / Self.maximumGlideSlope)
        delay.ramp(to: target, frames: max(1, Int(frames)))
    }

    /// Sets the feedback in percent (clamped to −100 … 100). Glides over 20 ms.
    @inlinable
    public mutating func setFeedback(percent: Double) {
        guard !percent.isNaN else { return }
        feedback.ramp(to: Float(EffectMath.clamp(percent, -100, 100) / 100), frames: hasStarted ? glideFrames : 0)
    }

    /// Sets the low-pass cutoff in the feedback path in Hz (clamped to 10 … fs/2). Glides over 20 ms.
    @inlinable
    public mutating func setLowPassCutoff(_ hertz: Double) {
        guard !hertz.isNaN else { return }
        cutoffTarget = EffectMath.clamp(hertz, 10, sampleRate / 2)
        logCutoff.ramp(to: EffectMath.log2(cutoffTarget), frames: hasStarted ? glideTicks : 0)
        updateCutoff()
    }

    /// Sets the wet/dry mix in percent (0 dry … 100 wet; clamped). Glides over 20 ms.
    @inlinable
    public mutating func setWetDryMix(percent: Double) {
        wetDry.setWetDryMix(percent: percent, frames: hasStarted ? glideFrames : 0)
    }

    /// Bypasses the delay (10 ms crossfade to dry; leaving a settled bypass clears the echoes first).
    @inlinable
    public mutating func setBypass(_ bypassed: Bool) {
        if wetDry.setBypass(bypassed, hasStarted: hasStarted) { reset() }
    }

    /// Sets parameter `index` in `DelayKernel.parameters` order (delayTime, feedback, lowPassCutoff,
    /// wetDryMix). Unknown indices are ignored.
    @inlinable
    public mutating func setParameter(_ index: Int, value: Double) {
        switch index {
        case Parameter.delayTime.rawValue: setDelayTime(value)
        case Parameter.feedback.rawValue: setFeedback(percent: value)
        case Parameter.lowPassCutoff.rawValue: setLowPassCutoff(value)
        case Parameter.wetDryMix.rawValue: setWetDryMix(percent: value)
        default: break
        }
    }

    @inlinable
    mutating func updateCutoff() {
        let f = logCutoff.isRamping ? EffectMath.exp2(logCutoff.value) : cutoffTarget
        for c in 0..<channelCount { filters[c].setCutoff(f, sampleRate: sampleRate) }
    }

    // MARK: Processing (render side)

    /// Clears the delay lines and filter states without allocating (cost: a memset of the lines).
    @inlinable
    public mutating func reset() {
        lines.update(repeating: 0, count: channelCount &* lineLength)
        for c in 0..<channelCount { filters[c].reset() }
    }

    /// Processes `frames` (≤ `maxBlockFrames`) frames of the first `channelCount` channels; `input` and
    /// `output` may be the same bus.
    @inlinable
    public mutating func process(input: BusRef, output: BusRef, frames: Int) {
        hasStarted = true
        guard wetDry.begin(input: input, output: output, frames: frames) else { return }
        let dry = wetDry.dry
        let mask = lineMask
        for i in 0..<frames {
            if tickCountdown == 0 {
                if logCutoff.tick() { updateCutoff() }
                tickCountdown = EffectTiming.tickFrames
            }
            tickCountdown &-= 1
            let d = delay.next()
            let fb = feedback.next()
            let m = wetDry.wetDryMix.next()
            let position = Double(writeIndex) - d + Double(lineLength)
            let whole = EffectMath.floor(position)
            let t = Float(position - whole)
            let base = Int(whole)
            for c in 0..<channelCount {
                let line = lines + c &* lineLength
                let x = dry[c &* maxBlockFrames &+ i]
                // Provisional s(n) and s(n+1) for delays below two frames (see the type comment).
                line[writeIndex] = x
                line[(writeIndex &+ 1) & mask] = x
                let y = hermiteInterpolate(
                    t, line[(base &- 1) & mask], line[base & mask], line[(base &+ 1) & mask],
                    line[(base &+ 2) & mask])
                let back = Float(filters[c].process(Double(y)))
                let s = x + fb * back
                line[writeIndex] = Denormal.flush(min(max(s, -16), 16))
                output.channel(c)[i] = WetDryBypass.mix(dry: x, wet: y, amount: m)
            }
            writeIndex = (writeIndex &+ 1) & mask
        }
        wetDry.finish(output: output, frames: frames)
    }
}

extension DelayKernel {
    /// The `setParameter` indices, named: `parameters` is in this order (a test checks the names), and
    /// the engine addresses the kernel only through these.
    public enum Parameter: Int, CaseIterable, Sendable {
        case delayTime, feedback, lowPassCutoff, wetDryMix
    }

    /// Control side. Parameters in `setParameter` index order (names, ranges and defaults as
    /// AVAudioUnitDelay).
    public static let parameters: [EffectParameter] = [
        EffectParameter(
            "delayTime", unit: "s", minimum: 0, maximum: 2, default: 1, isSmoothed: true,
            "delay time (glides at most 0.5 frame per frame, over at least 50 ms)"),
        EffectParameter(
            "feedback", unit: "%", minimum: -100, maximum: 100, default: 50, isSmoothed: true,
            "part of the delayed signal fed back (negative inverts alternate echoes)"),
        EffectParameter(
            "lowPassCutoff", unit: "Hz", minimum: 10, maximum: 24000, isMaximumNyquist: true, default: 15000,
            isSmoothed: true, "cutoff of the one-pole low-pass in the feedback path"),
        EffectParameter(
            "wetDryMix", unit: "%", minimum: 0, maximum: 100, default: 100, isSmoothed: true,
            "0 = dry only, 100 = delayed signal only")
    ]
}

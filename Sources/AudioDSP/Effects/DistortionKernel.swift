// Render side (process, set…, reset) and control side (init, deallocate). A multi-stage distortion after
// AVAudioUnitDistortion: pre-gain, then delay, decimation, ring modulation, polynomial and soft clip.

/// A recipe converted for the render thread (frames instead of seconds, steps instead of bits).
@usableFromInline
struct DistortionSettings: BitwiseCopyable {
    @usableFromInline var delayFrames: Int
    @usableFromInline var delayFeedback: Float
    @usableFromInline var delayMix: Float
    @usableFromInline var holdFrames: Double
    /// 2^(bits − 1), or 0 for no rounding.
    @usableFromInline var levels: Double
    @usableFromInline var decimationMix: Float
    /// Oscillator increments in cycles per frame.
    @usableFromInline var ringIncrement1: Double
    @usableFromInline var ringIncrement2: Double
    @usableFromInline var ringBalance: Float
    @usableFromInline var ringMix: Float
    @usableFromInline var linearTerm: Float
    @usableFromInline var squaredTerm: Float
    @usableFromInline var cubedTerm: Float
    @usableFromInline var polynomialMix: Float
    @usableFromInline var drive: Float

    init(_ r: DistortionRecipe, sampleRate: Double) {
        delayFrames = max(1, Int(min(max(r.delay, 0), 0.5) * sampleRate + 0.5))
        delayFeedback = Float(min(max(r.delayFeedback, 0), 0.95))
        delayMix = Float(r.delay > 0 ? r.delayMix : 0)
        holdFrames = max(1, r.holdFrames)
        levels = r.bitDepth > 0 ? EffectMath.exp2(min(max(r.bitDepth, 1), 24) - 1) : 0
        decimationMix = Float(r.decimationMix)
        ringIncrement1 = r.ringFrequency1 / sampleRate
        ringIncrement2 = r.ringFrequency2 / sampleRate
        ringBalance = Float(r.ringBalance)
        ringMix = Float(r.ringMix)
        linearTerm = Float(r.linearTerm)
        squaredTerm = Float(r.squaredTerm)
        cubedTerm = Float(r.cubedTerm)
        polynomialMix = Float(r.polynomialMix)
        drive = Float(r.drive)
    }
}

/// Per-channel state of the distortion chain.
@usableFromInline
struct DistortionChannelState: BitwiseCopyable {
    @usableFromInline var held: Float
    @usableFromInline var dcInput: Float
    @usableFromInline var dcOutput: Float
    /// The output DC blocker's previous input and output (after the soft clip).
    @usableFromInline var wetInput: Float
    @usableFromInline var wetOutput: Float

    // Explicit assignments: default property values are not visible to other modules' checker.
    @inlinable
    init() {
        held = 0
        dcInput = 0
        dcOutput = 0
        wetInput = 0
        wetOutput = 0
    }
}

/// Multi-stage distortion (AVAudioUnitDistortion) with the 22 factory presets as component recipes
/// (`DistortionRecipe.table`; our designs, documented in docs/EFFECTS.md).
///
/// Per sample and channel, after x₀ = preGain·x:
/// 1. short delay with decay: a feedback comb, s = x₀ + fb·s(n − D), mixed with x₀ by `delayMix`;
/// 2. decimation: sample-and-hold every `holdFrames` frames (aliasing is the point), then rounding to
///    2^−(bits−1) steps;
/// 3. ring modulation by the sum of two sines (J. Dattorro, "Effect Design, Part 2: Delay-Line
///    Modulation and Chorus", JAES 45(10), 1997, ring modulation as multiplication by a carrier);
/// 4. polynomial shaping linear·x + squared·x² + cubed·x³ (Chebyshev-style waveshaping, M. Le Brun,
///    "Digital Waveshaping Synthesis", JAES 27(4), 1979), followed by a DC blocker
///    y = x − x₋₁ + R·y₋₁ with R = 1 − 2π·10 Hz/fs (J. O. Smith, *Introduction to Digital Filters*,
///    "DC Blocker") to remove the offset the even term creates;
/// 5. cubic soft clip f(v) = v − v³/3 for |v| < 1, ±2/3 beyond, of drive·v (J. O. Smith, *Physical
///    Audio Signal Processing*, "Cubic Soft Clipper");
/// 6. a second DC blocker of the same form and corner (10 Hz, −3 dB) on the clipped signal: the clipper
///    is odd, but an asymmetric input (the even polynomial term, a ring carrier) still gives it a mean,
///    so without this stage the output carries DC (up to −0.15 at 0 dB pre-gain). Every preset's output
///    mean for a steady sine is below −60 dBFS (tested).
/// So the wet signal is within ±2/3 before the output DC blocker (which can overshoot that bound by its
/// step response). Out = dry·(1 − mix) + wet·mix.
///
/// Thread contract: `init`/`deallocate` on the control side; the rest is RT-safe. Pre-gain and wet/dry
/// glide over 20 ms; a preset change fades the wet signal out (20 ms), clears the chain and fades its
/// input back in (20 ms). Ranges: preGain −80 … 20 dB (default −6), wetDryMix 0 … 100 % (default 50).
/// Cost: about 65 flops per sample per channel (two oscillator sines per frame).
public struct DistortionKernel {
    /// Longest echo delay of any recipe, in seconds.
    @inlinable public static var maximumDelaySeconds: Double { 0.5 }

    public let sampleRate: Double
    public let maxBlockFrames: Int
    public let channelCount: Int
    @usableFromInline let settingsTable: UnsafeMutablePointer<DistortionSettings>
    @usableFromInline var settings: DistortionSettings
    @usableFromInline let lines: UnsafeMutablePointer<Float>
    @usableFromInline let lineMask: Int
    @usableFromInline let channelStates: UnsafeMutablePointer<DistortionChannelState>
    @usableFromInline var writeIndex = 0
    @usableFromInline var holdPhase: Double = 0
    @usableFromInline var ringPhase1: Double = 0
    @usableFromInline var ringPhase2: Double = 0
    @usableFromInline let dcPole: Float
    /// The preset, and the fades around a switch (the wet output out, then the chain's input in).
    @usableFromInline var presets: PresetSwitch
    @usableFromInline var preGain: ParameterRamp
    @usableFromInline var preGainDecibels: Double = -6
    /// Dry copy, wet/dry mix (default 50 %) and bypass crossfade.
    @usableFromInline var wetDry: WetDryBypass
    @usableFromInline var hasStarted = false
    @usableFromInline let glideFrames: Int

    /// Control side. Allocates 0.5 s of echo line per channel and every preset's settings. Defaults
    /// (AVAudioUnitDistortion): preset `drumsBitBrush`, preGain −6 dB, wet/dry 50 %.
    public init(sampleRate: Double, maxBlockFrames: Int, channelCount: Int) {
        precondition(sampleRate > 0 && maxBlockFrames > 0 && channelCount >= 1)
        self.sampleRate = sampleRate
        self.maxBlockFrames = maxBlockFrames
        self.channelCount = channelCount
        let table = DistortionRecipe.table
        settingsTable = .allocate(capacity: table.count)
        for (i, recipe) in table.enumerated() {
            (settingsTable + i).initialize(to: DistortionSettings(recipe, sampleRate: sampleRate))
        }
        settings = settingsTable[0]
        var length = 1
        while length < Int(Self.maximumDelaySeconds * sampleRate) + 2 { length <<= 1 }
        lineMask = length - 1
        lines = .allocate(capacity: channelCount * length)
        lines.initialize(repeating: 0, count: channelCount * length)
        channelStates = .allocate(capacity: channelCount)
        channelStates.initialize(repeating: DistortionChannelState(), count: channelCount)
        dcPole = Float(1 - 2 * Double.pi * 10 / sampleRate)
        preGain = ParameterRamp(Float(EffectMath.decibelsToGain(-6)))
        wetDry = WetDryBypass(
            sampleRate: sampleRate, maxBlockFrames: maxBlockFrames, channelCount: channelCount, wetDryMix: 0.5)
        glideFrames = EffectTiming.frames(seconds: EffectTiming.glideSeconds, sampleRate: sampleRate)
        presets = PresetSwitch(current: 0, sampleRate: sampleRate)
    }

    /// Control side. Frees the buffers; the kernel must not be used afterwards.
    public func deallocate() {
        settingsTable.deallocate()
        lines.deallocate()
        channelStates.deallocate()
        wetDry.deallocate()
    }

    // MARK: Parameters (render side; before the first `process` they apply at once)

    /// The current (or pending) preset.
    @inlinable
    public var preset: DistortionPreset {
        DistortionPreset(rawValue: presets.requested) ?? .drumsBitBrush
    }

    @inlinable public var isBypassed: Bool { wetDry.isBypassed }

    /// Loads factory preset `preset` (fade out 20 ms, clear, fade the chain's input in over 20 ms).
    @inlinable
    public mutating func setPreset(_ preset: DistortionPreset) {
        if presets.request(preset.rawValue, hasStarted: hasStarted) { settings = settingsTable[presets.current] }
    }

    /// Sets the gain into the distortion chain in dB (clamped to −80 … 20). Glides over 20 ms.
    @inlinable
    public mutating func setPreGain(decibels: Double) {
        guard !decibels.isNaN else { return }
        preGainDecibels = EffectMath.clamp(decibels, -80, 20)
        preGain.ramp(to: Float(EffectMath.decibelsToGain(preGainDecibels)), frames: hasStarted ? glideFrames : 0)
    }

    /// Sets the wet/dry mix in percent (0 dry … 100 distorted; clamped). Glides over 20 ms.
    @inlinable
    public mutating func setWetDryMix(percent: Double) {
        wetDry.setWetDryMix(percent: percent, frames: hasStarted ? glideFrames : 0)
    }

    /// Bypasses the distortion (10 ms crossfade to dry; leaving a settled bypass clears the state first).
    @inlinable
    public mutating func setBypass(_ bypassed: Bool) {
        if wetDry.setBypass(bypassed, hasStarted: hasStarted) { reset() }
    }

    /// Sets parameter `index` in `DistortionKernel.parameters` order (preGain, wetDryMix, preset). The
    /// preset is the rounded index 0…21. Unknown indices are ignored.
    @inlinable
    public mutating func setParameter(_ index: Int, value: Double) {
        guard !value.isNaN else { return }
        switch index {
        case Parameter.preGain.rawValue: setPreGain(decibels: value)
        case Parameter.wetDryMix.rawValue: setWetDryMix(percent: value)
        case Parameter.preset.rawValue:
            if let p = DistortionPreset(rawValue: Int(EffectMath.clamp(value + 0.5, 0, 21.5))) { setPreset(p) }
        default: break
        }
    }

    // MARK: Processing (render side)

    /// Clears the echo lines, held samples, DC blockers and oscillator phases without allocating.
    @inlinable
    public mutating func reset() {
        lines.update(repeating: 0, count: channelCount &* (lineMask &+ 1))
        channelStates.update(repeating: DistortionChannelState(), count: channelCount)
        holdPhase = 0
        ringPhase1 = 0
        ringPhase2 = 0
    }

    /// Smith's cubic soft clipper: v − v³/3 inside ±1, ±2/3 outside.
    @inlinable
    static func softClip(_ v: Float) -> Float {
        if v >= 1 { return 2.0 / 3.0 }
        if v <= -1 { return -2.0 / 3.0 }
        return v - v * v * v / 3
    }

    /// Processes `frames` (≤ `maxBlockFrames`) frames of the first `channelCount` channels; `input` and
    /// `output` may be the same bus.
    @inlinable
    public mutating func process(input: BusRef, output: BusRef, frames: Int) {
        hasStarted = true
        guard wetDry.begin(input: input, output: output, frames: frames) else { return }
        let dry = wetDry.dry
        let mask = lineMask
        let lineLength = mask &+ 1
        let twoPi = 2 * EffectMath.pi
        for i in 0..<frames {
            if presets.switchesNow() {
                // The wet signal is silent: clear the chain (its input fades in), so no stage (the echo
                // comb above all) restarts with a step.
                settings = settingsTable[presets.current]
                reset()
            }
            let k = settings
            let gain = preGain.next() * presets.inputFade.next()
            let fade = presets.outputFade.next()
            let m = wetDry.wetDryMix.next()
            // Shared clocks: sample-and-hold and the two carriers.
            holdPhase += 1
            let sampleNow = holdPhase >= k.holdFrames
            if sampleNow { holdPhase -= k.holdFrames }
            var carrier: Float = 0
            if k.ringMix != 0 {
                let s1 = Float(EffectMath.sin(twoPi * ringPhase1))
                let s2 = Float(EffectMath.sin(twoPi * ringPhase2))
                carrier = (1 - k.ringBalance) * s1 + k.ringBalance * s2
                ringPhase1 += k.ringIncrement1
                ringPhase2 += k.ringIncrement2
                if ringPhase1 >= 1 { ringPhase1 -= 1 }
                if ringPhase2 >= 1 { ringPhase2 -= 1 }
            }
            let readIndex = (writeIndex &- k.delayFrames) & mask
            for c in 0..<channelCount {
                let x = dry[c &* maxBlockFrames &+ i]
                var v = gain * x
                // 1. Echo comb.
                let line = lines + c &* lineLength
                let echo = line[readIndex]
                line[writeIndex] = Denormal.flush(v + k.delayFeedback * echo)
                v += k.delayMix * (echo - v)
                // 2. Decimation.
                var state = channelStates[c]
                if sampleNow {
                    state.held =
                        k.levels > 0
                        ? Float(EffectMath.floor(Double(v) * k.levels + 0.5) / k.levels) : v
                }
                v += k.decimationMix * (state.held - v)
                // 3. Ring modulation.
                v += k.ringMix * (v * carrier - v)
                // 4. Polynomial shaping and DC blocker.
                if k.polynomialMix != 0 {
                    let p = k.linearTerm * v + k.squaredTerm * v * v + k.cubedTerm * v * v * v
                    let blocked = Denormal.flush(p - state.dcInput + dcPole * state.dcOutput)
                    state.dcInput = p
                    state.dcOutput = blocked
                    v += k.polynomialMix * (blocked - v)
                }
                // 5. Soft clip, 6. DC blocker on the clipped signal.
                let clipped = Self.softClip(k.drive * v)
                let centred = Denormal.flush(clipped - state.wetInput + dcPole * state.wetOutput)
                state.wetInput = clipped
                state.wetOutput = centred
                channelStates[c] = state
                output.channel(c)[i] = WetDryBypass.mix(dry: x, wet: fade * centred, amount: m)
            }
            writeIndex = (writeIndex &+ 1) & mask
        }
        wetDry.finish(output: output, frames: frames)
    }
}

extension DistortionKernel {
    /// The `setParameter` indices, named: `parameters` is in this order (a test checks the names), and
    /// the engine addresses the kernel only through these.
    public enum Parameter: Int, CaseIterable, Sendable {
        case preGain, wetDryMix, preset
    }

    /// Control side. Parameters in `setParameter` index order (AVAudioUnitDistortion names and ranges).
    public static let parameters: [EffectParameter] = [
        EffectParameter(
            "preGain", unit: "dB", minimum: -80, maximum: 20, default: -6, isSmoothed: true,
            "gain into the distortion chain"),
        EffectParameter(
            "wetDryMix", unit: "%", minimum: 0, maximum: 100, default: 50, isSmoothed: true,
            "0 = dry only, 100 = distorted only"),
        EffectParameter(
            "preset", unit: "index", minimum: 0, maximum: 21, default: 0, isSmoothed: true,
            valueNames: DistortionPreset.allNames,
            "factory preset (a change fades the wet signal out and in, 20 ms each)")
    ]
}

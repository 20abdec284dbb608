// Render side (process, setParameters, reset) and pure design functions. Per-source reverb blend,
// obstruction and occlusion of the 3D mixer (AVAudio3DMixing; OpenAL ALC_EXT_ASA).

/// Design of the per-source environment sends.
///
/// Signal path (the 3D mixer's, WWDC 2011 session 404; AUSpatialMixer): input → occlusion filter →
/// { reverb send × wet; obstruction filter → × dry → panner }. Occlusion (the source is in another
/// space) therefore filters the direct path and the reverb send; obstruction (something between source
/// and listener in the same space) filters the direct path only.
///
/// - Reverb blend b (0 dry … 1 wet) is an equal-power crossfade: dry = cos(b·π/2), wet = sin(b·π/2);
///   0.5 gives equal dry and wet at −3 dB each.
/// - Obstruction and occlusion are levels A in dB (−100 … 0) "measured at 5 kHz": the filter's gain at
///   5 kHz is exactly A. Part of it is a broadband gain, the rest a first-order low-pass: with the
///   low-frequency ratio r (I3DL2's "LF ratio": IASIG, *Interactive 3D Audio Rendering Guidelines,
///   Level 2.0*, 1999; defaults 0.25 for occlusion, 0 for obstruction), the broadband gain is r·A dB and
///   the low-pass takes (1 − r)·A dB at 5 kHz. 0 dB is exactly the identity.
/// - The low-pass is the one-pole smoother y[n] = y[n−1] + a·(x[n] − y[n−1]), H(z) = a/(1 − p·z⁻¹) with
///   p = 1 − a, so |H(ω)|² = a²/(1 − 2p·cos ω + p²). For |H(ω₅ₖ)| = g this is a quadratic in p whose root
///   in [0, 1) is p = C/(B + √(B² − C²)), B = 1 − g²·cos ω₅ₖ, C = 1 − g². At 0 dB, a = 1 (the identity,
///   pole at 0); at −100 dB, a ≈ 2e-5 (a corner near 0.2 Hz): the path is silent. This form keeps its pole
///   on [0, 1) for every level, so gliding `a` per sample never rings (the bilinear one-pole's pole
///   approaches −1 near 0 dB, where a gliding coefficient excites a Nyquist oscillation).
public enum EnvironmentSend {
    /// The frequency at which obstruction and occlusion levels are defined, Hz.
    @inlinable public static var referenceFrequency: Double { 5000 }
    /// I3DL2's default low-frequency ratio for occlusion.
    @inlinable public static var occlusionLowFrequencyRatio: Double { 0.25 }
    /// I3DL2's default low-frequency ratio for obstruction.
    @inlinable public static var obstructionLowFrequencyRatio: Double { 0 }

    /// (dry, wet) for reverb blend `blend` (clamped to 0 … 1).
    @inlinable
    public static func reverbBlendGains(_ blend: Double) -> (dry: Double, wet: Double) {
        let b = blend.isNaN ? 0 : min(max(blend, 0), 1)
        let (s, c) = EffectMath.sinCos(b * SpatialMath.halfPi)
        return (b == 1 ? 0 : c, b == 0 ? 0 : s)
    }

    /// The smoothing coefficient a (0 < a ≤ 1; 1 is the identity) whose gain at `referenceFrequency` is
    /// `decibels` (clamped to −100 … 0). Requires `sampleRate` > 10 kHz.
    @inlinable
    public static func lowPassCoefficient(decibels: Double, sampleRate: Double) -> Double {
        let level = decibels.isNaN ? 0 : min(max(decibels, -100), 0)
        if level == 0 { return 1 }
        let g = EffectMath.decibelsToGain(level)
        let g2 = g * g
        let cosine = EffectMath.cos(2 * SpatialMath.pi * referenceFrequency / sampleRate)
        let b = 1 - g2 * cosine
        let c = 1 - g2
        // B² − C² = g²(1 − cos ω)·(2 − g²(1 + cos ω)) ≥ 0, written so it cannot round below zero.
        let discriminant = g2 * (1 - cosine) * (2 - g2 * (1 + cosine))
        let p = c / (b + EffectMath.squareRoot(discriminant))
        return 1 - p
    }

    /// Splits a level of `decibels` into (broadband gain, low-pass dB at 5 kHz) by the ratio `r` (0 … 1).
    @inlinable
    public static func split(decibels: Double, lowFrequencyRatio r: Double) -> (gain: Double, lowPassDecibels: Double) {
        let a = decibels.isNaN ? 0 : min(max(decibels, -100), 0)
        let ratio = min(max(r, 0), 1)
        return (EffectMath.decibelsToGain(ratio * a), (1 - ratio) * a)
    }

    /// |H| of the one-pole with coefficient `a` at `frequency` (control side, for tests and docs).
    public static func lowPassMagnitude(a: Double, frequency: Double, sampleRate: Double) -> Double {
        let p = 1 - a
        let cosine = EffectMath.cos(2 * SpatialMath.pi * frequency / sampleRate)
        return a / EffectMath.squareRoot(1 - 2 * p * cosine + p * p)
    }
}

/// The per-source occlusion, obstruction and reverb-send stage, placed before the panner.
///
/// `process` writes the direct path (dry · obstruction(occlusion(x))) to `direct` and adds the reverb
/// send (wet · occlusion(x)) to `reverbSend`. Coefficients and gains glide per sample. With blend 0 and
/// both levels at 0 dB, `direct` is exactly the input and nothing is sent.
/// Cost: two first-order filters and three multiplies per sample. Thread contract: every method is
/// RT-safe (no memory).
public struct SourceEnvironmentFilter: BitwiseCopyable {
    public let sampleRate: Double
    public var occlusionLowFrequencyRatio = EnvironmentSend.occlusionLowFrequencyRatio
    public var obstructionLowFrequencyRatio = EnvironmentSend.obstructionLowFrequencyRatio
    @usableFromInline var occlusionA = LinearRamp<Double>(1)
    @usableFromInline var obstructionA = LinearRamp<Double>(1)
    @usableFromInline var dry = ParameterRamp(1)
    @usableFromInline var wet = ParameterRamp(0)
    @usableFromInline var occlusionState = 0.0
    @usableFromInline var obstructionState = 0.0
    @usableFromInline var hasStarted = false

    @inlinable
    public init(sampleRate: Double) {
        self.sampleRate = sampleRate
    }

    /// Glides to `reverbBlend` (0 … 1), `obstructionDecibels` and `occlusionDecibels` (−100 … 0) over
    /// `rampFrames` (0 jumps; before the first `process` at once).
    @inlinable
    public mutating func setParameters(
        reverbBlend: Double, obstructionDecibels: Double, occlusionDecibels: Double, rampFrames: Int
    ) {
        let frames = hasStarted ? max(0, rampFrames) : 0
        let (dryGain, wetGain) = EnvironmentSend.reverbBlendGains(reverbBlend)
        let occlusion = EnvironmentSend.split(
            decibels: occlusionDecibels, lowFrequencyRatio: occlusionLowFrequencyRatio)
        let obstruction = EnvironmentSend.split(
            decibels: obstructionDecibels, lowFrequencyRatio: obstructionLowFrequencyRatio)
        occlusionA.ramp(
            to: EnvironmentSend.lowPassCoefficient(decibels: occlusion.lowPassDecibels, sampleRate: sampleRate),
            frames: frames)
        obstructionA.ramp(
            to: EnvironmentSend.lowPassCoefficient(decibels: obstruction.lowPassDecibels, sampleRate: sampleRate),
            frames: frames)
        dry.ramp(to: Float(dryGain * occlusion.gain * obstruction.gain), frames: frames)
        wet.ramp(to: Float(wetGain * occlusion.gain), frames: frames)
    }

    /// One sample of the one-pole y[n] = y[n−1] + a·(x[n] − y[n−1]); `state` is y[n−1]. a = 1 passes x
    /// through exactly.
    @inlinable
    static func lowPass(_ x: Double, a: Double, state: inout Double) -> Double {
        let y = a == 1 ? x : state + a * (x - state)
        state = Denormal.flush(y)
        return y
    }

    /// Writes the direct path to `direct` (may be `input`) and adds the reverb send to `reverbSend`.
    @inlinable
    public mutating func process(
        input: UnsafePointer<Float>, direct: UnsafeMutablePointer<Float>, reverbSend: UnsafeMutablePointer<Float>,
        frames: Int
    ) {
        hasStarted = true
        if isIdentity {
            // Both filters pass the input through and nothing is sent: the same samples and filter states
            // as the loop below, without its per-sample work.
            guard frames > 0 else { return }
            let last = Denormal.flush(Double(input[frames &- 1]))
            occlusionState = last
            obstructionState = last
            if dry.isRamping {
                for i in 0..<frames { direct[i] = input[i] * dry.next() }
            } else {
                let g = dry.value
                for i in 0..<frames { direct[i] = input[i] * g }
            }
            return
        }
        for i in 0..<frames {
            let occlusionCoefficient = occlusionA.value
            let obstructionCoefficient = obstructionA.value
            _ = occlusionA.tick()
            _ = obstructionA.tick()
            let x = Double(input[i])
            let occluded = Self.lowPass(x, a: occlusionCoefficient, state: &occlusionState)
            let obstructed = Self.lowPass(occluded, a: obstructionCoefficient, state: &obstructionState)
            reverbSend[i] += Float(occluded) * wet.next()
            direct[i] = Float(obstructed) * dry.next()
        }
    }

    /// True when `process` would write its input to `direct` unchanged and send nothing: both filters at
    /// the identity, the dry gain resting at 1 and the send at 0 (the defaults).
    @inlinable
    public var isTransparent: Bool { isIdentity && !dry.isRamping && dry.value == 1 }

    /// What `process` does to the filter states when `isTransparent`, for callers that use `input` as
    /// the direct path themselves instead of having it copied.
    @inlinable
    public mutating func passOver(input: UnsafePointer<Float>, frames: Int) {
        hasStarted = true
        guard frames > 0 else { return }
        let last = Denormal.flush(Double(input[frames &- 1]))
        occlusionState = last
        obstructionState = last
    }

    /// True when both filters rest at the identity and the send rests at zero (the defaults).
    @inlinable
    var isIdentity: Bool {
        !occlusionA.isRamping && !obstructionA.isRamping && occlusionA.value == 1 && obstructionA.value == 1
            && !wet.isRamping && wet.value == 0
    }

    /// Clears the filter states and ends glides at their targets.
    @inlinable
    public mutating func reset() {
        occlusionState = 0
        obstructionState = 0
        occlusionA.ramp(to: occlusionA.target, frames: 0)
        obstructionA.ramp(to: obstructionA.target, frames: 0)
        dry.jump(to: dry.target)
        wet.jump(to: wet.target)
    }
}

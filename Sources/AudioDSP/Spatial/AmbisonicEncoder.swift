// Render side (process, setDirection, reset). The "sound field" algorithm's per-source half: a mono
// source encoded into first-order Ambisonics (B-format), accumulated onto a 4-channel bus.

/// First-order Ambisonic encoding in ACN channel order with SN3D normalisation (AmbiX: C. Nachbar,
/// F. Zotter, E. Deleflie, A. Sontacchi, "AmbiX — a suggested Ambisonics format", Ambisonics Symposium
/// 2011). For a source at azimuth φ (here positive to the right) and elevation θ, in Ambisonic axes
/// (x front, y left, z up):
///
///     ACN 0  W = 1
///     ACN 1  Y = sin φ_left · cos θ   = −(listener x)
///     ACN 2  Z = sin θ                =   listener y
///     ACN 3  X = cos φ · cos θ        = −(listener z)
///
/// The coefficients are the components of the source's unit vector, so no trigonometry runs per update
/// and a mirrored source (x → −x) negates Y exactly. One environment-wide `AmbisonicDecoder` turns the
/// bus into speaker feeds. Cost: 4 multiply-adds per sample; no latency; no memory.
public struct AmbisonicEncoder: BitwiseCopyable {
    @usableFromInline var w = ParameterRamp(0)
    @usableFromInline var y = ParameterRamp(0)
    @usableFromInline var z = ParameterRamp(0)
    @usableFromInline var x = ParameterRamp(0)
    @usableFromInline var hasStarted = false

    @inlinable
    public init() {}

    /// (W, Y, Z, X) for `direction`: ACN order, SN3D.
    @inlinable
    public static func coefficients(for direction: SourceDirection) -> (w: Float, y: Float, z: Float, x: Float) {
        let u = direction.local
        return (1, Float(-u.x), Float(u.y), Float(-u.z))
    }

    /// Glides the four coefficients (times `gain`) to those of `direction` over `rampFrames`.
    @inlinable
    public mutating func setDirection(_ direction: SourceDirection, gain: Float, rampFrames: Int) {
        let c = Self.coefficients(for: direction)
        let frames = hasStarted ? rampFrames : 0
        w.ramp(to: c.w * gain, frames: frames)
        y.ramp(to: c.y * gain, frames: frames)
        z.ramp(to: c.z * gain, frames: frames)
        x.ramp(to: c.x * gain, frames: frames)
    }

    /// Glides to W alone (times `gain`): a signal with no direction (an LFE channel of an ambience bed).
    @inlinable
    public mutating func setOmnidirectional(gain: Float, rampFrames: Int) {
        let frames = hasStarted ? rampFrames : 0
        w.ramp(to: gain, frames: frames)
        y.ramp(to: 0, frames: frames)
        z.ramp(to: 0, frames: frames)
        x.ramp(to: 0, frames: frames)
    }

    /// Adds the encoded `input` to channels 0…3 (W, Y, Z, X) of `bformat`.
    @inlinable
    public mutating func process(input: UnsafePointer<Float>, bformat: BusRef, frames: Int) {
        hasStarted = true
        MixKernel.accumulate(input, into: bformat.channel(0), count: frames, gain: &w)
        MixKernel.accumulate(input, into: bformat.channel(1), count: frames, gain: &y)
        MixKernel.accumulate(input, into: bformat.channel(2), count: frames, gain: &z)
        MixKernel.accumulate(input, into: bformat.channel(3), count: frames, gain: &x)
    }

    @inlinable
    public mutating func reset() {
        w.jump(to: w.target)
        y.jump(to: y.target)
        z.jump(to: z.target)
        x.jump(to: x.target)
    }
}

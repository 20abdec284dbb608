// Render side (process, setDirection, reset) and control side (init, deallocate). The 3D mixer's
// "spherical head" algorithm: per-ear fractional delay (Woodworth ITD) and head-shadow filter (ILD).

/// Binaural rendering with a rigid spherical head (AVAudio3DMixingRenderingAlgorithm.sphericalHead),
/// after `SphericalHeadModel` (Brown & Duda 1998).
///
/// Per ear: the input is read from one shared delay line at a/c + T(θ) (plus one frame, the cubic
/// read's minimum), then filtered by the head-shadow one-pole/one-zero with that ear's α(θ), then scaled
/// by the source gain and added to output channel 0 (left) or 1 (right). Delays, α and gain glide
/// linearly per sample to each new target, so a moving source bends the pitch very slightly (as a real
/// moving source does) but never clicks. Both ears run the same arithmetic on mirrored parameters, so
/// x → −x swaps the outputs bit for bit.
///
/// Latency: 1 frame (the near ear of a lateral source). Cost: about 40 flops per sample (two cubic reads,
/// two first-order filters). Memory: a ring of 64 frames at 48 kHz.
/// Thread contract: `init`/`deallocate` on the control side; the rest is RT-safe.
public struct SphericalHeadKernel: BitwiseCopyable {
    public let sampleRate: Double
    public let model: SphericalHeadModel
    @usableFromInline var line: FractionalDelayLine
    /// Per-ear delay in frames and α (0 left, 1 right).
    @usableFromInline var leftDelay: LinearRamp<Double>
    @usableFromInline var rightDelay: LinearRamp<Double>
    @usableFromInline var leftAlpha: LinearRamp<Double>
    @usableFromInline var rightAlpha: LinearRamp<Double>
    @usableFromInline var gain = ParameterRamp(0)
    /// b₀ = p + α·q, b₁ = p − α·q; pole a₁.
    @usableFromInline let p: Double
    @usableFromInline let q: Double
    @usableFromInline let a1: Double
    @usableFromInline var leftX1 = 0.0
    @usableFromInline var leftY1 = 0.0
    @usableFromInline var rightX1 = 0.0
    @usableFromInline var rightY1 = 0.0
    @usableFromInline var hasStarted = false

    /// Control side. Allocates the delay line for the model's largest ear delay.
    public init(sampleRate: Double, model: SphericalHeadModel = SphericalHeadModel()) {
        precondition(sampleRate > 0 && model.headRadius > 0 && model.speedOfSound > 0)
        self.sampleRate = sampleRate
        self.model = model
        let longest = model.earDelay(cosIncidence: -1) * sampleRate + FractionalDelayLine.minimumDelay
        line = FractionalDelayLine(maximumDelay: longest + 1)
        let (b0, _, pole) = model.shadowCoefficients(alpha: 0, sampleRate: sampleRate)
        p = b0
        q = sampleRate / (model.speedOfSound / model.headRadius + sampleRate)
        a1 = pole
        let ahead = SourceDirection()
        leftDelay = LinearRamp<Double>(Self.delayFrames(model, cosIncidence: -ahead.local.x, sampleRate: sampleRate))
        rightDelay = LinearRamp<Double>(Self.delayFrames(model, cosIncidence: ahead.local.x, sampleRate: sampleRate))
        leftAlpha = LinearRamp<Double>(model.shadow(cosIncidence: -ahead.local.x))
        rightAlpha = LinearRamp<Double>(model.shadow(cosIncidence: ahead.local.x))
    }

    /// Control side. Frees the delay line.
    public func deallocate() { line.deallocate() }

    /// Latency in frames added to both ears (the cubic read's minimum delay).
    @inlinable public var latencyFrames: Int { Int(FractionalDelayLine.minimumDelay) }

    @inlinable
    static func delayFrames(_ model: SphericalHeadModel, cosIncidence: Double, sampleRate: Double) -> Double {
        FractionalDelayLine.minimumDelay + model.earDelay(cosIncidence: cosIncidence) * sampleRate
    }

    /// Glides delays, head shadow and `gain` to the values for `direction` over `rampFrames` (0 jumps;
    /// before the first `process` everything applies at once).
    @inlinable
    public mutating func setDirection(_ direction: SourceDirection, gain newGain: Float, rampFrames: Int) {
        let frames = hasStarted ? max(0, rampFrames) : 0
        let x = min(max(direction.local.x, -1), 1)
        leftDelay.ramp(to: Self.delayFrames(model, cosIncidence: -x, sampleRate: sampleRate), frames: frames)
        rightDelay.ramp(to: Self.delayFrames(model, cosIncidence: x, sampleRate: sampleRate), frames: frames)
        leftAlpha.ramp(to: model.shadow(cosIncidence: -x), frames: frames)
        rightAlpha.ramp(to: model.shadow(cosIncidence: x), frames: frames)
        gain.ramp(to: newGain, frames: frames)
    }

    /// Adds `frames` binaural samples of `input` to channels 0 (left) and 1 (right) of `output`.
    @inlinable
    public mutating func process(input: UnsafePointer<Float>, output: BusRef, frames: Int) {
        hasStarted = true
        let outL = output.channel(0)
        let outR = output.channel(1)
        for i in 0..<frames {
            line.write(input[i])
            let g = gain.next()
            let xl = Double(line.read(delay: leftDelay.value))
            let xr = Double(line.read(delay: rightDelay.value))
            let al = leftAlpha.value
            let ar = rightAlpha.value
            _ = leftDelay.tick()
            _ = rightDelay.tick()
            _ = leftAlpha.tick()
            _ = rightAlpha.tick()
            let yl = Denormal.flush((p + al * q) * xl + (p - al * q) * leftX1 - a1 * leftY1)
            let yr = Denormal.flush((p + ar * q) * xr + (p - ar * q) * rightX1 - a1 * rightY1)
            leftX1 = xl
            leftY1 = yl
            rightX1 = xr
            rightY1 = yr
            outL[i] += Float(yl) * g
            outR[i] += Float(yr) * g
        }
    }

    /// Clears the delay line and filter states and ends glides at their targets (RT-safe).
    @inlinable
    public mutating func reset() {
        line.reset()
        leftX1 = 0
        leftY1 = 0
        rightX1 = 0
        rightY1 = 0
        leftDelay.ramp(to: leftDelay.target, frames: 0)
        rightDelay.ramp(to: rightDelay.target, frames: 0)
        leftAlpha.ramp(to: leftAlpha.target, frames: 0)
        rightAlpha.ramp(to: rightAlpha.target, frames: 0)
        gain.jump(to: gain.target)
    }
}

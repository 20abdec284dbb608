// Render side (process, setDirection, speakerGains, reset) and control side (init, deallocate).
// Two-dimensional vector-base amplitude panning over a horizontal speaker layout.

/// 2-D VBAP (V. Pulkki, "Virtual Sound Source Positioning Using Vector Base Amplitude Panning", JAES
/// 45(6), 1997, §2.2): the source's horizontal direction p is written as g₁·l₁ + g₂·l₂ over the unit
/// vectors of the two adjacent speakers that enclose it, g = p·L⁻¹, then normalised to unit power
/// (g₁² + g₂² = 1, Pulkki's eq. 8 with C = 1).
///
/// Pair choice: speakers are sorted by azimuth and every adjacent pair (wrapping round) whose aperture is
/// below 180° is a candidate; the pair with the largest smaller gain wins, which is the pair whose arc
/// contains the source (on a speaker, both neighbouring pairs give that speaker alone). Gaps of 180° or
/// more (a stereo layout's back) have no pair: a source there goes to the nearest speaker (shared at
/// −3 dB between two equally near ones on the median plane). Elevation is
/// ignored (the direction is projected onto the horizontal plane); a source straight above or below
/// goes to every speaker at 1/√n. Channels without a speaker (LFE) get nothing.
///
/// The arithmetic is left–right symmetric term by term, so for a symmetric layout a mirrored source
/// gets exactly the mirrored gains. Gains glide per sample to each new target.
/// Cost: one multiply-add per speaker per sample; no latency. Memory: a few values per speaker.
/// Thread contract: `init`/`deallocate` on the control side; the rest is RT-safe.
public struct VBAPKernel: BitwiseCopyable {
    /// Output channels (the layout's, including LFE).
    public let channelCount: Int
    /// Speakers (sorted by azimuth internally).
    public let speakerCount: Int
    /// Horizontal unit vectors of the sorted speakers: u (right) and v (front).
    @usableFromInline let speakerU: UnsafeMutablePointer<Double>
    @usableFromInline let speakerV: UnsafeMutablePointer<Double>
    /// Output channel of each sorted speaker.
    @usableFromInline let speakerChannel: UnsafeMutablePointer<Int>
    /// Whether the pair (k, k + 1 mod n) spans less than 180°.
    @usableFromInline let pairIsValid: UnsafeMutablePointer<Bool>
    /// Per sorted speaker: gain glide and scratch target.
    @usableFromInline let ramps: UnsafeMutablePointer<ParameterRamp>
    @usableFromInline let targets: UnsafeMutablePointer<Float>
    @usableFromInline var hasStarted = false

    /// Control side. Allocates per-speaker state for `layout`.
    public init(layout: SpeakerLayout) {
        let sorted = layout.speakers.sorted { $0.azimuthDegrees < $1.azimuthDegrees }
        let n = sorted.count
        channelCount = layout.channelCount
        speakerCount = n
        speakerU = .allocate(capacity: n)
        speakerV = .allocate(capacity: n)
        speakerChannel = .allocate(capacity: n)
        pairIsValid = .allocate(capacity: n)
        ramps = .allocate(capacity: n)
        targets = .allocate(capacity: n)
        for (k, s) in sorted.enumerated() {
            let v = s.unitVector
            speakerU[k] = v.x
            speakerV[k] = -v.z
            speakerChannel[k] = s.channel
            let next = sorted[(k + 1) % n].azimuthDegrees
            var aperture = next - s.azimuthDegrees
            if k == n - 1 { aperture += 360 }
            pairIsValid[k] = n >= 2 && aperture > 0 && aperture < 180 - 1e-9
        }
        ramps.initialize(repeating: ParameterRamp(0), count: n)
        targets.initialize(repeating: 0, count: n)
    }

    /// Control side. Frees the per-speaker state.
    public func deallocate() {
        speakerU.deallocate()
        speakerV.deallocate()
        speakerChannel.deallocate()
        pairIsValid.deallocate()
        ramps.deallocate()
        targets.deallocate()
    }

    /// Writes the unit-power gain of every speaker, in internal (azimuth-sorted) order, for `direction`.
    @inlinable
    public func speakerGains(for direction: SourceDirection, into gains: UnsafeMutablePointer<Float>) {
        let n = speakerCount
        for k in 0..<n { gains[k] = 0 }
        let pu = direction.local.x
        let pv = -direction.local.z
        if n == 1 {
            gains[0] = 1
            return
        }
        if pu * pu + pv * pv < 1e-18 {
            let g = Float(1 / EffectMath.squareRoot(Double(n)))
            for k in 0..<n { gains[k] = g }
            return
        }
        var best = -1
        var bestMinimum = -Double.infinity
        var bestA = 0.0
        var bestB = 0.0
        for k in 0..<n where pairIsValid[k] {
            let j = k == n - 1 ? 0 : k + 1
            let au = speakerU[k], av = speakerV[k]
            let bu = speakerU[j], bv = speakerV[j]
            let det = au * bv - av * bu
            let ga = (pu * bv - pv * bu) / det
            let gb = (au * pv - av * pu) / det
            let smaller = min(ga, gb)
            if smaller > bestMinimum {
                bestMinimum = smaller
                best = k
                bestA = ga
                bestB = gb
            }
        }
        if best >= 0 && bestMinimum >= -1e-12 {
            let ga = max(bestA, 0)
            let gb = max(bestB, 0)
            let norm = EffectMath.squareRoot(ga * ga + gb * gb)
            gains[best] = Float(ga / norm)
            gains[best == n - 1 ? 0 : best + 1] = Float(gb / norm)
            return
        }
        // In a gap wider than 180°: the nearest speaker alone. Equal distances are broken towards the
        // source's side (speaker u closer to p's u), which keeps mirror images exact; a source exactly
        // on the median plane between two equally near speakers is shared between them at −3 dB.
        var nearest = 0
        var largest = -Double.infinity
        var tied = -1
        for k in 0..<n {
            let d = pu * speakerU[k] + pv * speakerV[k]
            if d > largest {
                largest = d
                nearest = k
                tied = -1
            } else if d == largest {
                let side = (speakerU[k] - speakerU[nearest]) * pu
                if side > 0 {
                    nearest = k
                    tied = -1
                } else if side == 0 {
                    tied = k
                }
            }
        }
        if tied >= 0 {
            gains[nearest] = 0.707_106_781_186_547_524_4
            gains[tied] = 0.707_106_781_186_547_524_4
        } else {
            gains[nearest] = 1
        }
    }

    /// The output channel of sorted speaker `index`.
    @inlinable
    public func channel(ofSpeaker index: Int) -> Int { speakerChannel[index] }

    /// Glides every speaker's gain to its VBAP gain for `direction` times `gain`, over `rampFrames`
    /// (0 jumps; before the first `process` the values apply at once).
    @inlinable
    public mutating func setDirection(_ direction: SourceDirection, gain: Float, rampFrames: Int) {
        speakerGains(for: direction, into: targets)
        let frames = hasStarted ? rampFrames : 0
        for k in 0..<speakerCount { ramps[k].ramp(to: targets[k] * gain, frames: frames) }
    }

    /// Adds `frames` samples of `input` to each speaker's channel of `output` with its gain.
    @inlinable
    public mutating func process(input: UnsafePointer<Float>, output: BusRef, frames: Int) {
        hasStarted = true
        for k in 0..<speakerCount {
            MixKernel.accumulate(input, into: output.channel(speakerChannel[k]), count: frames, gain: &ramps[k])
        }
    }

    /// Ends glides at their targets (no memory to clear).
    @inlinable
    public mutating func reset() {
        for k in 0..<speakerCount { ramps[k].jump(to: ramps[k].target) }
    }
}

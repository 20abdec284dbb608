// Render side (set…, reset, inputFramesWanted, push, pull) and control side (init, deallocate).
// AVAudioUnitVarispeed: playback at a variable rate by band-limited interpolation; pitch follows rate.

/// Varispeed (AVAudioUnitVarispeed): reads its input at `rate` input frames per output frame, so a
/// sine at f comes out at rate · f and the pitch moves by 1200 · log₂(rate) cents.
///
/// Algorithm: band-limited interpolation with a Kaiser-windowed sinc (`WindowedSincTable`, 32 zero
/// crossings per side, β = 9, 512 phases per zero crossing with linear interpolation between phases;
/// J. O. Smith and P. Gossett, ICASSP 1984). Output frame j is
/// `y(j) = s · Σₖ h(s · (x(j) − k)) · in(k)`, where x(j) is the read position in input frames and
/// s = min(1, 1/rate). Above rate 1 the sinc is stretched by 1/s, which lowers its cutoff to the output
/// Nyquist frequency (in input terms, fs/(2·rate)), so what would fold back is removed rather than
/// aliased; that costs 64·rate taps per frame instead of 64.
///
/// Pull interface: the host asks `inputFramesWanted(outputFrames:)`, pushes that many input frames,
/// repeats until it answers 0, then pulls. The kernel keeps its input `latencyFrames` (33) frames ahead
/// of the read position at rate 1 (⌈32·rate⌉ + 1 above), so the output is time-aligned with the input:
/// output frame 0 is input frame 0, and at rate 1 from a fresh start or `reset()` the output equals the
/// input exactly (the taps fall on whole samples, where h is exactly 1 and 0). Frames before the first
/// input count as silence.
///
/// Rate changes glide linearly over 20 ms, per frame, so the read position and its slope never jump.
/// After a glide away from 1 and back, the read position keeps its fraction and the output is the input
/// interpolated between samples (THD + N below −109 dB), not a copy.
///
/// Bypass crossfades over 10 ms to the input read at a whole-frame position (the read position rounded,
/// advancing one frame per frame); settled, it copies the input exactly. Leaving a settled bypass resumes
/// interpolation at that position.
///
/// Thread contract: `init`/`deallocate` on the control side; the rest is RT-safe (no allocation, lock,
/// ARC or C call). Cost: about 64·max(1, rate) multiply-adds per frame and channel plus the coefficients.
public struct VarispeedKernel {
    @inlinable public static var minimumRate: Double { 0.25 }
    @inlinable public static var maximumRate: Double { 4 }

    public let sampleRate: Double
    public let maxBlockFrames: Int
    public let channelCount: Int
    /// Input frames the kernel holds ahead of its read position at rate 1 (for JACK latency reporting).
    public let latencyFrames: Int
    /// Frames `pull` could not supply (output as silence) since `init`.
    public var underrunFrames = 0

    @usableFromInline var input: MirroredRing
    @usableFromInline let table: WindowedSincTable
    @usableFromInline let taps: UnsafeMutablePointer<Float>
    /// Read position: `readIndex + readFraction`, fraction in [0, 1).
    @usableFromInline var readIndex = 0
    @usableFromInline var readFraction = 0.0
    /// Next input frame of the dry (bypass) path.
    @usableFromInline var dryIndex = 0
    @usableFromInline var rate = LinearRamp<Double>(1)
    /// Dry signal for the bypass crossfade, and the crossfade (its wet/dry mix is unused).
    @usableFromInline var wetDry: WetDryBypass
    @usableFromInline var hasStarted = false
    @usableFromInline let glideFrames: Int

    /// Control side. Allocates the input ring (4096 frames per channel at 48 kHz with 128-frame blocks,
    /// mirrored), the sinc table (128 KB) and scratch. Default rate 1 (AVAudioUnitVarispeed).
    /// `channelCount` 1…64.
    public init(sampleRate: Double, maxBlockFrames: Int, channelCount: Int) {
        precondition(sampleRate > 0 && maxBlockFrames > 0 && channelCount >= 1 && channelCount <= 64)
        self.sampleRate = sampleRate
        self.maxBlockFrames = maxBlockFrames
        self.channelCount = channelCount
        wetDry = WetDryBypass(sampleRate: sampleRate, maxBlockFrames: maxBlockFrames, channelCount: channelCount)
        glideFrames = EffectTiming.frames(seconds: EffectTiming.glideSeconds, sampleRate: sampleRate)
        let widest = Self.halfWidth(rate: Self.maximumRate)
        latencyFrames = Self.halfWidth(rate: 1) + 1
        // History behind the read position, look-ahead, one block at the highest rate, an extra pushed
        // block, and the drift between the dry and processed paths during a bypass crossfade.
        let fade = EffectTiming.frames(seconds: EffectTiming.bypassSeconds, sampleRate: sampleRate)
        let needed = 2 * widest + 6 * maxBlockFrames + 4 * fade + 64
        input = MirroredRing(minimumCapacity: needed, channelCount: channelCount)
        table = WindowedSincTable()
        taps = .allocate(capacity: 2 * widest)
        taps.initialize(repeating: 0, count: 2 * widest)
    }

    /// Control side. Frees every buffer; the kernel must not be used afterwards.
    public func deallocate() {
        input.deallocate()
        table.deallocate()
        taps.deallocate()
        wetDry.deallocate()
    }

    /// Input frames on each side of the read position that carry non-zero weight at `rate`:
    /// ⌈Z / s⌉ with s = min(1, 1/rate).
    @inlinable
    static func halfWidth(rate: Double) -> Int {
        let z = WindowedSincTable.zeroCrossings
        if rate <= 1 { return z }
        let w = Double(z) * rate
        let whole = Int(w)
        return Double(whole) < w ? whole &+ 1 : whole
    }

    // MARK: Parameters (render side)

    /// The target rate.
    @inlinable public var currentRate: Double { rate.target }
    @inlinable public var isBypassed: Bool { wetDry.isBypassed }

    /// Sets the rate (clamped to 0.25 … 4; NaN ignored). Glides linearly over 20 ms once running.
    @inlinable
    public mutating func setRate(_ value: Double) {
        guard !value.isNaN else { return }
        let target = EffectMath.clamp(value, Self.minimumRate, Self.maximumRate)
        rate.ramp(to: target, frames: hasStarted ? glideFrames : 0)
    }

    /// Sets parameter `index` in `VarispeedKernel.parameters` order (rate). Unknown indices are ignored.
    @inlinable
    public mutating func setParameter(_ index: Int, value: Double) {
        if index == Parameter.rate.rawValue { setRate(value) }
    }

    /// Crossfades (10 ms) to the input read at the rounded read position, or back.
    @inlinable
    public mutating func setBypass(_ bypassed: Bool) {
        if bypassed && wetDry.bypass.isFullyActive {
            // Mid-crossfade the dry path is audible and keeps its position.
            dryIndex = readIndex &+ (readFraction >= 0.5 ? 1 : 0)
        }
        if !hasStarted {
            wetDry.bypass.jump(bypassed)
            if !bypassed {
                readIndex = dryIndex
                readFraction = 0
            }
        } else if wetDry.bypass.set(bypassed) {
            // Leaving a settled bypass: interpolation resumes where the dry path is.
            readIndex = dryIndex
            readFraction = 0
        }
    }

    /// Forgets all input and restarts at position 0 (the rate settles on its target). Cost: a memset
    /// of the ring.
    @inlinable
    public mutating func reset() {
        input.clear()
        readIndex = 0
        readFraction = 0
        dryIndex = 0
        rate.ramp(to: rate.target, frames: 0)
    }

    // MARK: Pull interface (render side)

    /// How many input frames (≤ `maxBlockFrames`) the kernel wants pushed next so that it can deliver
    /// `outputFrames` frames; 0 when it already holds enough for a pull of `outputFrames`.
    @inlinable
    public func inputFramesWanted(outputFrames: Int) -> Int {
        let n = min(max(outputFrames, 0), maxBlockFrames)
        if n == 0 { return 0 }
        var end = 0
        if !wetDry.bypass.isFullyBypassed {
            // The rate glides monotonically, so its largest value bounds every step of this pull.
            let r = rate.maximum(overFrames: n)
            let last = Int(EffectMath.floor(readFraction + Double(n &- 1) * r)) &+ readIndex
            end = last &+ Self.halfWidth(rate: r) &+ 1
        }
        if !wetDry.bypass.isFullyActive {
            end = max(end, dryIndex &+ n &- 1 &+ latencyFrames)
        }
        return min(max(end &- input.writePosition, 0), maxBlockFrames)
    }

    /// Appends `frames` (≤ `maxBlockFrames`) input frames of the first `channelCount` channels of `bus`.
    @inlinable
    public mutating func push(_ bus: BusRef, frames: Int) {
        hasStarted = true
        input.write(bus, frames: min(max(frames, 0), maxBlockFrames))
    }

    /// Writes exactly `frames` (≤ `maxBlockFrames`) frames to the first `channelCount` channels of
    /// `output`; frames whose input has not been pushed are silence and count in `underrunFrames` (the
    /// read position then waits).
    @inlinable
    public mutating func pull(_ output: BusRef, frames: Int) {
        hasStarted = true
        let n = min(max(frames, 0), maxBlockFrames)
        if wetDry.bypass.isFullyBypassed {
            readDry(into: output, frames: n)
            flushSubnormals(output, frames: n)
            return
        }
        for j in 0..<n { renderFrame(j, into: output) }
        if !wetDry.bypass.isFullyActive { readDry(into: wetDry.dryBus, frames: n) }
        wetDry.finish(output: output, frames: n)
        flushSubnormals(output, frames: n)
    }

    /// One output frame at the read position, then the position advances by the rate.
    @inlinable
    mutating func renderFrame(_ j: Int, into output: BusRef) {
        let r = rate.next()
        let k = Self.halfWidth(rate: r)
        if readIndex &+ k >= input.writePosition {
            for c in 0..<channelCount { output.channel(c)[j] = 0 }
            underrunFrames &+= 1
            return
        }
        if readFraction == 0 && r == 1 {
            // Whole-sample position at rate 1: the taps are exactly δ, so copy.
            for c in 0..<channelCount { output.channel(c)[j] = input.span(channel: c, from: readIndex)[0] }
        } else {
            table.coefficients(fraction: readFraction, scale: r > 1 ? 1 / r : 1, halfWidth: k, into: taps)
            let first = readIndex &- k &+ 1
            let count = 2 &* k
            for c in 0..<channelCount {
                let x = input.span(channel: c, from: first)
                var sum: Float = 0
                for i in 0..<count { sum += taps[i] * x[i] }
                output.channel(c)[j] = sum
            }
        }
        let advanced = readFraction + r
        let whole = EffectMath.floor(advanced)
        readIndex &+= Int(whole)
        readFraction = advanced - whole
    }

    /// Copies `frames` input frames from the dry position (zeros where none was pushed) and advances it.
    @inlinable
    mutating func readDry(into bus: BusRef, frames: Int) {
        for c in 0..<channelCount {
            input.read(channel: c, from: dryIndex, count: frames, into: bus.channel(c))
        }
        let missing = dryIndex &+ frames &- input.writePosition
        if missing > 0 && wetDry.bypass.isFullyBypassed { underrunFrames &+= min(missing, frames) }
        dryIndex &+= frames
    }

    @inlinable
    func flushSubnormals(_ bus: BusRef, frames: Int) {
        for c in 0..<channelCount {
            let p = bus.channel(c)
            for i in 0..<frames where p[i] != 0 && p[i].magnitude < 1e-20 { p[i] = 0 }
        }
    }
}

extension VarispeedKernel {
    /// The `setParameter` indices, named: `parameters` is in this order (a test checks the names), and
    /// the engine addresses the kernel only through these.
    public enum Parameter: Int, CaseIterable, Sendable {
        case rate
    }

    /// Control side. Parameters in `setParameter` index order (name, range and default as
    /// AVAudioUnitVarispeed).
    public static let parameters: [EffectParameter] = [
        EffectParameter(
            "rate", unit: "×", minimum: 0.25, maximum: 4, default: 1, isSmoothed: true,
            "playback rate; pitch follows (1200·log2(rate) cents); glides linearly over 20 ms")
    ]
}

// Render side (process, setGain, reset) and control side (init, deallocate). The 3D mixer's "HRTF" and
// "HRTF HQ" algorithms: direct convolution with a head-related impulse response pair, per-ear delays,
// and a crossfade whenever the control side hands over a new pair.

/// The two HRTF qualities (AVAudio3DMixingRenderingAlgorithm.HRTF and .HRTFHQ).
///
/// Both render identically on the render side; they differ in what the control side writes into the
/// HRIR slot and in the crossfade length:
/// - `standard`: the nearest measured direction (`SOFADataset` without interpolation); crossfade of
///   128 frames at 48 kHz (2.7 ms; scaled with the rate). Changes happen only when the source crosses
///   into another measurement's neighbourhood.
/// - `high`: the inverse-distance-weighted blend of the nearest measurement and its closest
///   neighbours in azimuth and elevation (libmysofa's `mysofa_interpolate`), delays interpolated
///   separately from the (onset-aligned) filters, so the blend does not comb-filter; crossfade of
///   512 frames (10.7 ms), which keeps up with 60 updates per second (800 frames).
public enum HRTFQuality: Sendable, BitwiseCopyable {
    case standard
    case high

    /// Crossfade length at `sampleRate`.
    @inlinable
    public func crossfadeFrames(sampleRate: Double) -> Int {
        let base = self == .standard ? 128.0 : 512.0
        return max(1, Int(base * sampleRate / 48_000 + 0.5))
    }

    /// Whether the control side interpolates between measured directions.
    @inlinable
    public var interpolates: Bool { self == .high }
}

/// Binaural rendering by HRIR convolution.
///
/// Per ear: y = h ∗ x by direct convolution over the input history (both ears share one pass over the
/// input, SIMD-8), then a fractional delay line applies the ear's onset delay (the HRIR sets store each
/// filter with its leading delay removed, as OpenAL Soft does; the interaural time difference lives in
/// these delays). The result is scaled by the source gain and added to channels 0 and 1.
///
/// New HRIRs arrive through `exchange` (see `HRIRExchange`): the control side fills
/// `exchange.writableSlot` and calls `exchange.publish()`. At the start of each `process`, if no
/// crossfade is running, the kernel takes the newest published pair and crossfades from the old filter
/// output to the new one over `crossfadeFrames` with a raised-cosine weight w = (1 − cos(π·n/L))/2 (an
/// equal-gain crossfade, right for the strongly correlated outputs of neighbouring HRIRs, and with no
/// corner at either end), while the delays glide linearly to the new pair's over `delayGlideFrames`
/// (by default the longer of the crossfade and one 60 Hz update interval: a nearest-neighbour switch
/// moves a delay by a few frames, and doing that within 128 frames would bend the pitch by several per
/// cent for a moment). The first pair taken before any audio applies at once.
///
/// Latency: none beyond the dataset's own onset delays. Cost per sample: 2 × `filterLength`
/// multiply-adds, doubled during a crossfade, plus two cubic reads. Memory: four slots of
/// 2 × `filterLength` floats, the input history and two delay lines.
/// Thread contract: `init`/`deallocate` on the control side; `process`, `setGain`, `reset` RT-safe;
/// `exchange` is used from both sides as documented there.
public struct HRTFConvolver: BitwiseCopyable {
    public let sampleRate: Double
    public let maxBlockFrames: Int
    /// Taps per ear (a multiple of 8).
    public let filterLength: Int
    public let crossfadeFrames: Int
    /// Frames over which the per-ear delays glide to a new pair's.
    public let delayGlideFrames: Int
    /// The slots the control side writes new HRIR pairs into.
    public let exchange: HRIRExchange
    @usableFromInline var current: Int
    @usableFromInline var previous: Int
    @usableFromInline var fadeRemaining = 0
    /// Input history: `filterLength − 1` past samples, then the current block.
    @usableFromInline let history: UnsafeMutablePointer<Float>
    @usableFromInline var leftLine: FractionalDelayLine
    @usableFromInline var rightLine: FractionalDelayLine
    @usableFromInline var leftDelay = ControlGlide(FractionalDelayLine.minimumDelay)
    @usableFromInline var rightDelay = ControlGlide(FractionalDelayLine.minimumDelay)
    @usableFromInline var gain = ParameterRamp(1)
    @usableFromInline var hasStarted = false
    /// Crossfade weights for the new filter, w[n] = (1 − cos(π·(n + 1)/L))/2, n = 0 … L − 1.
    @usableFromInline let fadeWeights: UnsafeMutablePointer<Float>

    /// Control side. `filterLength` taps per ear (rounded up to a multiple of 8), delays up to
    /// `maximumDelayFrames`, crossfades of `crossfadeFrames` (see `HRTFQuality.crossfadeFrames`), delay
    /// glides of `delayGlideFrames` (nil: max(crossfade, `SpatialTiming.defaultRampFrames`)).
    public init(sampleRate: Double, maxBlockFrames: Int, filterLength: Int, maximumDelayFrames: Double,
                crossfadeFrames: Int, delayGlideFrames: Int? = nil) {
        precondition(sampleRate > 0 && maxBlockFrames > 0 && filterLength > 0 && crossfadeFrames > 0)
        self.sampleRate = sampleRate
        self.maxBlockFrames = maxBlockFrames
        self.crossfadeFrames = crossfadeFrames
        self.delayGlideFrames = max(
            1, delayGlideFrames ?? max(crossfadeFrames, SpatialTiming.defaultRampFrames(sampleRate: sampleRate)))
        exchange = HRIRExchange(filterLength: filterLength)
        self.filterLength = exchange.capacity
        (current, previous) = HRIRExchange.initialRenderSlots
        let historyLength = self.filterLength - 1 + maxBlockFrames
        history = .allocate(capacity: historyLength)
        history.initialize(repeating: 0, count: historyLength)
        leftLine = FractionalDelayLine(maximumDelay: maximumDelayFrames + FractionalDelayLine.minimumDelay)
        rightLine = FractionalDelayLine(maximumDelay: maximumDelayFrames + FractionalDelayLine.minimumDelay)
        fadeWeights = .allocate(capacity: crossfadeFrames)
        for n in 0..<crossfadeFrames {
            fadeWeights[n] = Float(0.5 - 0.5 * EffectMath.cos(EffectMath.pi * Double(n + 1) / Double(crossfadeFrames)))
        }
    }

    /// Control side. Frees every buffer, the exchange's slots included.
    public func deallocate() {
        exchange.deallocate()
        history.deallocate()
        leftLine.deallocate()
        rightLine.deallocate()
        fadeWeights.deallocate()
    }

    /// True while a crossfade to a new HRIR pair is running.
    @inlinable public var isCrossfading: Bool { fadeRemaining > 0 }

    /// Glides the source gain to `newGain` over `rampFrames` (before the first `process` at once).
    @inlinable
    public mutating func setGain(_ newGain: Float, rampFrames: Int) {
        gain.ramp(to: newGain, frames: hasStarted ? rampFrames : 0)
    }

    /// Both ears' dot products of `x` with the reversed filters `a` and `b` over `count` (a multiple of
    /// 8) taps, accumulated in eight lanes.
    @inlinable
    static func dot2(_ x: UnsafePointer<Float>, _ a: UnsafePointer<Float>, _ b: UnsafePointer<Float>, count: Int)
        -> (Float, Float)
    {
        var sa = SIMD8<Float>(repeating: 0)
        var sb = SIMD8<Float>(repeating: 0)
        let rx = UnsafeRawPointer(x)
        let ra = UnsafeRawPointer(a)
        let rb = UnsafeRawPointer(b)
        var offset = 0
        let end = count &* 4
        while offset < end {
            let xv = rx.loadUnaligned(fromByteOffset: offset, as: SIMD8<Float>.self)
            sa += xv * ra.loadUnaligned(fromByteOffset: offset, as: SIMD8<Float>.self)
            sb += xv * rb.loadUnaligned(fromByteOffset: offset, as: SIMD8<Float>.self)
            offset &+= 32
        }
        return (sa.sum(), sb.sum())
    }

    /// Takes a freshly published HRIR pair, if any, and starts the crossfade to it.
    @inlinable
    mutating func takeNewFilters() {
        guard let fresh = exchange.take(returning: previous) else { return }
        previous = current
        current = fresh
        let s = exchange.slot(current)
        let l = s.leftDelay + FractionalDelayLine.minimumDelay
        let r = s.rightDelay + FractionalDelayLine.minimumDelay
        if hasStarted {
            fadeRemaining = crossfadeFrames
            leftDelay.glide(to: l, ticks: delayGlideFrames)
            rightDelay.glide(to: r, ticks: delayGlideFrames)
        } else {
            leftDelay.glide(to: l, ticks: 0)
            rightDelay.glide(to: r, ticks: 0)
        }
    }

    /// Adds `frames` binaural samples of `input` to channels 0 and 1 of `output` (longer blocks than
    /// `maxBlockFrames` are processed in pieces).
    @inlinable
    public mutating func process(input: UnsafePointer<Float>, output: BusRef, frames: Int) {
        var offset = 0
        while offset < frames {
            let n = min(maxBlockFrames, frames &- offset)
            let piece = BusRef(data: output.data + offset, channelCount: output.channelCount, stride: output.stride)
            processPiece(input: input + offset, output: piece, frames: n)
            offset &+= n
        }
    }

    @inlinable
    mutating func processPiece(input: UnsafePointer<Float>, output: BusRef, frames: Int) {
        if fadeRemaining == 0 { takeNewFilters() }
        hasStarted = true
        let n = filterLength
        let past = n &- 1
        // Plain loops: `update(from:count:)` is not accepted by the real-time checker.
        let block = history + past
        for i in 0..<frames { block[i] = input[i] }
        let new = exchange.slot(current)
        let old = exchange.slot(previous)
        let outL = output.channel(0)
        let outR = output.channel(1)
        for i in 0..<frames {
            let window = UnsafePointer(history + i)
            var (yl, yr) = Self.dot2(window, new.reversedLeft, new.reversedRight, count: n)
            if fadeRemaining > 0 {
                let (ol, or) = Self.dot2(window, old.reversedLeft, old.reversedRight, count: n)
                let w = fadeWeights[crossfadeFrames &- fadeRemaining]
                yl = ol + (yl - ol) * w
                yr = or + (yr - or) * w
                fadeRemaining &-= 1
            }
            leftLine.write(yl)
            rightLine.write(yr)
            let g = gain.next()
            outL[i] += leftLine.read(delay: leftDelay.value) * g
            outR[i] += rightLine.read(delay: rightDelay.value) * g
            _ = leftDelay.tick()
            _ = rightDelay.tick()
        }
        // Keep the last `past` inputs for the next block (forward copy: the regions may overlap, and the
        // destination is before the source).
        for j in 0..<past { history[j] = history[j &+ frames] }
    }

    /// Clears the input history and delay lines, ends the crossfade and glides (RT-safe; a fill of the
    /// buffers).
    @inlinable
    public mutating func reset() {
        history.update(repeating: 0, count: filterLength &- 1 &+ maxBlockFrames)
        leftLine.reset()
        rightLine.reset()
        fadeRemaining = 0
        leftDelay.glide(to: leftDelay.target, ticks: 0)
        rightDelay.glide(to: rightDelay.target, ticks: 0)
        gain.jump(to: gain.target)
    }
}

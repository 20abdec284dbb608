// Render side (process, setGain, reset) and control side (init, deallocate). The 3D mixer's "HRTF" and
// "HRTF HQ" algorithms: direct convolution with a head-related impulse response pair, per-ear delays,
// and a crossfade whenever the control side hands over a new pair.
import CSpatialKernels

/// The two HRTF qualities (AVAudio3DMixingRenderingAlgorithm.HRTF and .HRTFHQ).
///
/// Both render identically on the render side; they differ in the filters an engine loads for them, in
/// what the control side writes into the HRIR slot and in the crossfade length:
/// - `standard`: minimum-phase filters of 64 taps at 48 kHz (`filterLength(sampleRate:)`); crossfade of
///   128 frames at 48 kHz (2.7 ms; scaled with the rate); interpolated at the centre of the source's
///   direction cell, a new pair only when the source enters another cell (`cellKey(for:)`).
/// - `high`: minimum-phase filters of 128 taps; crossfade of 512 frames (10.7 ms), which keeps up with
///   60 updates per second (800 frames).
///
/// Both interpolate: the inverse-distance-weighted blend of the nearest measurement and its closest
/// neighbours in azimuth and elevation (libmysofa's `mysofa_interpolate`), delays (fractional frames)
/// interpolated separately from the (aligned) filters, so the blend does not comb-filter.
public enum HRTFQuality: Sendable, BitwiseCopyable {
    case standard
    case high

    /// Crossfade length at `sampleRate`.
    @inlinable
    public func crossfadeFrames(sampleRate: Double) -> Int {
        let base = self == .standard ? 128.0 : 512.0
        return max(1, Int(base * sampleRate / 48_000 + 0.5))
    }

    /// Taps per ear of the minimum-phase filters an engine renders this quality with at `sampleRate`:
    /// 64 (HRTF) or 128 (HRTF HQ) at 48 kHz, i.e. 1.33 or 2.67 ms, scaled with the rate and rounded up to
    /// a multiple of 8. `SPATIAL.md` gives the spectral error against the full-length filters.
    @inlinable
    public func filterLength(sampleRate: Double) -> Int {
        let base = self == .standard ? 64.0 : 128.0
        let taps = Int((base * sampleRate / 48_000).rounded(.up))
        return max(8, (taps + 7) / 8 * 8)
    }

    /// Whether the control side interpolates between measured directions: true for both (HRTF used the
    /// nearest measurement until 2026-11, so a moving source stepped between measurements).
    @inlinable
    public var interpolates: Bool { true }
}

/// Binaural rendering by HRIR convolution.
///
/// Per ear: y[n] = Σₖ h[k]·x[n − d − k], a direct convolution with the ear's filter h applied to the input
/// delayed by the ear's whole-frame delay d (the HRIR sets store each filter with its leading delay
/// removed, as OpenAL Soft does; the interaural time difference lives in these delays, whose fractional
/// parts the slots fold into the filters, `HRIRFractionalDelay`). The delay is a read offset into the
/// input history, so it costs nothing. The
/// convolution is vectorised over output frames: 16 frames per pass, eight-lane accumulators, one
/// broadcast tap at a time, both ears in the same loop. The result is scaled by the source gain and added
/// to channels 0 and 1.
///
/// New HRIRs arrive through `exchange` (see `HRIRExchange`): the control side fills
/// `exchange.writableSlot` and calls `exchange.publish()`. At the start of each `process`, if no
/// crossfade is running, the kernel takes the newest published pair and crossfades from the old pair's
/// output (old filters at their old delays) to the new one's over `crossfadeFrames` with a raised-cosine
/// weight w = (1 − cos(π·n/L))/2 (an equal-gain crossfade, right for the strongly correlated outputs of
/// neighbouring HRIRs, and with no corner at either end). A change of delay therefore moves through the
/// crossfade too, as in OpenAL Soft, without a pitch bend. The first pair taken before any audio
/// applies at once.
///
/// Latency: none beyond the dataset's own onset delays. Cost per sample: 2 × `filterLength`
/// multiply-adds, doubled during a crossfade. Memory: four slots of 2 × `filterLength` floats, the input
/// history (`maximumDelayFrames` + `filterLength` + one block) and four block buffers.
/// Thread contract: `init`/`deallocate` on the control side; `process`, `setGain`, `reset` RT-safe;
/// `exchange` is used from both sides as documented there.
public struct HRTFConvolver: BitwiseCopyable {
    public let sampleRate: Double
    public let maxBlockFrames: Int
    /// Taps per ear (a multiple of 8).
    public let filterLength: Int
    public let crossfadeFrames: Int
    /// Longest per-ear delay, whole frames (longer delays in a slot are clamped to it).
    public let maximumDelayFrames: Int
    /// The slots the control side writes new HRIR pairs into.
    public let exchange: HRIRExchange
    @usableFromInline var current: Int
    @usableFromInline var previous: Int
    @usableFromInline var fadeRemaining = 0
    /// Input history: `historyPast` past samples, then the current block, then `chunk` frames of slack
    /// that the last (partial) pass of the convolution may read.
    @usableFromInline let history: UnsafeMutablePointer<Float>
    @usableFromInline let historyPast: Int
    /// Four buffers of `maxBlockFrames + chunk`: new left, new right, old left, old right.
    @usableFromInline let scratch: UnsafeMutablePointer<Float>
    @usableFromInline var gain = ParameterRamp(1)
    @usableFromInline var hasStarted = false
    /// Crossfade weights for the new filter, w[n] = (1 − cos(π·(n + 1)/L))/2, n = 0 … L − 1.
    @usableFromInline let fadeWeights: UnsafeMutablePointer<Float>

    /// Output frames per pass of the convolution (two eight-lane accumulators per ear).
    @inlinable static var chunk: Int { 16 }

    /// Control side. `filterLength` taps per ear (rounded up to a multiple of 8), delays up to
    /// `maximumDelayFrames` (rounded up to whole frames), crossfades of `crossfadeFrames` (see
    /// `HRTFQuality.crossfadeFrames`).
    public init(
        sampleRate: Double, maxBlockFrames: Int, filterLength: Int, maximumDelayFrames: Double,
        crossfadeFrames: Int
    ) {
        precondition(sampleRate > 0 && maxBlockFrames > 0 && filterLength > 0 && crossfadeFrames > 0)
        precondition(maximumDelayFrames >= 0 && maximumDelayFrames < 1e7)
        self.sampleRate = sampleRate
        self.maxBlockFrames = maxBlockFrames
        self.crossfadeFrames = crossfadeFrames
        self.maximumDelayFrames = Int(maximumDelayFrames.rounded(.up))
        exchange = HRIRExchange(filterLength: filterLength)
        self.filterLength = exchange.capacity
        (current, previous) = HRIRExchange.initialRenderSlots
        historyPast = self.maximumDelayFrames + self.filterLength - 1
        let historyLength = historyPast + maxBlockFrames + Self.chunk
        history = .allocate(capacity: historyLength)
        history.initialize(repeating: 0, count: historyLength)
        let scratchLength = 4 * (maxBlockFrames + Self.chunk)
        scratch = .allocate(capacity: scratchLength)
        scratch.initialize(repeating: 0, count: scratchLength)
        fadeWeights = .allocate(capacity: crossfadeFrames)
        for n in 0..<crossfadeFrames {
            fadeWeights[n] = Float(0.5 - 0.5 * EffectMath.cos(EffectMath.pi * Double(n + 1) / Double(crossfadeFrames)))
        }
    }

    /// Control side. Frees every buffer, the exchange's slots included.
    public func deallocate() {
        exchange.deallocate()
        history.deallocate()
        scratch.deallocate()
        fadeWeights.deallocate()
    }

    /// True while a crossfade to a new HRIR pair is running.
    @inlinable public var isCrossfading: Bool { fadeRemaining > 0 }

    /// Glides the source gain to `newGain` over `rampFrames` (before the first `process` at once).
    @inlinable
    public mutating func setGain(_ newGain: Float, rampFrames: Int) {
        gain.ramp(to: newGain, frames: hasStarted ? rampFrames : 0)
    }

    /// Both ears' convolutions for `frames` output frames (rounded up to a multiple of `chunk`; the extra
    /// frames are scratch): `yl[i] = Σⱼ hl[j]·xl[i + j]`, with `hl`, `hr` the time-reversed filters of
    /// `taps` taps and `xl`, `xr` each ear's input window (the history at that ear's delay). Every output
    /// frame sums its taps in the same order whatever pass it falls in, so the result does not depend on
    /// the block size.
    ///
    /// On x86-64 CPUs with AVX2 and FMA (checked once, when the program loads) the loop runs as the C
    /// function `ss_hrtf_convolve_avx2`: the same passes and tap order in eight-lane registers with fused
    /// multiply-adds, about three times faster. Elsewhere it runs as written here (SSE2 on x86-64, NEON
    /// on arm64). The two builds differ in rounding (fused or not), never in block-size invariance.
    @inlinable
    public static func convolve(
        left xl: UnsafePointer<Float>, right xr: UnsafePointer<Float>, filters: HRIRSlot,
        into yl: UnsafeMutablePointer<Float>, _ yr: UnsafeMutablePointer<Float>, frames: Int
    ) {
        if convolveAVX2(left: xl, right: xr, filters: filters, into: yl, yr, frames: frames) { return }
        convolvePortable(left: xl, right: xr, filters: filters, into: yl, yr, frames: frames)
    }

    /// Whether `convolve` runs the AVX2/FMA build (fixed for the process's life).
    public static var usesAVX2: Bool { ss_hrtf_has_avx2() != 0 }

    /// The AVX2/FMA build; false (having done nothing) on CPUs without it. The static real-time checker
    /// cannot see into C, so this wrapper is exempt from it: the C loop touches only its arguments (no
    /// memory, locks or calls), and the allocation probes of the render thread cover it at run time.
    @inlinable @inline(never) @_semantics("no_performance_analysis")
    static func convolveAVX2(
        left xl: UnsafePointer<Float>, right xr: UnsafePointer<Float>, filters: HRIRSlot,
        into yl: UnsafeMutablePointer<Float>, _ yr: UnsafeMutablePointer<Float>, frames: Int
    ) -> Bool {
        guard ss_hrtf_has_avx2() != 0 else { return false }
        ss_hrtf_convolve_avx2(
            xl, xr, filters.reversedLeft, filters.reversedRight, Int64(filters.capacity), yl, yr,
            Int64(frames))
        return true
    }

    /// The portable build of `convolve` (public for the tests that compare the two).
    @inlinable
    public static func convolvePortable(
        left xl: UnsafePointer<Float>, right xr: UnsafePointer<Float>, filters: HRIRSlot,
        into yl: UnsafeMutablePointer<Float>, _ yr: UnsafeMutablePointer<Float>, frames: Int
    ) {
        let taps = filters.capacity
        let hl = filters.reversedLeft
        let hr = filters.reversedRight
        let rl = UnsafeRawPointer(xl)
        let rr = UnsafeRawPointer(xr)
        var i = 0
        while i < frames {
            var l0 = SIMD8<Float>(repeating: 0)
            var l1 = SIMD8<Float>(repeating: 0)
            var r0 = SIMD8<Float>(repeating: 0)
            var r1 = SIMD8<Float>(repeating: 0)
            var offset = i &* 4
            for j in 0..<taps {
                let cl = SIMD8<Float>(repeating: hl[j])
                let cr = SIMD8<Float>(repeating: hr[j])
                l0 += cl * rl.loadUnaligned(fromByteOffset: offset, as: SIMD8<Float>.self)
                l1 += cl * rl.loadUnaligned(fromByteOffset: offset &+ 32, as: SIMD8<Float>.self)
                r0 += cr * rr.loadUnaligned(fromByteOffset: offset, as: SIMD8<Float>.self)
                r1 += cr * rr.loadUnaligned(fromByteOffset: offset &+ 32, as: SIMD8<Float>.self)
                offset &+= 4
            }
            let ol = UnsafeMutableRawPointer(yl + i)
            let or = UnsafeMutableRawPointer(yr + i)
            ol.storeBytes(of: l0, as: SIMD8<Float>.self)
            ol.storeBytes(of: l1, toByteOffset: 32, as: SIMD8<Float>.self)
            or.storeBytes(of: r0, as: SIMD8<Float>.self)
            or.storeBytes(of: r1, toByteOffset: 32, as: SIMD8<Float>.self)
            i &+= Self.chunk
        }
    }

    /// The input window of an ear whose delay is `delay` frames: element i + j is the input sample that
    /// tap j of the reversed filter multiplies for output frame i.
    @inlinable
    func window(delay: Double) -> UnsafePointer<Float> {
        let d = min(max(Int(delay), 0), maximumDelayFrames)
        return UnsafePointer(history + (historyPast &- d &- (filterLength &- 1)))
    }

    /// Takes a freshly published HRIR pair, if any, and starts the crossfade to it.
    @inlinable
    mutating func takeNewFilters() {
        guard let fresh = exchange.take(returning: previous) else { return }
        previous = current
        current = fresh
        fadeRemaining = hasStarted ? crossfadeFrames : 0
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
        // Plain loops: `update(from:count:)` is not accepted by the real-time checker.
        let block = history + historyPast
        for i in 0..<frames { block[i] = input[i] }
        let stride = maxBlockFrames &+ Self.chunk
        let yl = scratch
        let yr = scratch + stride
        let new = exchange.slot(current)
        Self.convolve(
            left: window(delay: new.leftDelay), right: window(delay: new.rightDelay), filters: new,
            into: yl, yr, frames: frames)
        if fadeRemaining > 0 {
            // The old pair only for the frames the crossfade still covers.
            let fading = min(frames, fadeRemaining)
            let ol = scratch + 2 &* stride
            let or = scratch + 3 &* stride
            let old = exchange.slot(previous)
            Self.convolve(
                left: window(delay: old.leftDelay), right: window(delay: old.rightDelay), filters: old,
                into: ol, or, frames: fading)
            let weights = fadeWeights + (crossfadeFrames &- fadeRemaining)
            for i in 0..<fading {
                let w = weights[i]
                yl[i] = ol[i] + (yl[i] - ol[i]) * w
                yr[i] = or[i] + (yr[i] - or[i]) * w
            }
            fadeRemaining &-= fading
        }
        let outL = output.channel(0)
        let outR = output.channel(1)
        if gain.isRamping {
            for i in 0..<frames {
                let g = gain.next()
                outL[i] += yl[i] * g
                outR[i] += yr[i] * g
            }
        } else {
            let g = gain.value
            for i in 0..<frames {
                outL[i] += yl[i] * g
                outR[i] += yr[i] * g
            }
        }
        // Keep the last `historyPast` inputs for the next block (forward copy: the regions may overlap,
        // and the destination is before the source).
        for j in 0..<historyPast { history[j] = history[j &+ frames] }
    }

    /// Clears the input history and ends the crossfade and the gain glide (RT-safe; a fill of the
    /// buffer).
    @inlinable
    public mutating func reset() {
        history.update(repeating: 0, count: historyPast &+ maxBlockFrames &+ Self.chunk)
        fadeRemaining = 0
        gain.jump(to: gain.target)
    }
}

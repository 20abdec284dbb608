// Render side (process, set…, reset) and control side (init, deallocate). An N-band equalizer after
// AVAudioUnitEQ: up to 16 cookbook biquads in series, per-band bypass, global gain, kernel bypass.

/// One band's settings and glides. Parameters glide on the control tick; the band's `mix` crossfades
/// it in and out (per-band bypass and filter-type changes), sample by sample.
public struct EQBandState: BitwiseCopyable {
    public var type: EQFilterType = .parametric
    @usableFromInline var pendingType: EQFilterType = .parametric
    @usableFromInline var hasPendingType = false
    public var isBypassed = true
    /// log₂ of the frequency in Hz while gliding; `frequency` is the exact target.
    @usableFromInline var logFrequency = LinearRamp<Double>(EffectMath.log2(1000))
    public var frequency: Double = 1000
    @usableFromInline var bandwidthGlide = LinearRamp<Double>(0.5)
    @usableFromInline var gainGlide = LinearRamp<Double>(0)
    /// 0: band out (input passes), 1: band in.
    @usableFromInline var mix = ParameterRamp(0)

    /// The type the band is heading to (a type change waits for the band to fade out).
    @inlinable public var requestedType: EQFilterType { hasPendingType ? pendingType : type }
    @inlinable public var bandwidth: Double { bandwidthGlide.target }
    @inlinable public var gainDecibels: Double { gainGlide.target }

    @inlinable
    init() {}

    /// True when the band contributes nothing and costs nothing.
    @inlinable var isSilent: Bool { !mix.isRamping && mix.value == 0 }
    /// 1 when the band should be heard, 0 when it should fade out.
    @inlinable var desiredMix: Float { isBypassed || hasPendingType ? 0 : 1 }

    /// The coefficients for the current (possibly gliding) settings.
    @inlinable
    func coefficients(sampleRate: Double) -> BiquadCoefficients {
        let f = logFrequency.isRamping ? EffectMath.exp2(logFrequency.value) : frequency
        return BiquadCoefficients.eqBand(
            type: type, frequency: f, bandwidth: bandwidthGlide.value, gainDecibels: gainGlide.value,
            sampleRate: sampleRate)
    }
}

/// The band parameters, in the order of `EQKernel.bandParameters` and of the parameter index layout.
public enum EQBandParameter: Int, Sendable, CaseIterable {
    case filterType = 0, frequency, bandwidth, gain, bypass
}

/// N-band parametric equalizer (AVAudioUnitEQ). Each band is a biquad from
/// `BiquadCoefficients.eqBand` (RBJ cookbook; the type mapping is documented there and in
/// docs/EFFECTS.md). Bands run in series in band order; then the global gain.
///
/// Thread contract: `init` and `deallocate` on the control side; everything else on the render thread
/// (RT-safe: no allocation, no locks, no libm). Setters clamp to the declared ranges and ignore NaN.
/// Glides: frequency (in log₂), bandwidth and gain over 20 ms, coefficients recomputed every 16 frames
/// on a fixed grid; band bypass and type changes crossfade the band over 10 ms (a type change fades the
/// band out, switches and clears its state, and fades it back in); global gain glides over 20 ms.
/// Before the first `process` call every setter applies at once, so initial settings do not glide.
/// Cost: about 10 flops per band per sample per channel while settled (Double direct form I).
public struct EQKernel {
    public static let maxBandCount = 16
    public static let maxChannelCount = 64

    public let sampleRate: Double
    public let maxBlockFrames: Int
    public let channelCount: Int
    public let bandCount: Int
    @usableFromInline let bands: UnsafeMutablePointer<EQBandState>
    /// `bandCount × channelCount` sections, band-major.
    @usableFromInline let filters: UnsafeMutablePointer<Biquad>
    @usableFromInline var globalGain = ParameterRamp(1)
    @usableFromInline var globalGainDecibels: Double = 0
    /// Dry copy of the input and the kernel's bypass crossfade (its wet/dry mix is unused).
    @usableFromInline var wetDry: WetDryBypass
    @usableFromInline var tickCountdown = 0
    @usableFromInline var hasStarted = false
    @usableFromInline let glideTicks: Int
    @usableFromInline let glideFrames: Int
    @usableFromInline let fadeFrames: Int

    /// Control side. Allocates for `bandCount` (1…16) bands, `channelCount` (1…64) channels and blocks of
    /// up to `maxBlockFrames` frames. All bands start bypassed (parametric, 1 kHz, 0.5 octave, 0 dB).
    public init(sampleRate: Double, maxBlockFrames: Int, channelCount: Int, bandCount: Int) {
        precondition(sampleRate > 0 && maxBlockFrames > 0)
        precondition((1...Self.maxChannelCount).contains(channelCount), "channelCount must be 1...64")
        precondition((1...Self.maxBandCount).contains(bandCount), "bandCount must be 1...16")
        self.sampleRate = sampleRate
        self.maxBlockFrames = maxBlockFrames
        self.channelCount = channelCount
        self.bandCount = bandCount
        bands = .allocate(capacity: bandCount)
        bands.initialize(repeating: EQBandState(), count: bandCount)
        filters = .allocate(capacity: bandCount * channelCount)
        wetDry = WetDryBypass(sampleRate: sampleRate, maxBlockFrames: maxBlockFrames, channelCount: channelCount)
        glideTicks = EffectTiming.ticks(seconds: EffectTiming.glideSeconds, sampleRate: sampleRate)
        glideFrames = EffectTiming.frames(seconds: EffectTiming.glideSeconds, sampleRate: sampleRate)
        fadeFrames = EffectTiming.frames(seconds: EffectTiming.bypassSeconds, sampleRate: sampleRate)
        let initial = Biquad(bands[0].coefficients(sampleRate: sampleRate))
        filters.initialize(repeating: initial, count: bandCount * channelCount)
    }

    /// Control side. Frees the buffers; the kernel must not be used afterwards.
    public func deallocate() {
        bands.deallocate()
        filters.deallocate()
        wetDry.deallocate()
    }

    // MARK: Parameters (render side)

    /// The settings of band `index` (0-based).
    @inlinable
    public func band(_ index: Int) -> EQBandState { bands[index] }

    /// The coefficients band `index` currently filters with.
    @inlinable
    public func bandCoefficients(_ index: Int) -> BiquadCoefficients { filters[index &* channelCount].coefficients }

    @inlinable public var isBypassed: Bool { wetDry.isBypassed }

    /// Sets the filter type of band `index`. Crossfades through the band's dry signal if it is active.
    @inlinable
    public mutating func setBandFilterType(_ index: Int, _ type: EQFilterType) {
        guard index >= 0 && index < bandCount else { return }
        if bands[index].isSilent || !hasStarted {
            bands[index].type = type
            bands[index].hasPendingType = false
            updateCoefficients(band: index)
        } else if type != bands[index].type || bands[index].hasPendingType {
            bands[index].pendingType = type
            bands[index].hasPendingType = true
        }
        updateMix(band: index)
    }

    /// Sets the centre/corner frequency of band `index` in Hz, clamped to 20 … sampleRate/2.
    @inlinable
    public mutating func setBandFrequency(_ index: Int, _ hertz: Double) {
        guard index >= 0 && index < bandCount, !hertz.isNaN else { return }
        let f = EffectMath.clamp(hertz, 20, sampleRate / 2)
        bands[index].frequency = f
        bands[index].logFrequency.ramp(to: EffectMath.log2(f), frames: glideTicksFor(band: index))
        updateCoefficients(band: index)
    }

    /// Sets the bandwidth of band `index` in octaves, clamped to 0.05 … 5.
    @inlinable
    public mutating func setBandBandwidth(_ index: Int, _ octaves: Double) {
        guard index >= 0 && index < bandCount, !octaves.isNaN else { return }
        bands[index].bandwidthGlide.ramp(to: EffectMath.clamp(octaves, 0.05, 5), frames: glideTicksFor(band: index))
        updateCoefficients(band: index)
    }

    /// Sets the gain of band `index` in dB, clamped to −96 … 24.
    @inlinable
    public mutating func setBandGain(_ index: Int, decibels: Double) {
        guard index >= 0 && index < bandCount, !decibels.isNaN else { return }
        bands[index].gainGlide.ramp(to: EffectMath.clamp(decibels, -96, 24), frames: glideTicksFor(band: index))
        updateCoefficients(band: index)
    }

    /// Bypasses (true) or enables band `index`; bands start bypassed.
    @inlinable
    public mutating func setBandBypass(_ index: Int, _ bypassed: Bool) {
        guard index >= 0 && index < bandCount else { return }
        bands[index].isBypassed = bypassed
        updateMix(band: index)
    }

    /// Sets the gain applied after all bands, in dB, clamped to −96 … 24. Glides over 20 ms.
    @inlinable
    public mutating func setGlobalGain(decibels: Double) {
        guard !decibels.isNaN else { return }
        globalGainDecibels = EffectMath.clamp(decibels, -96, 24)
        globalGain.ramp(to: Float(EffectMath.decibelsToGain(globalGainDecibels)), frames: hasStarted ? glideFrames : 0)
    }

    /// Bypasses the whole EQ (10 ms crossfade to the dry input).
    @inlinable
    public mutating func setBypass(_ bypassed: Bool) {
        if wetDry.setBypass(bypassed, hasStarted: hasStarted) { reset() }
    }

    /// Sets parameter `index` of the layout documented on `parameterIndex(band:_:)`. Booleans are
    /// value ≥ 0.5; the filter type is the rounded index 0…10. Unknown indices are ignored.
    @inlinable
    public mutating func setParameter(_ index: Int, value: Double) {
        if index == Self.globalGainIndex {
            setGlobalGain(decibels: value)
            return
        }
        let b = (index &- 1) / 5
        guard index >= 1, b < bandCount, !value.isNaN else { return }
        switch (index &- 1) % 5 {
        case EQBandParameter.filterType.rawValue:
            let raw = Int(EffectMath.clamp(value + 0.5, 0, 10.5))
            if let type = EQFilterType(rawValue: raw) { setBandFilterType(b, type) }
        case EQBandParameter.frequency.rawValue: setBandFrequency(b, value)
        case EQBandParameter.bandwidth.rawValue: setBandBandwidth(b, value)
        case EQBandParameter.gain.rawValue: setBandGain(b, decibels: value)
        default: setBandBypass(b, value >= 0.5)
        }
    }

    /// The `setParameter` index of a band parameter: 0 is `globalGain`; band `b` (0-based) parameter
    /// `p` is 1 + 5·b + p, with p in `EQBandParameter` order (filterType, frequency, bandwidth, gain,
    /// bypass).
    public static func parameterIndex(band: Int, _ parameter: EQBandParameter) -> Int {
        1 + 5 * band + parameter.rawValue
    }

    /// The `setParameter` index of `globalGain`.
    @inlinable
    public static var globalGainIndex: Int { 0 }

    @inlinable
    func glideTicksFor(band index: Int) -> Int { hasStarted && !bands[index].isSilent ? glideTicks : 0 }

    /// Recomputes band `index`'s coefficients from its current (gliding) settings for every channel.
    @inlinable
    mutating func updateCoefficients(band index: Int) {
        let k = bands[index].coefficients(sampleRate: sampleRate)
        let first = index &* channelCount
        for c in 0..<channelCount { filters[first &+ c].coefficients = k }
    }

    /// Starts the band's fade towards its desired mix; a band entering from silence starts clean.
    @inlinable
    mutating func updateMix(band index: Int) {
        let desired = bands[index].desiredMix
        if bands[index].mix.target == desired { return }
        if bands[index].isSilent { clearState(band: index) }
        bands[index].mix.ramp(to: desired, frames: hasStarted ? fadeFrames : 0)
    }

    @inlinable
    mutating func clearState(band index: Int) {
        let first = index &* channelCount
        for c in 0..<channelCount { filters[first &+ c].reset() }
    }

    /// One control tick: advances the glides, applies pending type changes of faded-out bands.
    @inlinable
    mutating func controlTick() {
        for b in 0..<bandCount {
            var changed = bands[b].logFrequency.tick()
            changed = bands[b].bandwidthGlide.tick() || changed
            changed = bands[b].gainGlide.tick() || changed
            if bands[b].hasPendingType && bands[b].isSilent {
                bands[b].type = bands[b].pendingType
                bands[b].hasPendingType = false
                changed = true
                clearState(band: b)
                updateMix(band: b)
            }
            if changed { updateCoefficients(band: b) }
        }
    }

    // MARK: Processing (render side)

    /// Clears every band's filter state (the EQ's tail). Settings and glides are kept.
    @inlinable
    public mutating func reset() {
        for i in 0..<(bandCount &* channelCount) { filters[i].reset() }
    }

    /// Filters `frames` (≤ `maxBlockFrames`) frames of the first `channelCount` channels of `input`
    /// into `output`; the buses may be the same (in place).
    @inlinable
    public mutating func process(input: BusRef, output: BusRef, frames: Int) {
        hasStarted = true
        guard wetDry.beginInPlace(input: input, output: output, frames: frames) else { return }
        var done = 0
        while done < frames {
            if tickCountdown == 0 {
                controlTick()
                tickCountdown = EffectTiming.tickFrames
            }
            let n = min(frames &- done, tickCountdown)
            for b in 0..<bandCount where !bands[b].isSilent {
                processBand(b, output: output, offset: done, count: n)
            }
            for c in 0..<channelCount {
                var gain = globalGain
                MixKernel.scale(output.channel(c) + done, count: n, gain: &gain)
            }
            globalGain.advance(frames: n)
            tickCountdown &-= n
            done &+= n
        }
        wetDry.finish(output: output, frames: frames)
    }

    /// Runs band `b` in place over `count` samples at `offset` of every channel, crossfading with its
    /// input while its mix ramps: y = x + m·(H(x) − x).
    @inlinable
    mutating func processBand(_ b: Int, output: BusRef, offset: Int, count: Int) {
        let mix = bands[b].mix
        let first = b &* channelCount
        for c in 0..<channelCount {
            let buffer = output.channel(c) + offset
            if !mix.isRamping {
                filters[first &+ c].process(buffer, count: count)
            } else {
                var m = mix
                for i in 0..<count {
                    let x = buffer[i]
                    let y = Float(filters[first &+ c].process(Double(x)))
                    let g = m.next()
                    // Exact at the ends, so where a fade ends does not depend on block boundaries.
                    buffer[i] = g == 1 ? y : x + g * (y - x)
                }
            }
        }
        bands[b].mix.advance(frames: count)
    }
}

extension EQKernel {
    /// Control side. The global parameter (index 0 of `setParameter`).
    public static let globalParameters: [EffectParameter] = [
        EffectParameter(
            "globalGain", unit: "dB", minimum: -96, maximum: 24, default: 0, isSmoothed: true,
            "gain after all bands (glides over 20 ms)")
    ]

    /// Control side. Per-band parameters in `EQBandParameter` order.
    public static let bandParameters: [EffectParameter] = [
        EffectParameter(
            "filterType", unit: "index", minimum: 0, maximum: 10, default: 0, isSmoothed: true,
            valueNames: EQFilterType.allNames, "filter type (a change crossfades the band over 20 ms)"),
        EffectParameter(
            "frequency", unit: "Hz", minimum: 20, maximum: 24000, isMaximumNyquist: true, default: 1000,
            isSmoothed: true, "centre or corner frequency (glides in log frequency over 20 ms)"),
        EffectParameter(
            "bandwidth", unit: "octaves", minimum: 0.05, maximum: 5, default: 0.5, isSmoothed: true,
            "bandwidth in octaves (parametric, resonant types, band pass, band stop)"),
        EffectParameter(
            "gain", unit: "dB", minimum: -96, maximum: 24, default: 0, isSmoothed: true,
            "gain (parametric and shelves)"),
        EffectParameter(
            "bypass", unit: "bool", minimum: 0, maximum: 1, default: 1, isSmoothed: true,
            "true takes the band out (bands start bypassed; 10 ms crossfade)")
    ]
}

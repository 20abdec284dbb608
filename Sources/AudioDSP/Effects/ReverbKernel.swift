// Render side (process, set…, reset) and control side (init, deallocate). A stereo algorithmic reverb
// after AVAudioUnitReverb: a 16-line feedback delay network with Hadamard mixing and per-line absorption.

/// Stereo reverb: pre-delay → 4 series all-pass diffusers per side → 16-line feedback delay network
/// (FDN), plus 8 early-reflection taps per side, the first of them at the pre-delay. Each side's wet
/// output has a per-preset gain (`ReverbPresetDesign.leftGain`/`rightGain`, measured) that brings every
/// preset and both sides to the same loudness.
///
/// Algorithm and sources:
/// - FDN with frequency-dependent decay: J.-M. Jot and A. Chaigne, "Digital delay networks for designing
///   artificial reverberators", AES 90th Convention, 1991, preprint 3030. Each line i (m_i frames) ends
///   in Jot's one-pole absorption filter H_i(z) = g_i(1 − b_i)/(1 − b_i z⁻¹), with
///   |H_i| = 10^(−3 m_i/(fs·T60(ω))), so every mode decays at the same rate and the T60 follows the
///   preset: b_i from the DC/Nyquist gain ratio, g_i scaled so the decay is exact at 1 kHz.
/// - Mixing: the 16×16 Hadamard matrix / 4 (orthogonal, so the loop is lossless before absorption, and
///   every line feeds every other with equal weight: maximal diffusion; D. Rocchesso, "Maximally
///   diffusive yet efficient feedback delay networks for artificial reverberation", IEEE Signal
///   Processing Letters 4(9), 1997), applied as a fast Walsh–Hadamard transform (64 additions).
/// - Line lengths: distinct primes (so mutually prime), so the lines' echo patterns never coincide
///   (M. R. Schroeder, "Natural sounding artificial reverberation", JAES 10(3), 1962).
/// - Input diffusion: J. Dattorro, "Effect Design, Part 1: Reverberator and Other Filters", JAES 45(9),
///   1997 (the four input all-passes of his plate).
/// - Early reflections: a tapped delay line (J. A. Moorer, "About this reverberation business",
///   Computer Music Journal 3(2), 1979).
/// Left and right outputs tap the lines with two orthogonal ±1/4 sign vectors, so the tails decorrelate.
///
/// Channel mapping: input channel c feeds the left side when c is even, the right side when odd (a mono
/// input feeds both); output channel c gets the left wet signal when even, the right when odd (a mono
/// output gets their mean). Wet/dry: out = dry·(1 − mix) + wet·mix.
///
/// Thread contract: `init`/`deallocate` on the control side (all 13 presets' tables are computed there);
/// the rest is RT-safe. A preset change fades the wet signal out over 20 ms, clears the network, and
/// fades the network's input (and the early reflections) back in over 20 ms.
/// Cost: about 250 flops per frame (8.5 ms of CPU per second at 48 kHz, release); memory about 0.4 MB.
public struct ReverbKernel {
    @inlinable public static var lineCount: Int { 16 }
    @inlinable static var tapCount: Int { 8 }
    @inlinable static var diffuserCount: Int { 4 }

    public let sampleRate: Double
    public let maxBlockFrames: Int
    public let channelCount: Int
    /// Per preset × line: length in frames, absorption gain g(1 − b) and pole b.
    @usableFromInline let lengths: UnsafeMutablePointer<Int>
    @usableFromInline let lineGains: UnsafeMutablePointer<Float>
    @usableFromInline let linePoles: UnsafeMutablePointer<Float>
    /// Per preset × tap (8 left, then 8 right): frames after the input and gain.
    @usableFromInline let tapFrames: UnsafeMutablePointer<Int>
    @usableFromInline let tapGains: UnsafeMutablePointer<Float>
    /// Per preset: pre-delay in frames, late output gain, early level.
    @usableFromInline let preDelays: UnsafeMutablePointer<Int>
    @usableFromInline let lateGains: UnsafeMutablePointer<Float>
    @usableFromInline let earlyLevels: UnsafeMutablePointer<Float>
    /// Per preset × side: the wet output gain that levels the preset (left, right).
    @usableFromInline let sideGains: UnsafeMutablePointer<Float>
    /// FDN line storage: line i at `lineOffsets[i]`, power-of-two capacity `lineMasks[i] + 1`.
    @usableFromInline let lineStorage: UnsafeMutablePointer<Float>
    @usableFromInline let lineStorageCount: Int
    @usableFromInline let lineOffsets: UnsafeMutablePointer<Int>
    @usableFromInline let lineMasks: UnsafeMutablePointer<Int>
    /// Absorption filter states, then the mixing vector (2 × 16).
    @usableFromInline let lineState: UnsafeMutablePointer<Float>
    /// Input lines (left, right) for pre-delay and early taps.
    @usableFromInline let inputLines: UnsafeMutablePointer<Float>
    @usableFromInline let inputMask: Int
    /// All-pass diffusers: 8 buffers (4 left, 4 right) at `diffuserOffsets`, with delays and gains.
    @usableFromInline let diffuserStorage: UnsafeMutablePointer<Float>
    @usableFromInline let diffuserStorageCount: Int
    @usableFromInline let diffuserOffsets: UnsafeMutablePointer<Int>
    @usableFromInline let diffuserMasks: UnsafeMutablePointer<Int>
    /// Per preset × diffuser: delay in frames (Dattorro's lengths scaled by `diffuserScale`).
    @usableFromInline let diffuserDelays: UnsafeMutablePointer<Int>
    @usableFromInline let diffuserGains: UnsafeMutablePointer<Float>
    @usableFromInline var time = 0
    /// The preset, and the fades around a switch (the wet output out, then the network's input in).
    @usableFromInline var presets: PresetSwitch
    /// Dry copy, wet/dry mix (default 100 %) and bypass crossfade.
    @usableFromInline var wetDry: WetDryBypass
    @usableFromInline var hasStarted = false
    @usableFromInline let glideFrames: Int

    /// Control side. Allocates the network for every preset at `sampleRate`. Defaults: `mediumHall`,
    /// wet/dry 100 % (the AUReverb2 default). `channelCount` 1…64 (see the channel mapping above).
    public init(sampleRate: Double, maxBlockFrames: Int, channelCount: Int) {
        precondition(sampleRate > 0 && maxBlockFrames > 0 && channelCount >= 1)
        self.sampleRate = sampleRate
        self.maxBlockFrames = maxBlockFrames
        self.channelCount = channelCount
        let presetCount = ReverbPresetDesign.table.count
        let n = Self.lineCount
        lengths = .allocate(capacity: presetCount * n)
        lineGains = .allocate(capacity: presetCount * n)
        linePoles = .allocate(capacity: presetCount * n)
        tapFrames = .allocate(capacity: presetCount * 2 * Self.tapCount)
        tapGains = .allocate(capacity: presetCount * 2 * Self.tapCount)
        preDelays = .allocate(capacity: presetCount)
        lateGains = .allocate(capacity: presetCount)
        earlyLevels = .allocate(capacity: presetCount)
        sideGains = .allocate(capacity: 2 * presetCount)
        var longestInput = 1
        for (p, design) in ReverbPresetDesign.table.enumerated() {
            let lines = Self.lineLengths(design: design, sampleRate: sampleRate)
            var meanLength = 0.0
            for i in 0..<n {
                lengths[p * n + i] = lines[i]
                let (gain, pole) = Self.absorption(length: lines[i], design: design, sampleRate: sampleRate)
                lineGains[p * n + i] = Float(gain)
                linePoles[p * n + i] = Float(pole)
                meanLength += Double(lines[i]) / Double(n)
            }
            // Late gain: the energy of a tail whose per-pass gain is g is ∝ 1/(1 − g²); scale by
            // √(1 − g²) so long and short presets have similar wet loudness.
            let passGain = EffectMath.exp(-3 * meanLength / (sampleRate * design.rt60) * 2.302_585_092_994_046)
            lateGains[p] = Float(0.7 * (1 - passGain * passGain).squareRoot())
            earlyLevels[p] = Float(design.earlyLevel)
            sideGains[2 * p] = Float(EffectMath.decibelsToGain(design.leftGain))
            sideGains[2 * p + 1] = Float(EffectMath.decibelsToGain(design.rightGain))
            preDelays[p] = Int(design.preDelay * 0.001 * sampleRate + 0.5)
            longestInput = max(longestInput, preDelays[p] + 1)
            for k in 0..<(2 * Self.tapCount) {
                // The first reflection arrives after the pre-delay, with the late reverb behind it.
                let ms = design.preDelay + ReverbPresetDesign.earlyTapTimes[k] * design.earlySpacing
                let frames = Int(ms * 0.001 * sampleRate + 0.5)
                tapFrames[p * 2 * Self.tapCount + k] = frames
                tapGains[p * 2 * Self.tapCount + k] = Float(ReverbPresetDesign.earlyTapGains[k])
                longestInput = max(longestInput, frames + 1)
            }
        }
        // Line capacities: the longest length any preset gives each line, rounded up to a power of two.
        lineOffsets = .allocate(capacity: n)
        lineMasks = .allocate(capacity: n)
        var total = 0
        for i in 0..<n {
            var longest = 1
            for p in 0..<presetCount { longest = max(longest, lengths[p * n + i] + 1) }
            let capacity = Self.powerOfTwo(atLeast: longest)
            lineOffsets[i] = total
            lineMasks[i] = capacity - 1
            total += capacity
        }
        lineStorageCount = total
        lineStorage = .allocate(capacity: total)
        lineStorage.initialize(repeating: 0, count: total)
        lineState = .allocate(capacity: 2 * n)
        lineState.initialize(repeating: 0, count: 2 * n)
        let inputCapacity = Self.powerOfTwo(atLeast: longestInput + 1)
        inputMask = inputCapacity - 1
        inputLines = .allocate(capacity: 2 * inputCapacity)
        inputLines.initialize(repeating: 0, count: 2 * inputCapacity)
        let d = 2 * Self.diffuserCount
        diffuserOffsets = .allocate(capacity: d)
        diffuserMasks = .allocate(capacity: d)
        diffuserDelays = .allocate(capacity: presetCount * d)
        diffuserGains = .allocate(capacity: d)
        var diffuserTotal = 0
        for k in 0..<d {
            var longest = 1
            for (p, design) in ReverbPresetDesign.table.enumerated() {
                let ms = ReverbPresetDesign.diffuserDelays[k] * design.diffuserScale
                let delay = max(1, Int(ms * 0.001 * sampleRate + 0.5))
                diffuserDelays[p * d + k] = delay
                longest = max(longest, delay + 1)
            }
            let capacity = Self.powerOfTwo(atLeast: longest)
            diffuserGains[k] = Float(ReverbPresetDesign.diffuserGains[k])
            diffuserOffsets[k] = diffuserTotal
            diffuserMasks[k] = capacity - 1
            diffuserTotal += capacity
        }
        diffuserStorageCount = diffuserTotal
        diffuserStorage = .allocate(capacity: diffuserTotal)
        diffuserStorage.initialize(repeating: 0, count: diffuserTotal)
        wetDry = WetDryBypass(sampleRate: sampleRate, maxBlockFrames: maxBlockFrames, channelCount: channelCount)
        glideFrames = EffectTiming.frames(seconds: EffectTiming.glideSeconds, sampleRate: sampleRate)
        presets = PresetSwitch(current: ReverbPreset.mediumHall.rawValue, sampleRate: sampleRate)
    }

    /// Control side. Frees every buffer; the kernel must not be used afterwards.
    public func deallocate() {
        for p in [
            lineGains, linePoles, tapGains, lateGains, earlyLevels, sideGains, lineStorage, lineState,
            inputLines, diffuserStorage, diffuserGains
        ] { p.deallocate() }
        for p in [
            lengths, tapFrames, preDelays, lineOffsets, lineMasks, diffuserOffsets, diffuserMasks,
            diffuserDelays
        ] { p.deallocate() }
        wetDry.deallocate()
    }

    static func powerOfTwo(atLeast n: Int) -> Int {
        var c = 1
        while c < n { c <<= 1 }
        return c
    }

    /// The 16 line lengths of `design` in frames: distinct primes near `size · ratio[i]` ms.
    public static func lineLengths(design: ReverbPresetDesign, sampleRate: Double) -> [Int] {
        var result: [Int] = []
        var previous = 1
        for ratio in ReverbPresetDesign.lineRatios {
            var m = max(previous + 1, Int(design.size * ratio * 0.001 * sampleRate + 0.5))
            while !isPrime(m) { m += 1 }
            result.append(m)
            previous = m
        }
        return result
    }

    static func isPrime(_ n: Int) -> Bool {
        if n < 2 { return false }
        if n < 4 { return true }
        if n % 2 == 0 { return false }
        var d = 3
        while d * d <= n {
            if n % d == 0 { return false }
            d += 2
        }
        return true
    }

    /// Jot's absorption filter for a line of `length` frames: pole b from the ratio of the Nyquist and DC
    /// per-pass gains, then g so that the per-pass gain at 1 kHz is exactly 10^(−3·length/(fs·rt60)).
    /// Returns (g·(1 − b), b), the coefficients of y = g(1 − b)·x + b·y₋₁.
    public static func absorption(length: Int, design: ReverbPresetDesign, sampleRate: Double) -> (Double, Double) {
        let m = Double(length)
        let ln10 = 2.302_585_092_994_046
        let perPassDecibels = -60 * m / (sampleRate * design.rt60)  // at 1 kHz (and DC before correction)
        let g0 = EffectMath.exp(perPassDecibels / 20 * ln10)
        let gNyquist = EffectMath.exp(perPassDecibels / design.highFrequencyRatio / 20 * ln10)
        let b = (g0 - gNyquist) / (g0 + gNyquist)
        // |1 − b·e^{−jω}| / (1 − b) is the inverse of the unit-gain filter's magnitude at ω.
        let w = 2 * EffectMath.pi * min(1000, 0.25 * sampleRate) / sampleRate
        let (s, c) = EffectMath.sinCos(w)
        let denominator = ((1 - b * c) * (1 - b * c) + b * s * b * s).squareRoot()
        let g = g0 * denominator / (1 - b)
        return (g * (1 - b), b)
    }

    // MARK: Parameters (render side; before the first `process` they apply at once)

    /// The current (or pending) preset.
    @inlinable
    public var preset: ReverbPreset {
        ReverbPreset(rawValue: presets.requested) ?? .mediumHall
    }

    @inlinable public var isBypassed: Bool { wetDry.isBypassed }

    /// Loads factory preset `preset` (fade out 20 ms, clear the network, fade its input in over 20 ms).
    @inlinable
    public mutating func setPreset(_ preset: ReverbPreset) {
        _ = presets.request(preset.rawValue, hasStarted: hasStarted)
    }

    /// Sets the wet/dry mix in percent (0 dry … 100 wet; clamped). Glides over 20 ms.
    @inlinable
    public mutating func setWetDryMix(percent: Double) {
        wetDry.setWetDryMix(percent: percent, frames: hasStarted ? glideFrames : 0)
    }

    /// Bypasses the reverb (10 ms crossfade to dry; leaving a settled bypass clears the tail first).
    @inlinable
    public mutating func setBypass(_ bypassed: Bool) {
        if wetDry.setBypass(bypassed, hasStarted: hasStarted) { reset() }
    }

    /// Sets parameter `index` in `ReverbKernel.parameters` order (wetDryMix, preset). The preset is the
    /// rounded index 0…12. Unknown indices are ignored.
    @inlinable
    public mutating func setParameter(_ index: Int, value: Double) {
        guard !value.isNaN else { return }
        switch index {
        case Parameter.wetDryMix.rawValue: setWetDryMix(percent: value)
        case Parameter.preset.rawValue:
            if let p = ReverbPreset(rawValue: Int(EffectMath.clamp(value + 0.5, 0, 12.5))) { setPreset(p) }
        default: break
        }
    }

    // MARK: Processing (render side)

    /// Clears every delay line, diffuser and filter state (the tail) without allocating (cost: a memset
    /// of about 0.4 MB at 48 kHz).
    @inlinable
    public mutating func reset() {
        clearNetwork()
        inputLines.update(repeating: 0, count: 2 &* (inputMask &+ 1))
    }

    /// Clears the diffusers and the network, keeping the input history (pre-delay and early taps).
    @inlinable
    mutating func clearNetwork() {
        lineStorage.update(repeating: 0, count: lineStorageCount)
        lineState.update(repeating: 0, count: 2 &* Self.lineCount)
        diffuserStorage.update(repeating: 0, count: diffuserStorageCount)
    }

    /// Runs the 4 all-passes of side `side` (0 left, 1 right) on one sample:
    /// w = x + g·w(n − D), y = −g·w + w(n − D) (Schroeder's all-pass, H = (−g + z^−D)/(1 − g z^−D)).
    @inlinable
    func diffuse(_ x: Float, side: Int, preset: Int) -> Float {
        var v = x
        let base = preset &* 2 &* Self.diffuserCount
        for k in (side &* Self.diffuserCount)..<((side &+ 1) &* Self.diffuserCount) {
            let buffer = diffuserStorage + diffuserOffsets[k]
            let mask = diffuserMasks[k]
            let delayed = buffer[(time &- diffuserDelays[base &+ k]) & mask]
            let g = diffuserGains[k]
            let w = Denormal.flush(v + g * delayed)
            buffer[time & mask] = w
            v = delayed - g * w
        }
        return v
    }

    /// One frame of the network: reads, absorbs, mixes (Hadamard) and writes every line; returns the
    /// late (left, right) output. `inLeft`/`inRight` are the diffused inputs.
    @inlinable
    func stepNetwork(_ inLeft: Float, _ inRight: Float, base: Int) -> (Float, Float) {
        let n = Self.lineCount
        let z = lineState
        let v = lineState + n
        var left: Float = 0
        var right: Float = 0
        for i in 0..<n {
            let line = lineStorage + lineOffsets[i]
            let out = line[(time &- lengths[base &+ i]) & lineMasks[i]]
            let y = Denormal.flush(lineGains[base &+ i] * out + linePoles[base &+ i] * z[i])
            z[i] = y
            v[i] = y
            // Output sign vectors: left = s, right = s·h with h = (+,−,+,−…)·(+,+,−,−…) pattern so that
            // Σ left_i·right_i = 0.
            let s: Float = (0x2D6B >> i) & 1 == 0 ? 1 : -1
            let h: Float = ((i ^ (i >> 1)) & 1) == 0 ? 1 : -1
            left += s * y
            right += s * h * y
        }
        // In-place fast Walsh–Hadamard transform of v (16 points, 4 stages).
        var span = 1
        while span < n {
            var start = 0
            while start < n {
                for j in start..<(start &+ span) {
                    let a = v[j]
                    let b = v[j &+ span]
                    v[j] = a + b
                    v[j &+ span] = a - b
                }
                start &+= span &* 2
            }
            span &*= 2
        }
        for i in 0..<n {
            // The left input feeds the even lines, the right the odd ones, with mixed signs; each side
            // reaches 8 lines at 1/√8, so its energy enters the network at unity.
            let r: Float = (0x5A3C >> i) & 1 == 0 ? 0.353_553_4 : -0.353_553_4
            let line = lineStorage + lineOffsets[i]
            line[time & lineMasks[i]] = 0.25 * v[i] + r * (i & 1 == 0 ? inLeft : inRight)
        }
        return (0.25 * left, 0.25 * right)
    }

    /// Processes `frames` (≤ `maxBlockFrames`) frames of the first `channelCount` channels; `input` and
    /// `output` may be the same bus.
    @inlinable
    public mutating func process(input: BusRef, output: BusRef, frames: Int) {
        hasStarted = true
        guard wetDry.begin(input: input, output: output, frames: frames) else { return }
        let dry = wetDry.dry
        let channels = channelCount
        let inputCapacity = inputMask &+ 1
        for i in 0..<frames {
            if presets.switchesNow() {
                // The wet signal is silent: clear the network and let the new one fill from an input
                // that fades in, so nothing inside it starts with a step (a jump of the read positions
                // in the old contents would recirculate as a broadband transient).
                clearNetwork()
            }
            // Side inputs: even channels → left, odd → right; mono feeds both.
            var inLeft: Float = 0
            var inRight: Float = 0
            for c in 0..<channels {
                let x = dry[c &* maxBlockFrames &+ i]
                if c & 1 == 0 { inLeft += x } else { inRight += x }
            }
            if channels == 1 { inRight = inLeft }
            let p = presets.current
            let slot = time & inputMask
            inputLines[slot] = inLeft
            inputLines[inputCapacity &+ slot] = inRight
            let preDelay = preDelays[p]
            let lateLeft = inputLines[(time &- preDelay) & inputMask]
            let lateRight = inputLines[inputCapacity &+ ((time &- preDelay) & inputMask)]
            var earlyLeft: Float = 0
            var earlyRight: Float = 0
            let tapBase = p &* 2 &* Self.tapCount
            for k in 0..<Self.tapCount {
                earlyLeft += tapGains[tapBase &+ k] * inputLines[(time &- tapFrames[tapBase &+ k]) & inputMask]
                let kr = tapBase &+ Self.tapCount &+ k
                earlyRight += tapGains[kr] * inputLines[inputCapacity &+ ((time &- tapFrames[kr]) & inputMask)]
            }
            let fadeIn = presets.inputFade.next()
            let (netLeft, netRight) = stepNetwork(
                diffuse(fadeIn * lateLeft, side: 0, preset: p), diffuse(fadeIn * lateRight, side: 1, preset: p),
                base: p &* Self.lineCount)
            let fade = presets.outputFade.next()
            let early = earlyLevels[p] * fadeIn
            let late = lateGains[p]
            let wetLeft = fade * sideGains[2 &* p] * (early * earlyLeft + late * netLeft)
            let wetRight = fade * sideGains[2 &* p &+ 1] * (early * earlyRight + late * netRight)
            let m = wetDry.wetDryMix.next()
            for c in 0..<channels {
                let wet = channels == 1 ? 0.5 * (wetLeft + wetRight) : (c & 1 == 0 ? wetLeft : wetRight)
                let x = dry[c &* maxBlockFrames &+ i]
                output.channel(c)[i] = WetDryBypass.mix(dry: x, wet: wet, amount: m)
            }
            time &+= 1
        }
        wetDry.finish(output: output, frames: frames)
    }
}

extension ReverbKernel {
    /// The `setParameter` indices, named: `parameters` is in this order (a test checks the names), and
    /// the engine addresses the kernel only through these.
    public enum Parameter: Int, CaseIterable, Sendable {
        case wetDryMix, preset
    }

    /// Control side. Parameters in `setParameter` index order.
    public static let parameters: [EffectParameter] = [
        EffectParameter(
            "wetDryMix", unit: "%", minimum: 0, maximum: 100, default: 100, isSmoothed: true,
            "0 = dry only, 100 = reverb only"),
        EffectParameter(
            "preset", unit: "index", minimum: 0, maximum: 12, default: 3, isSmoothed: true,
            valueNames: ReverbPreset.allNames, "factory preset (a change fades the wet signal out and in, 20 ms each)")
    ]
}

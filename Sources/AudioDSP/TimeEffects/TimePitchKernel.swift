// Control side (init, deallocate) and render side (set…, reset). AVAudioUnitTimePitch on the Rubber Band
// Library: rate and pitch changed independently. The pull interface is in TimePitchKernel+Pull.swift.
import CRubberBand

/// Time stretching and pitch shifting (AVAudioUnitTimePitch) with Rubber Band 3 in real-time mode.
///
/// Engine and options (chosen at creation, fixed): R3 ("finer") engine with its short window
/// (`OptionWindowShort`), `OptionPitchHighConsistency` (the pitch resampler always runs, so pitch glides
/// through 0 cents without a switch of method or latency), `OptionThreadingNever`, real-time mode.
/// Why R3 and not R2 ("faster"): R2 reallocates its onset detector whenever the FFT size follows a rate or
/// pitch change (`PercussiveAudioCurve::setFftSize`), which is an allocation on the render thread that no
/// option avoids; R3's standard window produced NaN output under sweeps of extreme rates in 3.1.2. See
/// docs/EFFECTS.md for the measurements.
///
/// Real-time safety: Rubber Band's resampler builds a new filter state when the pitch ratio changes and
/// grows its buffers when a ratio needs more than any before. The kernel therefore (1) runs the
/// stretcher through the extreme rate and pitch combinations at creation, so every buffer has its final
/// size, and (2) quantizes the resampling ratio 1/pitch to k/8192, so the resampler's rational ratio
/// never has a numerator above 32 768 (its phase table is reserved for 96 000 at 48 kHz) — and a glide
/// changes the ratio at most once per 0.85 cent. After that, `push` makes no allocation and takes no
/// lock (tested with the allocation probe while sweeping both parameters).
///
/// Alignment and latency: the stretcher is primed with its preferred start pad (input history, or
/// silence at the start) and its start delay plus `alignmentFrames` (measured at creation; see
/// `calibrate`) are dropped from the output, so output frame j plays the input at position ≈ Σ rate
/// (time-aligned at every rate; at rate 1 / pitch 0 exactly: a noise cross-correlation peaks at lag 0).
/// The kernel consumes its input ahead of its output: up to `latencyFrames` (2686 at 48 kHz) at rate 1,
/// about 1280·rate + 1000 frames above. With insert timing (`setInsertTiming`) the output instead starts
/// `latencyFrames` behind the input, so a host that pushes and pulls the same frames each cycle gets a
/// delay of exactly `latencyFrames` at rate 1 / pitch 0, which it reports. When dropping the full start
/// delay would need more than 8192 input frames at once (rates above 6.4 at pitch 0), only that much is
/// dropped and the first output frames are Rubber Band's ramp-in from the start pad: a fade-in from
/// silence lasting the rest of the start delay.
///
/// Thread contract: `init`/`deallocate` on the control side; the rest is RT-safe. `setParameter`,
/// `setBypass`, `reset`, `setInsertTiming` and `inputFramesWanted` are pure Swift; `push` calls the
/// Rubber Band C API, and so does `pull` when the output queue was full.
public struct TimePitchKernel {
    @inlinable public static var minimumRate: Double { 1.0 / 32 }
    @inlinable public static var maximumRate: Double { 32 }
    @inlinable public static var maximumCents: Double { 2400 }
    /// The pitch resampling ratio 1/pitch is k / `pitchSteps`, k in 2048 … 32 768.
    @inlinable static var pitchSteps: Double { 8192 }
    /// Largest number of input frames a restart may consume to drop the stretcher's start delay.
    @inlinable static var maximumPrimingFrames: Int { 8192 }

    public let sampleRate: Double
    public let maxBlockFrames: Int
    public let channelCount: Int
    /// The delay of the output behind the input at rate 1 / pitch 0 with insert timing (the host pushes
    /// and pulls the same frames each cycle), exactly; reported as a JACK insert's latency. Measured at
    /// creation: the most input the stretcher needs ahead of an output frame (see `calibrate`).
    public private(set) var latencyFrames: Int
    /// Output frames by which Rubber Band's output trails its own start delay after the warm-up (measured
    /// at creation; dropped at every restart together with the start delay).
    public private(set) var alignmentFrames: Int
    /// True while the kernel delays its output by exactly `latencyFrames` (see `setInsertTiming`).
    public var hasInsertTiming: Bool { insertTiming }
    /// Frames `pull` could not supply (output as silence) since `init`.
    public var underrunFrames = 0

    @usableFromInline let stretcher: OpaquePointer
    @usableFromInline let inputPointers: UnsafeMutablePointer<UnsafePointer<Float>?>
    @usableFromInline let outputPointers: UnsafeMutablePointer<UnsafeMutablePointer<Float>?>
    /// Planar scratch, `channelCount × scratchFrames`: sanitized input and retrieved output.
    @usableFromInline let scratch: UnsafeMutablePointer<Float>
    @usableFromInline let scratchFrames: Int
    /// Every pushed input frame (the dry path, and the priming history after a restart).
    @usableFromInline var history: MirroredRing
    /// Stretcher output not yet pulled, from `processedRead` to `processed.writePosition`.
    @usableFromInline var processed: MirroredRing
    @usableFromInline var processedRead = 0
    /// Output the stretcher holds because `processed` was full.
    @usableFromInline var pendingFrames = 0
    /// Next history position the stretcher has not seen.
    @usableFromInline var feedPosition = 0
    /// The stretcher's `samples_required` after the last feed.
    @usableFromInline var requiredFrames = 0
    /// Stretcher output frames still to drop after a restart (its start delay).
    @usableFromInline var discardFrames = 0
    /// A restart (reset + priming) runs at the next push, aligning the output with `restartPosition`.
    @usableFromInline var restartPending = true
    @usableFromInline var restartPosition = 0
    /// Input position of the next processed output frame (Σ rate since the restart).
    @usableFromInline var contentPosition = 0.0
    /// Next input frame of the dry path.
    @usableFromInline var dryIndex = 0
    @usableFromInline var logRate = LinearRamp<Double>(0)
    @usableFromInline var cents = LinearRamp<Double>(0)
    @usableFromInline var overlapValue = 8.0
    @usableFromInline var appliedTimeRatio = 1.0
    @usableFromInline var appliedPitchStep = 8192
    /// Dry signal for the bypass crossfade, and the crossfade (its wet/dry mix is unused).
    @usableFromInline var wetDry: WetDryBypass
    @usableFromInline var hasStarted = false
    @usableFromInline var insertTiming = false
    @usableFromInline let glideFrames: Int
    @usableFromInline let startPad: Int
    /// Input frames the stretcher needs after its start pad before its first output (at creation).
    @usableFromInline let primingFrames: Int
    @usableFromInline let bypassFadeFrames: Int

    /// Control side. Creates the stretcher (R3, short window), runs it once through the extreme rate and
    /// pitch combinations so its buffers reach their final sizes, and allocates the rings (history
    /// 32 768 frames per channel at 48 kHz with 128-frame blocks, output queue 8192, both mirrored).
    /// Defaults (AVAudioUnitTimePitch): rate 1, pitch 0, overlap 8. `channelCount` 1…8.
    public init(sampleRate: Double, maxBlockFrames: Int, channelCount: Int) {
        precondition(sampleRate >= 8000 && maxBlockFrames > 0 && channelCount >= 1 && channelCount <= 8)
        self.sampleRate = sampleRate
        self.maxBlockFrames = maxBlockFrames
        self.channelCount = channelCount
        let options: Int32 =
            Int32(RubberBandOptionProcessRealTime.rawValue) | Int32(RubberBandOptionEngineFiner.rawValue)
            | Int32(RubberBandOptionWindowShort.rawValue) | Int32(RubberBandOptionPitchHighConsistency.rawValue)
            | Int32(RubberBandOptionThreadingNever.rawValue)
        guard let state = rubberband_new(UInt32(sampleRate.rounded()), UInt32(channelCount), options, 1, 1) else {
            fatalError("rubberband_new failed")
        }
        stretcher = state
        rubberband_set_max_process_size(state, UInt32(maxBlockFrames))
        startPad = Int(rubberband_get_preferred_start_pad(state))
        let required = Int(rubberband_get_samples_required(state))
        primingFrames = required - startPad
        inputPointers = .allocate(capacity: channelCount)
        inputPointers.initialize(repeating: nil, count: channelCount)
        outputPointers = .allocate(capacity: channelCount)
        outputPointers.initialize(repeating: nil, count: channelCount)
        scratchFrames = max(maxBlockFrames, 1024)
        scratch = .allocate(capacity: channelCount * scratchFrames)
        scratch.initialize(repeating: 0, count: channelCount * scratchFrames)
        wetDry = WetDryBypass(sampleRate: sampleRate, maxBlockFrames: maxBlockFrames, channelCount: channelCount)
        bypassFadeFrames = EffectTiming.frames(seconds: EffectTiming.bypassSeconds, sampleRate: sampleRate)
        glideFrames = EffectTiming.frames(seconds: EffectTiming.glideSeconds, sampleRate: sampleRate)
        // History: the bypass look-ahead (`latencyFrames`, at most twice the samples required: checked
        // below), the start pad before it, the dry path falling behind at rate 32 during a bypass
        // crossfade, and slack for a few blocks.
        history = MirroredRing(
            minimumCapacity: 2 * required + startPad + 32 * bypassFadeFrames + 4 * maxBlockFrames,
            channelCount: channelCount)
        processed = MirroredRing(minimumCapacity: max(8192, 2 * maxBlockFrames + 4096), channelCount: channelCount)
        latencyFrames = 0
        alignmentFrames = 0
        warmUp(seedFrames: required)
        let measured = calibrate()
        alignmentFrames = measured.alignment
        latencyFrames = measured.lookAhead
        precondition(latencyFrames <= 2 * required, "time-pitch look-ahead beyond the history reserved for it")
    }

    /// Control side. Frees the stretcher and every buffer; the kernel must not be used afterwards.
    public func deallocate() {
        rubberband_delete(stretcher)
        inputPointers.deallocate()
        outputPointers.deallocate()
        scratch.deallocate()
        wetDry.deallocate()
        history.deallocate()
        processed.deallocate()
    }

    /// Control side. Runs the stretcher through the rate and pitch extremes (and the largest resampler
    /// numerator), so that no buffer grows later on the render thread, then resets it.
    mutating func warmUp(seedFrames: Int) {
        let combinations: [(timeRatio: Double, pitchStep: Int)] = [
            (32, 2048), (32, 32_768), (1.0 / 32, 2048), (1.0 / 32, 32_768), (32, 32_767), (1.0 / 32, 2049),
            (1, 32_767), (1, 8192)
        ]
        var seed: UInt32 = 1
        for (timeRatio, step) in combinations {
            rubberband_set_time_ratio(stretcher, timeRatio)
            rubberband_set_pitch_scale(stretcher, Self.pitchSteps / Double(step))
            // A few analysis hops at each setting: until 4096 frames came out (slow rates) or four
            // windows went in (fast rates, where each hop takes up to 1024 input frames).
            let chunk = min(maxBlockFrames, 256)
            var fed = 0
            var produced = 0
            while fed < 4 * seedFrames && produced < 4096 {
                for i in 0..<(channelCount * chunk) {
                    seed = seed &* 1_664_525 &+ 1_013_904_223
                    scratch[i] = Float(Int32(bitPattern: seed)) * 1e-12
                }
                for c in 0..<channelCount { inputPointers[c] = UnsafePointer(scratch + c * chunk) }
                rubberband_process(stretcher, inputPointers, UInt32(chunk), 0)
                fed += chunk
                var available = Int(rubberband_available(stretcher))
                while available > 0 {
                    let n = min(available, scratchFrames)
                    for c in 0..<channelCount { outputPointers[c] = scratch + c * scratchFrames }
                    let got = Int(rubberband_retrieve(stretcher, outputPointers, UInt32(n)))
                    available -= got
                    produced += got
                }
            }
        }
        rubberband_set_time_ratio(stretcher, 1)
        rubberband_set_pitch_scale(stretcher, 1)
        rubberband_reset(stretcher)
        scratch.update(repeating: 0, count: channelCount * scratchFrames)
    }

    // MARK: Parameters (render side, pure Swift; before the first push or pull they apply without gliding)

    /// Target rate (playback speed: 2 plays twice as fast).
    @inlinable public var rate: Double { EffectMath.exp2(logRate.target) }
    /// Target pitch shift in cents.
    @inlinable public var pitch: Double { cents.target }
    @inlinable public var overlap: Double { overlapValue }
    @inlinable public var isBypassed: Bool { wetDry.isBypassed }

    /// Sets the rate (clamped to 1/32 … 32; NaN ignored). Glides over 20 ms on a log scale.
    @inlinable
    public mutating func setRate(_ value: Double) {
        guard !value.isNaN else { return }
        let r = EffectMath.clamp(value, Self.minimumRate, Self.maximumRate)
        logRate.ramp(to: EffectMath.log2(r), frames: hasStarted ? glideFrames : 0)
    }

    /// Sets the pitch shift in cents (clamped to ±2400; NaN ignored). Glides over 20 ms.
    @inlinable
    public mutating func setPitch(cents value: Double) {
        guard !value.isNaN else { return }
        let target = EffectMath.clamp(value, -Self.maximumCents, Self.maximumCents)
        cents.ramp(to: target, frames: hasStarted ? glideFrames : 0)
    }

    /// The overlap: always 8, AVAudioUnitTimePitch's default. Rubber Band R3 has no overlap setting, so the
    /// control side refuses every other value (`parameters`); one that reaches the kernel changes nothing.
    @inlinable
    public mutating func setOverlap(_ value: Double) {
        guard !value.isNaN else { return }
        overlapValue = EffectMath.clamp(value, 8, 8)
    }

    /// Sets parameter `index` in `TimePitchKernel.parameters` order (rate, pitch, overlap). Unknown indices
    /// are ignored.
    @inlinable
    public mutating func setParameter(_ index: Int, value: Double) {
        switch index {
        case Parameter.rate.rawValue: setRate(value)
        case Parameter.pitch.rawValue: setPitch(cents: value)
        case Parameter.overlap.rawValue: setOverlap(value)
        default: break
        }
    }

    /// Insert timing (on) or stream alignment (off, the default). Off, output frame j plays input position
    /// ≈ Σ rate from the restart, and the kernel reads its input ahead (`inputFramesWanted`): for hosts
    /// whose upstream can run ahead. On, for a host that pushes and pulls the same frames each cycle (a
    /// JACK insert): the output restarts `latencyFrames` behind the input, so at rate 1 / pitch 0 output
    /// frame t is input frame t − `latencyFrames` exactly, with no underrun. A change restarts the
    /// stretcher (as `reset()` does) at the next push; setting the current value does nothing.
    @inlinable
    public mutating func setInsertTiming(_ on: Bool) {
        if on == insertTiming { return }
        insertTiming = on
        reset()
    }

    /// Crossfades (10 ms) to the dry input played at rate 1 from the current input position, or back.
    /// Settled, the output is the input exactly; leaving a settled bypass restarts the stretcher from the
    /// dry position (primed with the history before it), so the crossfade back is time-aligned.
    @inlinable
    public mutating func setBypass(_ bypassed: Bool) {
        if bypassed && wetDry.bypass.isFullyActive {
            // Start the dry path where the processed output is, within the history the crossfade needs.
            // (Mid-crossfade the dry path is audible and keeps its position.)
            let slack = history.capacity - startPad - 32 * bypassFadeFrames - 2 * maxBlockFrames
            let lowest = max(0, history.writePosition - slack)
            dryIndex = min(max(Int(EffectMath.floor(contentPosition + 0.5)), lowest), history.writePosition)
        }
        if !hasStarted {
            wetDry.bypass.jump(bypassed)
            if !bypassed { scheduleRestart(at: dryIndex) }
        } else if wetDry.bypass.set(bypassed) {
            scheduleRestart(at: dryIndex)
        }
    }

    /// Forgets all buffered input and output; the stretcher restarts (reset and primed with silence) at
    /// the next push. O(1): no memset, no C call here.
    @inlinable
    public mutating func reset() {
        history.rewind()
        // With insert timing the output starts `latencyFrames` of silence before the input's first frame.
        dryIndex = insertTiming ? -latencyFrames : 0
        scheduleRestart(at: dryIndex)
        logRate.ramp(to: logRate.target, frames: 0)
        cents.ramp(to: cents.target, frames: 0)
    }

    @inlinable
    mutating func scheduleRestart(at position: Int) {
        restartPending = true
        restartPosition = position
        feedPosition = position
        processedRead = processed.writePosition
        pendingFrames = 0
        discardFrames = 0
        contentPosition = Double(position)
    }
}

extension TimePitchKernel {
    /// The `setParameter` indices, named: `parameters` is in this order (a test checks the names), and
    /// the engine addresses the kernel only through these.
    public enum Parameter: Int, CaseIterable, Sendable {
        case rate, pitch, overlap
    }

    /// Control side. Parameters in `setParameter` index order (names, ranges and defaults as
    /// AVAudioUnitTimePitch).
    public static let parameters: [EffectParameter] = [
        EffectParameter(
            "rate", unit: "ratio", minimum: 1.0 / 32, maximum: 32, default: 1, isSmoothed: true,
            "playback speed, pitch unchanged: 2 plays twice as fast (the output lasts half as long); "
                + "glides over 20 ms on a log scale"),
        EffectParameter(
            "pitch", unit: "cents", minimum: -2400, maximum: 2400, default: 0, isSmoothed: true,
            "pitch shift, duration unchanged (1200 = one octave up); glides over 20 ms in steps of at most "
                + "0.85 cent"),
        EffectParameter(
            "overlap", unit: "generic", minimum: 8, maximum: 8, default: 8, isSmoothed: false,
            "only the default 8 is accepted; Rubber Band R3, which does the stretching, has no overlap setting, "
                + "so AVAudioUnitTimePitch's other values (3…32) are refused rather than ignored")
    ]
}

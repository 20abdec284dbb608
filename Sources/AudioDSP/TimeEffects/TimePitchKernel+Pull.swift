// Render side. The pull interface of TimePitchKernel: how much input it wants, feeding the stretcher from
// the input history, and delivering its output with the bypass crossfade.
import CRubberBand

extension TimePitchKernel {
    /// How many input frames (≤ `maxBlockFrames`) the kernel wants pushed next so that it can soon deliver
    /// `outputFrames` frames; 0 when it already holds enough for a pull of `outputFrames`.
    ///
    /// Processing: the stretcher's own requirement minus the input already pushed but not yet fed (at
    /// least 1 while output is short, so each push lets the kernel feed one more analysis hop). Bypassed:
    /// enough to keep `latencyFrames` of input ahead of the dry read position. At rate r a pull of n frames
    /// takes about r·n input frames, in pushes of at most `maxBlockFrames`.
    @inlinable
    public func inputFramesWanted(outputFrames: Int) -> Int {
        let n = min(max(outputFrames, 0), maxBlockFrames)
        if n == 0 { return 0 }
        let newest = history.writePosition
        var wanted = 0
        if !wetDry.bypass.isFullyBypassed && queuedFrames < n {
            let required = restartPending ? primingFrames : requiredFrames
            wanted = min(max(required - (newest - feedPosition), 1), maxBlockFrames)
        }
        if !wetDry.bypass.isFullyActive {
            wanted = max(wanted, min(dryIndex + n + latencyFrames - newest, maxBlockFrames))
        }
        return wanted
    }

    /// Processed frames ready for `pull` (in the queue and still inside the stretcher).
    @inlinable var queuedFrames: Int { processed.writePosition - processedRead + pendingFrames }

    /// Appends `frames` (≤ `maxBlockFrames`) input frames of the first `channelCount` channels of `bus`,
    /// and feeds the stretcher from the history until a block's worth of output is queued.
    @inlinable
    public mutating func push(_ bus: BusRef, frames: Int) {
        hasStarted = true
        history.write(bus, frames: min(max(frames, 0), maxBlockFrames))
        if wetDry.bypass.isFullyBypassed { return }
        applyParameters()
        if restartPending { restart() }
        // Input the caller pushed beyond the history window is lost; feed from what is held.
        feedPosition = max(feedPosition, history.oldestPosition)
        while feedPosition < history.writePosition && queuedFrames < maxBlockFrames {
            let required = requiredFrames > 0 ? requiredFrames : maxBlockFrames
            let chunk = min(history.writePosition - feedPosition, required, maxBlockFrames)
            feed(from: feedPosition, frames: chunk)
            feedPosition += chunk
        }
    }

    /// Writes exactly `frames` (≤ `maxBlockFrames`) frames to the first `channelCount` channels of
    /// `output`; frames the kernel cannot supply are silence and count in `underrunFrames`.
    @inlinable
    public mutating func pull(_ output: BusRef, frames: Int) {
        hasStarted = true
        let n = min(max(frames, 0), maxBlockFrames)
        logRate.advanceClosedForm(frames: n)
        cents.advanceClosedForm(frames: n)
        if wetDry.bypass.isFullyBypassed {
            readDry(into: output, frames: n)
            flushSubnormals(output, frames: n)
            return
        }
        if pendingFrames > 0 { drain() }
        let ready = min(n, processed.writePosition - processedRead)
        for c in 0..<channelCount {
            let destination = output.channel(c)
            processed.read(channel: c, from: processedRead, count: ready, into: destination)
            (destination + ready).update(repeating: 0, count: n - ready)
        }
        processedRead += ready
        underrunFrames += n - ready
        contentPosition += Double(ready) / appliedTimeRatio
        if !wetDry.bypass.isFullyActive { readDry(into: wetDry.dryBus, frames: n) }
        wetDry.finish(output: output, frames: n)
        flushSubnormals(output, frames: n)
    }

    // MARK: Stretcher (render side; plain C calls into Rubber Band, which neither allocate nor lock once
    // warmed up, as the allocation-probe test checks)

    /// Sends the current (gliding) rate and pitch to the stretcher when they changed. The pitch goes as
    /// the nearest k/8192 resampling ratio (see the type comment).
    @inlinable
    mutating func applyParameters() {
        let timeRatio = EffectMath.exp2(-logRate.value)
        if timeRatio != appliedTimeRatio {
            appliedTimeRatio = timeRatio
            rubberband_set_time_ratio(stretcher, timeRatio)
        }
        let ratio = EffectMath.exp2(-cents.value / 1200) * Self.pitchSteps
        let step = min(max(Int(EffectMath.floor(ratio + 0.5)), 2048), 32_768)
        if step != appliedPitchStep {
            appliedPitchStep = step
            rubberband_set_pitch_scale(stretcher, Self.pitchSteps / Double(step))
        }
    }

    /// Resets the stretcher and primes it with the `startPad` history frames before `restartPosition`
    /// (silence before the stream start), so its output, once the start delay is dropped, begins at
    /// `restartPosition`.
    @inlinable
    mutating func restart() {
        restartPending = false
        rubberband_reset(stretcher)
        // Dropping the start delay costs delay × rate input frames; bound that burst.
        let delay = Int(rubberband_get_start_delay(stretcher)) + alignmentFrames
        let rate = 1 / appliedTimeRatio
        discardFrames = min(delay, Int(Double(Self.maximumPrimingFrames) / max(rate, 1)))
        var position = restartPosition - startPad
        while position < restartPosition {
            let chunk = min(restartPosition - position, maxBlockFrames)
            feed(from: position, frames: chunk)
            position += chunk
        }
        feedPosition = restartPosition
        contentPosition = Double(restartPosition)
    }

    /// Feeds `frames` (≤ `maxBlockFrames`) history frames from `position` to the stretcher (non-finite
    /// samples as 0, so a NaN can never poison its state), then drains its output into the queue.
    @inlinable
    mutating func feed(from position: Int, frames: Int) {
        for c in 0..<channelCount {
            let destination = scratch + c * scratchFrames
            history.read(channel: c, from: position, count: frames, into: destination)
            for i in 0..<frames where !destination[i].isFinite { destination[i] = 0 }
            inputPointers[c] = UnsafePointer(destination)
        }
        rubberband_process(stretcher, inputPointers, UInt32(frames), 0)
        drain()
    }

    /// Moves the stretcher's output into the queue (dropping the start delay first), as far as the queue
    /// has room; never asks for more than is available (Rubber Band logs such a request).
    @inlinable
    mutating func drain() {
        for c in 0..<channelCount { outputPointers[c] = scratch + c * scratchFrames }
        var available = max(Int(rubberband_available(stretcher)), 0)
        while available > 0 {
            var chunk = min(available, scratchFrames)
            if discardFrames > 0 {
                chunk = min(chunk, discardFrames)
            } else {
                chunk = min(chunk, processed.capacity - (processed.writePosition - processedRead))
                if chunk == 0 { break }
            }
            let got = Int(rubberband_retrieve(stretcher, outputPointers, UInt32(chunk)))
            if got <= 0 { break }
            available -= got
            if discardFrames > 0 {
                discardFrames -= got
            } else {
                processed.write(BusRef(data: scratch, channelCount: channelCount, stride: scratchFrames), frames: got)
            }
        }
        pendingFrames = available
        requiredFrames = Int(rubberband_get_samples_required(stretcher))
    }

    // MARK: Dry path (render side)

    /// Copies `frames` history frames from the dry position (zeros where none was pushed) and advances it.
    @inlinable
    mutating func readDry(into bus: BusRef, frames: Int) {
        for c in 0..<channelCount {
            history.read(channel: c, from: dryIndex, count: frames, into: bus.channel(c))
        }
        let missing = dryIndex + frames - history.writePosition
        if missing > 0 && wetDry.bypass.isFullyBypassed { underrunFrames += min(missing, frames) }
        dryIndex += frames
    }

    @inlinable
    func flushSubnormals(_ bus: BusRef, frames: Int) {
        for c in 0..<channelCount {
            let p = bus.channel(c)
            for i in 0..<frames where p[i] != 0 && p[i].magnitude < 1e-20 { p[i] = 0 }
        }
    }
}

// Render side (process, settings) and control side (allocation, freeing). A voice processor in the graph:
// sub-blocks of any size framed into the canceller's fixed frames, the engine's own output kept as a
// reference, bypass and muting.
import AudioDSP

/// What a `voiceSetting` command changes.
public enum VoiceSetting: UInt8, BitwiseCopyable {
    case bypass, inputMuted, agc, noiseSuppression, engineReference, duckOthers, advancedDucking
}

/// One voice processor's render state. Allocated whole by the control side; the render thread only
/// reads and writes what is here.
///
/// Timing: the microphone (bus 0) and the reference (bus 1) are collected into frames of `frameLength`;
/// each full frame is processed at once and played out during the next one, so the output lags the
/// microphone by exactly `latencyFrames` (the framing plus the kernel's own delay), whatever the
/// sub-block sizes. With `reference: engine`, the engine's final output is kept in a ring that the
/// output step fills and the next sub-block reads: the reference lags what went to `out_1..N` by one
/// maximum block, which the canceller's delay tracking absorbs.
public struct VoiceProcessorStage {
    public let nodeID: Int32
    public let micChannels: Int
    public let referenceChannels: Int
    public let frameLength: Int
    /// Frames the output lags the microphone.
    public let latencyFrames: Int
    /// The kernel's own share of it.
    let kernelLatency: Int
    /// The canceller, owned by the stage (released in `deallocate`); used through an unmanaged
    /// reference so the render thread does no reference counting.
    let kernel: Unmanaged<VoiceProcessorKernel>
    /// Planar frames (channel c at c × frameLength).
    let micFrame: UnsafeMutablePointer<Float>
    let referenceFrame: UnsafeMutablePointer<Float>
    let outputFrame: UnsafeMutablePointer<Float>
    /// Per-channel pointers into the frames, for the kernel.
    let micPointers: UnsafeMutablePointer<UnsafeMutablePointer<Float>>
    let referencePointers: UnsafeMutablePointer<UnsafeMutablePointer<Float>>
    let outputPointers: UnsafeMutablePointer<UnsafeMutablePointer<Float>>
    /// The bypass path: the microphone delayed by the kernel's own latency (a ring per channel), so a
    /// bypassed processor has the same latency as a running one and switching never jumps.
    let bypassLine: UnsafeMutablePointer<Float>
    let bypassLength: Int
    var bypassPosition = 0
    /// The engine's output as reference: `referenceChannels` rings of `ringCapacity`.
    let engineRing: UnsafeMutablePointer<Float>
    let ringCapacity: Int
    var ringRead = 0
    var ringWrite: Int
    /// Position in the current frame.
    var position = 0
    var bypass = false
    var inputMuted = false
    var usesEngineReference = false
    /// Near-end speech as last reported (muted-talker detection reports changes only).
    var nearEndActive = false
    /// Frames in a row the near end has been active, and whether a muted talker was reported.
    var activeRun = 0
    var mutedTalkerReported = false
    /// Other-audio ducking: on, the gain it ducks to, and whether only while someone talks.
    var duckOthers = false
    var duckLevel: Float = 1
    var advancedDucking = false
    /// Frames of talk (either end) left to hold advanced ducking after the talk stops.
    var talkHold = 0
    /// What this processor asks the engine's players to glide to (1: no ducking).
    var duckTarget: Float = 1

    /// Control side. A stage for `settings`, reading the engine's output with up to `maxBlockFrames` per
    /// sub-block.
    public init(nodeID: Int32, settings: VoiceProcessorSettings, maxBlockFrames: Int) {
        self.nodeID = nodeID
        let made = VoiceProcessorKernel(settings: settings)
        kernel = .passRetained(made)
        micChannels = settings.micChannels
        referenceChannels = settings.referenceChannels
        frameLength = made.frameLength
        kernelLatency = made.latencyFrames
        latencyFrames = made.frameLength + made.latencyFrames
        let f = frameLength
        micFrame = .allocate(capacity: micChannels * f)
        micFrame.initialize(repeating: 0, count: micChannels * f)
        referenceFrame = .allocate(capacity: referenceChannels * f)
        referenceFrame.initialize(repeating: 0, count: referenceChannels * f)
        outputFrame = .allocate(capacity: micChannels * f)
        outputFrame.initialize(repeating: 0, count: micChannels * f)
        micPointers = .allocate(capacity: micChannels)
        outputPointers = .allocate(capacity: micChannels)
        for c in 0..<micChannels {
            (micPointers + c).initialize(to: micFrame + c * f)
            (outputPointers + c).initialize(to: outputFrame + c * f)
        }
        referencePointers = .allocate(capacity: referenceChannels)
        for c in 0..<referenceChannels { (referencePointers + c).initialize(to: referenceFrame + c * f) }
        bypassLength = max(1, made.latencyFrames)
        bypassLine = .allocate(capacity: micChannels * bypassLength)
        bypassLine.initialize(repeating: 0, count: micChannels * bypassLength)
        ringCapacity = 2 * max(1, maxBlockFrames)
        engineRing = .allocate(capacity: referenceChannels * ringCapacity)
        engineRing.initialize(repeating: 0, count: referenceChannels * ringCapacity)
        // The reference lags the output by one maximum block: the output step writes a sub-block after
        // the processor has read one of the same length.
        ringWrite = max(1, maxBlockFrames)
    }

    /// Control side. Frees a stage made with `allocate` and `initialize`, and what its `init` allocated
    /// (the render thread no longer references it).
    static func free(_ stage: UnsafeMutablePointer<VoiceProcessorStage>) {
        stage.pointee.deallocate()
        stage.deinitialize(count: 1)
        stage.deallocate()
    }

    /// Control side. Frees what `init` allocated (the render thread no longer references the stage).
    public func deallocate() {
        micFrame.deallocate()
        referenceFrame.deallocate()
        outputFrame.deallocate()
        micPointers.deallocate()
        referencePointers.deallocate()
        outputPointers.deallocate()
        bypassLine.deallocate()
        engineRing.deallocate()
        kernel.release()
    }

    /// Any thread: the canceller's latest figures (published through atomics; `kernel` never changes).
    public var publishedAnalysis: VoiceAnalysis { kernel._withUnsafeGuaranteedRef { $0.publishedAnalysis } }

    // MARK: Render thread

    /// Applies a setting (the `voiceSetting` command).
    mutating func apply(_ setting: VoiceSetting, _ on: Bool) {
        switch setting {
        case .bypass: bypass = on
        case .inputMuted: inputMuted = on
        case .engineReference:
            usesEngineReference = on
            if !on { engineRing.update(repeating: 0, count: referenceChannels * ringCapacity) }
        case .duckOthers: duckOthers = on
        case .advancedDucking: advancedDucking = on
        case .agc: kernel._withUnsafeGuaranteedRef { $0.setAGC(on) }
        case .noiseSuppression: kernel._withUnsafeGuaranteedRef { $0.setNoiseSuppression(on) }
        }
    }

    /// Processes one sub-block: `mic` and `reference` in (the summed graph inputs and ports), `output`
    /// out. Returns a change of near-end activity while muted (nil: none to report).
    mutating func process(mic: BusRef, reference: BusRef, output: BusRef, frames: Int) -> Bool? {
        let f = frameLength
        var done = 0
        var change: Bool?
        while done < frames {
            let n = min(frames - done, f - position)
            for c in 0..<micChannels {
                let source = c < mic.channelCount ? mic.channel(c) + done : nil
                let destination = micFrame + c * f + position
                if let source {
                    MixKernel.copy(source, to: destination, count: n)
                } else {
                    MixKernel.clear(destination, count: n)
                }
                let out = c < output.channelCount ? output.channel(c) + done : nil
                if let out { MixKernel.copy(outputFrame + c * f + position, to: out, count: n) }
            }
            for c in 0..<referenceChannels {
                let destination = referenceFrame + c * f + position
                if c < reference.channelCount {
                    MixKernel.copy(reference.channel(c) + done, to: destination, count: n)
                } else if reference.channelCount > 0 {
                    MixKernel.copy(reference.channel(0) + done, to: destination, count: n)
                } else {
                    MixKernel.clear(destination, count: n)
                }
            }
            if usesEngineReference { addEngineReference(at: position, count: n) }
            position += n
            done += n
            if position == f {
                if let c = runFrame() { change = c }
                position = 0
            }
        }
        for c in micChannels..<output.channelCount { MixKernel.clear(output.channel(c), count: frames) }
        return change
    }

    /// The output step: keeps the engine's final output for the next sub-block's reference (mixed to the
    /// reference's channels).
    mutating func captureEngineOutput(_ bus: BusRef, frames: Int) {
        guard usesEngineReference, bus.channelCount > 0 else { return }
        for i in 0..<frames {
            let slot = (ringWrite + i) % ringCapacity
            if referenceChannels == 1 {
                var sum: Float = 0
                for c in 0..<bus.channelCount { sum += bus.channel(c)[i] }
                engineRing[slot] = sum / Float(bus.channelCount)
            } else {
                for c in 0..<referenceChannels {
                    engineRing[c * ringCapacity + slot] = bus.channel(min(c, bus.channelCount - 1))[i]
                }
            }
        }
        ringWrite = (ringWrite + frames) % ringCapacity
    }

    /// Adds `count` frames of the engine's kept output to the reference frame at `at`.
    private mutating func addEngineReference(at: Int, count: Int) {
        for c in 0..<referenceChannels {
            let destination = referenceFrame + c * frameLength + at
            let ring = engineRing + c * ringCapacity
            for i in 0..<count {
                let slot = (ringRead + i) % ringCapacity
                destination[i] += ring[slot]
                ring[slot] = 0
            }
        }
        ringRead = (ringRead + count) % ringCapacity
    }

    /// One full frame: the kernel (or the bypass line) fills the output frame. Returns a change of
    /// near-end activity while muted.
    private mutating func runFrame() -> Bool? {
        let mic = UnsafePointer(micPointers)
        let reference = UnsafePointer(referencePointers)
        let output = UnsafePointer(outputPointers)
        kernel._withUnsafeGuaranteedRef { $0.process(mic: mic, reference: reference, output: output) }
        let f = frameLength
        // The bypass line runs always, so switching keeps the latency and never repeats old samples.
        for c in 0..<micChannels {
            let line = bypassLine + c * bypassLength
            let mic = micFrame + c * f
            let out = outputFrame + c * f
            var p = bypassPosition
            for i in 0..<f {
                let delayed = kernelLatency == 0 ? mic[i] : line[p]
                line[p] = mic[i]
                p = p + 1 == bypassLength ? 0 : p + 1
                if bypass { out[i] = delayed }
            }
        }
        bypassPosition = (bypassPosition + f) % bypassLength
        // Muted wins over bypass: a muted talker is never heard.
        if inputMuted { outputFrame.update(repeating: 0, count: micChannels * f) }
        let active = kernel._withUnsafeGuaranteedRef { $0.analysis.nearEndActive }
        defer { nearEndActive = active }
        updateDucking(nearEndActive: active)
        return mutedTalkerChange(nearEndActive: active)
    }

    /// Muted-talker detection: a talker is reported once the near end has been active for
    /// `mutedTalkerFrames` frames in a row (a word; a lone frame of residual echo taken for the near end
    /// holds the detector's 200 ms hangover and no more), and the end once it is quiet again. Unmuting
    /// ends a reported talker.
    private mutating func mutedTalkerChange(nearEndActive active: Bool) -> Bool? {
        activeRun = active ? activeRun + 1 : 0
        if mutedTalkerReported && (!active || !inputMuted) {
            mutedTalkerReported = false
            return false
        }
        if !mutedTalkerReported && inputMuted && activeRun >= Self.mutedTalkerFrames {
            mutedTalkerReported = true
            return true
        }
        return nil
    }

    /// 300 ms of 10 ms frames.
    static let mutedTalkerFrames = 30

    /// Other-audio ducking after a frame: always while on, or (advanced) while either end talks and for
    /// 300 ms after. The far end talks when the reference is above −50 dBFS.
    private mutating func updateDucking(nearEndActive: Bool) {
        guard duckOthers else {
            duckTarget = 1
            return
        }
        guard advancedDucking else {
            duckTarget = duckLevel
            return
        }
        var energy: Float = 0
        let count = referenceChannels * frameLength
        for i in 0..<count { energy += referenceFrame[i] * referenceFrame[i] }
        let farEndActive = energy / Float(max(1, count)) > 1e-5
        if nearEndActive || farEndActive {
            talkHold = 30 * frameLength
        } else {
            talkHold = max(0, talkHold - frameLength)
        }
        duckTarget = talkHold > 0 ? duckLevel : 1
    }
}

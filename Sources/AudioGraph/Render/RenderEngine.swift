// Render side entry point, plus the few control-side calls that feed it.
// Thread contract: `process` is called by exactly one host thread at a time (JACK's process thread or
// the offline renderer); `publish` and `commands.push` only by the control side (Engine, under its lock);
// `events.pop` only by the control side. Nothing here blocks, allocates or retains on the render path.
import AudioDSP
import CRealtime
import Synchronization

/// Executes compiled programs in fixed sub-blocks inside whatever period the host uses.
public final class RenderEngine: @unchecked Sendable {
    // @unchecked: the render thread and the control side meet only at its queues and its program slot.
    /// Control → render commands (applied in order; timed ones at their exact frame).
    public let commands: SPSCQueue<TimedCommand>
    /// Render → control notifications.
    public let events: SPSCQueue<RenderEvent>
    /// The largest sub-block rendered at once; buses are this long.
    public let maxBlockFrames: Int
    /// Input frames a time effect may take for one quantum of output however small the sub-block.
    static let timeEffectInputBound = 16_384
    /// The newest program not yet taken by the render thread (a `RenderProgramData` pointer).
    let programSlot = Atomic<UnsafeMutableRawPointer?>(nil)
    /// Generation of the program the render thread is executing.
    let installedGenerationCounter = Atomic<Int>(0)
    /// Queue position below which every command has been applied or purged, and no copy of it is held
    /// by the render thread (published at the end of each render call).
    let settledCommandCounter = Atomic<Int>(0)
    /// Frames rendered since the engine was created (statistics and engine time for the control side).
    let renderedFrameCounter = Atomic<Int>(0)
    /// Set when the first render call begins (before it takes any program).
    let hasStartedCounter = Atomic<Bool>(false)
    /// Clock anchor, published by `render` with a sequence lock: odd while being written.
    let anchorSequence = Atomic<Int>(0)
    let anchorSampleTime = Atomic<Int>(0)
    let anchorNanoseconds = Atomic<Int>(0)
    /// Render-thread-private state.
    @usableFromInline let core: UnsafeMutablePointer<RenderCore>

    /// Creates an engine whose commands and timed events fit the given capacities.
    public init(
        maxBlockFrames: Int, commandCapacity: Int = 16_384, eventCapacity: Int = 4_096,
        pendingCapacity: Int = 4_096
    ) {
        self.maxBlockFrames = max(1, maxBlockFrames)
        commands = SPSCQueue(minimumCapacity: commandCapacity)
        events = SPSCQueue(minimumCapacity: eventCapacity)
        core = .allocate(capacity: 1)
        core.initialize(to: RenderCore(maxBlockFrames: self.maxBlockFrames, pendingCapacity: pendingCapacity))
    }

    deinit {
        commands.deallocate()
        events.deallocate()
        core.pointee.pending.deallocate()
        core.deinitialize(count: 1)
        core.deallocate()
    }

    // MARK: Control side

    /// Control side. Offers `program` to the render thread. Returns the previously offered program if the
    /// render thread never took it (the caller frees it; it was never seen by the render thread).
    func publish(_ program: RenderProgram) -> UnsafeMutableRawPointer? {
        // Release: the program's memory is fully written before the render thread can acquire it.
        // Acquire: a returned, untaken pointer is ours again.
        programSlot.exchange(UnsafeMutableRawPointer(program.data), ordering: .acquiringAndReleasing)
    }

    /// Any thread. Generation of the program being executed. Acquire: once this reads g, the render thread
    /// has stopped touching every program older than g.
    public var installedGeneration: Int { installedGenerationCounter.load(ordering: .acquiring) }

    /// Any thread. Every command pushed at a queue position below this has been applied, or dropped by a
    /// purge, and the render thread keeps no copy of it. Unlike `commands.consumedCount` (which counts
    /// a command as soon as it leaves the queue, before it is applied, and counts a timed command that
    /// waits in the pending list) this is what deferred frees wait for. Acquire pairs with the release
    /// at the end of each render call.
    public var settledCommandCount: Int { settledCommandCounter.load(ordering: .acquiring) }

    /// Any thread. The latest clock anchor: (engine sample time, CLOCK_MONOTONIC ns) at the start of the
    /// last render cycle, or nil before the first cycle.
    public var clockAnchor: (sampleTime: Int64, monotonicNanoseconds: Int64)? {
        while true {
            let before = anchorSequence.load(ordering: .acquiring)
            if before == 0 { return nil }
            if before & 1 == 1 { continue }
            let time = anchorSampleTime.load(ordering: .relaxed)
            let nanos = anchorNanoseconds.load(ordering: .relaxed)
            atomicMemoryFence(ordering: .acquiring)
            if anchorSequence.load(ordering: .relaxed) == before { return (Int64(time), Int64(nanos)) }
        }
    }

    /// Any thread. True once a render call has begun.
    public var hasStarted: Bool { hasStartedCounter.load(ordering: .acquiring) }

    /// Any thread. Frames rendered so far (relaxed: a statistic).
    public var renderedFrames: Int { renderedFrameCounter.load(ordering: .relaxed) }

    // MARK: Render side

    /// Render side; the host's entry point. Sets flush-to-zero for the calling thread (denormals cost
    /// 100× on x86), then renders. See `process` for the contract.
    public func render(
        frameCount: Int, inputs: UnsafePointer<UnsafePointer<Float>?>?, inputCount: Int,
        outputs: UnsafePointer<UnsafeMutablePointer<Float>?>, outputCount: Int, inserts: HostInsertIO = .none
    ) {
        // Flush denormals while rendering; the caller's floating-point mode comes back afterwards (the
        // offline renderer runs on threads that do other work too).
        let floatingPointMode = ss_enable_flush_to_zero()
        // Release: the control side, seeing this, knows programs may be in use from now on.
        hasStartedCounter.store(true, ordering: .releasing)
        defer { ss_restore_floating_point_mode(floatingPointMode) }
        // Clock anchor: the engine sample time of this cycle's first frame and when the cycle began.
        // Sequence lock: the reader retries while the sequence is odd or changed (all relaxed loads are
        // ordered by the releasing/acquiring sequence updates).
        let sequence = anchorSequence.load(ordering: .relaxed)
        anchorSequence.store(sequence &+ 1, ordering: .relaxed)
        atomicMemoryFence(ordering: .releasing)
        anchorSampleTime.store(Int(core.pointee.sampleTime), ordering: .relaxed)
        anchorNanoseconds.store(Int(ss_monotonic_ns()), ordering: .relaxed)
        anchorSequence.store(sequence &+ 2, ordering: .releasing)
        process(
            frameCount: frameCount, inputs: inputs, inputCount: inputCount, outputs: outputs, outputCount: outputCount,
            inserts: inserts)
    }

    /// Render side. Renders `frameCount` frames: takes a newer program if one was published, applies
    /// queued commands, then renders sub-blocks of at most `maxBlockFrames`, split further at the exact
    /// frames of timed commands. `outputs` must hold `outputCount` host channel pointers of at least
    /// `frameCount` samples; `inputs` may be nil (silence). `inserts` are the exposed effects' host
    /// buffers (each at least `frameCount` samples).
    @_noLocks @_noAllocation
    public func process(
        frameCount: Int, inputs: UnsafePointer<UnsafePointer<Float>?>?, inputCount: Int,
        outputs: UnsafePointer<UnsafeMutablePointer<Float>?>, outputCount: Int, inserts: HostInsertIO
    ) {
        let core = self.core
        drainCommands(core)
        core.pointee.hostInputs = inputs
        core.pointee.hostInputCount = inputs == nil ? 0 : inputCount
        core.pointee.hostOutputs = outputs
        core.pointee.hostOutputCount = outputCount
        core.pointee.hostInserts = inserts
        var done = 0
        while done < frameCount {
            applyDueCommands(core)
            var n = min(frameCount &- done, maxBlockFrames)
            let now = core.pointee.sampleTime
            if core.pointee.pendingCount > 0 {
                let next = core.pointee.pending[0].timed.time
                if next > now { n = min(n, Int(next &- now)) }
            }
            core.pointee.hostOffset = done
            core.pointee.duckTarget = core.pointee.duckNext
            core.pointee.duckNext = 1
            renderChunk(core, frames: n)
            core.pointee.sampleTime &+= Int64(n)
            done &+= n
        }
        // Relaxed: a statistic read by the control side.
        renderedFrameCounter.wrappingAdd(frameCount, ordering: .relaxed)
        // Release: every write this call made through a command's pointers happens before the control
        // side, seeing the new count, frees what those commands pointed at.
        settledCommandCounter.store(core.pointee.settledSequence(), ordering: .releasing)
    }

    /// Pops every queued command: immediate ones apply now, future ones go to the time-sorted list.
    @inline(__always)
    func drainCommands(_ core: UnsafeMutablePointer<RenderCore>) {
        while true {
            let next = commands.pop()
            guard let timed = next else { break }
            let sequence = core.pointee.poppedCount
            core.pointee.poppedCount &+= 1
            if timed.time < 0 || timed.time <= core.pointee.sampleTime {
                apply(timed.command, core, sequence: sequence)
            } else if !core.pointee.insertPending(timed, sequence: sequence) {
                apply(timed.command, core, sequence: sequence)
                emit(.timedCommandOverflow(sampleTime: core.pointee.sampleTime))
            }
        }
    }

    /// Sends an event to the control side; drops it when the queue is full (never blocks).
    @inline(__always)
    func emit(_ event: RenderEvent) {
        _ = events.push(event)
    }

    /// Applies every pending command whose time has come.
    @inline(__always)
    func applyDueCommands(_ core: UnsafeMutablePointer<RenderCore>) {
        while core.pointee.pendingCount > 0 && core.pointee.pending[0].timed.time <= core.pointee.sampleTime {
            let (command, sequence) = core.pointee.removeFirstPending()
            apply(command, core, sequence: sequence)
        }
    }

    /// `sequence`: the command's queue position (a command that schedules a follow-up keeps it pending
    /// under the same position, so what it points at stays alive until the follow-up has run).
    @inline(__always)
    func apply(_ command: Command, _ core: UnsafeMutablePointer<RenderCore>, sequence: Int) {
        switch command {
        case .setMixing(let mixing, let left, let right, let mono, let frames):
            mixing.pointee.left.ramp(to: left, frames: Int(frames))
            mixing.pointee.right.ramp(to: right, frames: Int(frames))
            mixing.pointee.mono.ramp(to: mono, frames: Int(frames))
        case .setFade(let fade, let target, let frames):
            fade.pointee.ramp(to: target, frames: Int(frames))
        case .setOutputVolume(let mixer, let target, let frames):
            mixer.pointee.outputVolume.ramp(to: target, frames: Int(frames))
        case .sessionGain(let target, let frames):
            core.pointee.sessionGain.ramp(to: target, frames: Int(frames))
        case .playerEnqueue(let player, let item, let mode):
            applyEnqueue(player, item, mode, core)
        case .playerSetLooping(let player, let isLooping):
            if player.pointee.count > 0 {
                player.pointee.items[player.pointee.head].material.isLooping = isLooping
            }
        case .playerPlay(let player):
            player.pointee.isPlaying = true
            emitTransport(player, core)
        case .playerPause(let player):
            player.pointee.isPlaying = false
            emitTransport(player, core)
        case .playerStop(let player):
            dropItems(player, keepingFirst: false, core)
            player.pointee.isPlaying = false
            player.pointee.playerTime = 0
            emitTransport(player, core)
        case .playerFinishCurrent(let player, let pausesAtEnd):
            dropItems(player, keepingFirst: true, core)
            if player.pointee.count > 0 {
                let head = player.pointee.head
                player.pointee.items[head].material.isLooping = false
                player.pointee.items[head].pausesAtEnd = pausesAtEnd
            }
        case .playerFadeOut(let player, let mixing, let frames):
            mixing.pointee.left.ramp(to: 0, frames: Int(frames))
            mixing.pointee.right.ramp(to: 0, frames: Int(frames))
            mixing.pointee.mono.ramp(to: 0, frames: Int(frames))
            let stop = TimedCommand(renderTime: core.pointee.sampleTime &+ Int64(frames), .playerStop(player))
            if frames <= 0 || !core.pointee.insertPending(stop, sequence: sequence) {
                apply(.playerStop(player), core, sequence: sequence)
            }
        case .effectParameter(let effect, let index, let value):
            switch effect {
            case .reverb(let p): p.pointee.setParameter(Int(index), value: value)
            case .delay(let p): p.pointee.setParameter(Int(index), value: value)
            case .distortion(let p): p.pointee.setParameter(Int(index), value: value)
            case .eq(let p): p.pointee.setParameter(Int(index), value: value)
            case .timePitch(let p): p.pointee.setParameter(Int(index), value: value)
            case .varispeed(let p): p.pointee.setParameter(Int(index), value: value)
            }
        case .effectBypass(let effect, let bypassed):
            switch effect {
            case .reverb(let p): p.pointee.setBypass(bypassed)
            case .delay(let p): p.pointee.setBypass(bypassed)
            case .distortion(let p): p.pointee.setBypass(bypassed)
            case .eq(let p): p.pointee.setBypass(bypassed)
            case .timePitch(let p): p.pointee.setBypass(bypassed)
            case .varispeed(let p): p.pointee.setBypass(bypassed)
            }
        case .effectReset(let effect):
            switch effect {
            case .reverb(let p): p.pointee.reset()
            case .delay(let p): p.pointee.reset()
            case .distortion(let p): p.pointee.reset()
            case .eq(let p): p.pointee.reset()
            case .timePitch(let p): p.pointee.reset()
            case .varispeed(let p): p.pointee.reset()
            }
        case .spatialVoice(let voice, let target):
            EnvironmentRender.apply(target, to: voice)
        case .spatialConvolver(let voice, let convolver):
            voice.pointee.hrtf = convolver
        case .spatialBed(let voice, let bed):
            voice.pointee.bed = bed
        case .environmentMix(let env, let reverbEnabled, let reverbLevel, let outputVolume, let frames):
            env.pointee.reverbEnabled = reverbEnabled
            env.pointee.reverbLevel.ramp(to: reverbEnabled ? reverbLevel : 0, frames: Int(frames))
            env.pointee.outputVolume.ramp(to: outputVolume, frames: Int(frames))
        case .voiceSetting(let stage, let setting, let on):
            RenderKernels.applyVoiceSetting(stage, setting, on)
        case .voiceDuckLevel(let stage, let gain):
            stage.pointee.duckLevel = gain
        case .environmentReverbPreset(let env, let index):
            env.pointee.reverb.setParameter(ReverbKernel.Parameter.preset.rawValue, value: Double(index))
        case .environmentFilter(let env, let index, let value):
            env.pointee.reverbFilter.setParameter(Int(index), value: value)
        case .purge(let target):
            core.pointee.removePending(target: target)
        case .takeProgram:
            // Acquire pairs with `publish`'s release: the program's contents are visible.
            if let raw = programSlot.exchange(nil, ordering: .acquiringAndReleasing) {
                let program = raw.assumingMemoryBound(to: RenderProgramData.self)
                core.pointee.program = program
                // Release: the old program is no longer touched once the control side reads this.
                installedGenerationCounter.store(program.pointee.generation, ordering: .releasing)
                emit(.programInstalled(generation: program.pointee.generation, sampleTime: core.pointee.sampleTime))
            }
        }
    }

    /// Schedules an item according to its mode.
    @inline(__always)
    func applyEnqueue(
        _ player: UnsafeMutablePointer<PlayerState>, _ item: PlayerScheduleItem,
        _ mode: PlayerScheduleMode, _ core: UnsafeMutablePointer<RenderCore>
    ) {
        switch mode {
        case .append:
            break
        case .interrupts:
            dropItems(player, keepingFirst: false, core)
        case .interruptsAtLoop:
            dropItems(player, keepingFirst: true, core)
            if player.pointee.count > 0 {
                // The playing item ends at its next loop point.
                player.pointee.items[player.pointee.head].material.isLooping = false
            }
        case .replacesMaterial:
            // Material items leave (reported as not completed); enqueued ones keep their order.
            var index = 0
            while index < player.pointee.count {
                let queued = player.pointee.items[(player.pointee.head &+ index) % player.pointee.capacity]
                if queued.pausesAtEnd {
                    player.pointee.remove(at: index)
                    emit(
                        .playerItemEnded(
                            nodeID: player.pointee.nodeID, itemID: queued.id,
                            sampleTime: core.pointee.sampleTime, completed: false))
                } else {
                    index &+= 1
                }
            }
            if !player.pointee.pushFront(item) {
                emit(.playerQueueFull(nodeID: player.pointee.nodeID, itemID: item.id))
            }
            return
        }
        if !player.pointee.enqueue(item) {
            emit(.playerQueueFull(nodeID: player.pointee.nodeID, itemID: item.id))
        }
    }

    /// Removes queued items (all, or all but the playing one), reporting each as not completed.
    @inline(__always)
    func dropItems(
        _ player: UnsafeMutablePointer<PlayerState>, keepingFirst: Bool, _ core: UnsafeMutablePointer<RenderCore>
    ) {
        let keep = keepingFirst ? 1 : 0
        let time = core.pointee.sampleTime
        while player.pointee.count > keep {
            let index: Int
            if keepingFirst {
                index = (player.pointee.head &+ player.pointee.count &- 1) % player.pointee.capacity
            } else {
                index = player.pointee.head
                player.pointee.head = (player.pointee.head &+ 1) % player.pointee.capacity
            }
            player.pointee.count &-= 1
            emit(
                .playerItemEnded(
                    nodeID: player.pointee.nodeID, itemID: player.pointee.items[index].id,
                    sampleTime: time, completed: false))
        }
        if !keepingFirst { player.pointee.position = 0 }
    }

    @inline(__always)
    func emitTransport(_ player: UnsafeMutablePointer<PlayerState>, _ core: UnsafeMutablePointer<RenderCore>) {
        emit(
            .playerTransport(
                nodeID: player.pointee.nodeID, sampleTime: core.pointee.sampleTime,
                playerTime: player.pointee.playerTime, isPlaying: player.pointee.isPlaying,
                commandCount: core.pointee.poppedCount))
    }

    /// Renders one sub-block of `frames` frames through the current program.
    @inline(__always)
    func renderChunk(_ core: UnsafeMutablePointer<RenderCore>, frames: Int) {
        let offset = core.pointee.hostOffset
        guard let program = core.pointee.program else {
            for c in 0..<core.pointee.hostOutputCount {
                if let out = core.pointee.hostOutputs?[c] { MixKernel.clear(out + offset, count: frames) }
            }
            return
        }
        runSteps(core, program.pointee.steps, from: 0, to: program.pointee.stepCount, frames: frames)
    }

    /// Runs steps `from ..< end` for `frames` frames. A time effect's step runs the chain after it (its
    /// sources) itself and the loop skips that chain.
    func runSteps(
        _ core: UnsafeMutablePointer<RenderCore>, _ steps: UnsafeMutablePointer<RenderStep>, from: Int, to end: Int,
        frames: Int
    ) {
        var i = from
        while i < end {
            switch steps[i] {
            case .player(let player, let mixing, let bus):
                mixing.pointee.beginChunk(frames: frames)
                let wasPlaying = player.pointee.isPlaying
                player.pointee.render(into: bus, frames: frames)
                RenderKernels.duck(player, bus, target: core.pointee.duckTarget, frames: frames)
                for e in 0..<player.pointee.endedCount {
                    let end = player.pointee.ended[e]
                    emit(
                        .playerItemEnded(
                            nodeID: player.pointee.nodeID, itemID: end.id,
                            sampleTime: core.pointee.sampleTime &+ Int64(end.offset), completed: true))
                }
                if wasPlaying && !player.pointee.isPlaying {
                    emitTransport(player, core)
                }
            case .input(let mixing, let bus):
                mixing.pointee.beginChunk(frames: frames)
                RenderKernels.copyHostInputs(core, into: bus, frames: frames)
            case .mixer(let mixer, let mixing, let inputs, let bus):
                mixing.pointee.beginChunk(frames: frames)
                MixerKernel.mix(inputs, into: bus, outputVolume: &mixer.pointee.outputVolume, frames: frames)
            case .output(let mixer, let inputs, let bus):
                MixerKernel.mix(inputs, into: bus, outputVolume: &mixer.pointee.outputVolume, frames: frames)
                RenderKernels.applySessionGain(core, to: bus, frames: frames)
                RenderKernels.writeHostOutputs(core, from: bus, frames: frames)
            case .effect(let effect, let unity, let inputs, let input, let output, let slot):
                MixerKernel.mix(inputs, into: input, outputVolume: &unity.pointee.outputVolume, frames: frames)
                if slot.base >= 0 { RenderKernels.addInsertInputs(core, slot, into: input, frames: frames) }
                switch effect {
                case .reverb(let p): p.pointee.process(input: input, output: output, frames: frames)
                case .delay(let p): p.pointee.process(input: input, output: output, frames: frames)
                case .distortion(let p): p.pointee.process(input: input, output: output, frames: frames)
                case .eq(let p): p.pointee.process(input: input, output: output, frames: frames)
                case .timePitch(let p):
                    // An inserted time-pitch runs at rate 1: as many frames in as out, delayed by exactly its
                    // latency (insert timing; a change restarts it once).
                    p.pointee.setInsertTiming(true)
                    RenderKernels.push(effect, input, frames: frames)
                    RenderKernels.pull(effect, output, frames: frames)
                case .varispeed:
                    // Never compiled into an effect step; pass through if it ever were.
                    for c in 0..<min(input.channelCount, output.channelCount) {
                        MixKernel.copy(input.channel(c), to: output.channel(c), count: frames)
                    }
                }
                if slot.base >= 0 { RenderKernels.writeInsertOutputs(core, slot, from: output, frames: frames) }
            case .timeEffect(let effect, let unity, let inputs, let input, let output, let fifo, let chain):
                serveTimeEffect(
                    core, steps, chain: (i &+ 1, i &+ 1 &+ chain), effect, unity, inputs, input, output,
                    fifo, frames: frames)
                i &+= chain
            case .environment(let env, let inputs, let bus):
                EnvironmentRender.process(env, inputs: inputs, into: bus, frames: frames)
            case .voiceProcessor(let step):
                let v = step.pointee
                let change = RenderKernels.processVoice(v, core, frames: frames)
                core.pointee.duckNext = min(core.pointee.duckNext, v.stage.pointee.duckTarget)
                if let started = change {
                    emit(.voiceActivity(nodeID: v.stage.pointee.nodeID, started: started))
                }
            case .voiceReference(let stage, let bus):
                RenderKernels.captureEngineOutput(stage, bus, frames: frames)
            case .tap(let tap, let bus):
                RenderKernels.pushTap(tap, from: bus, frames: frames)
            case .meter(let meter, let bus):
                RenderKernels.pushMeter(meter, from: bus, frames: frames)
            }
            i &+= 1
        }
    }

    /// Writes `frames` frames of a time effect's output into `output`, refilling its FIFO one quantum
    /// (`maxBlockFrames`) at a time: the kernel says how much input it wants, the feeding chain renders
    /// that much (in pieces of at most a sub-block), the inputs are summed and pushed, and a quantum is
    /// pulled. The input per quantum is bounded (512 rounds, and at least `timeEffectInputBound` frames
    /// for sub-blocks under 32 frames, so that a time-pitch's 2686 frames of priming fit in the first
    /// quantum at every sub-block size), so a kernel that keeps asking cannot hang the render thread (it
    /// then underruns, which it reports as silence).
    func serveTimeEffect(
        _ core: UnsafeMutablePointer<RenderCore>, _ steps: UnsafeMutablePointer<RenderStep>, chain: (Int, Int),
        _ effect: EffectRef, _ unity: UnsafeMutablePointer<MixerState>, _ inputs: UnsafeBufferPointer<MixerInput>,
        _ input: BusRef, _ output: BusRef, _ fifo: UnsafeMutablePointer<TimeEffectFIFO>, frames: Int
    ) {
        let quantum = maxBlockFrames
        let maximumRounds = max(512, Self.timeEffectInputBound / quantum)
        // Stream alignment: the chain runs ahead as the kernel asks (undoes an earlier insert's timing).
        if case .timePitch(let p) = effect { p.pointee.setInsertTiming(false) }
        var done = 0
        while done < frames {
            if fifo.pointee.available == 0 {
                var rounds = 0
                while rounds < maximumRounds {
                    let wanted = RenderKernels.inputFramesWanted(effect, outputFrames: quantum)
                    if wanted <= 0 { break }
                    let n = min(wanted, quantum)
                    runSteps(core, steps, from: chain.0, to: chain.1, frames: n)
                    MixerKernel.mix(inputs, into: input, outputVolume: &unity.pointee.outputVolume, frames: n)
                    RenderKernels.push(effect, input, frames: n)
                    rounds &+= 1
                }
                RenderKernels.pull(effect, fifo.pointee.bus, frames: quantum)
                fifo.pointee.available = quantum
                fifo.pointee.readOffset = 0
            }
            let n = min(frames &- done, fifo.pointee.available)
            let from = fifo.pointee.readOffset
            for c in 0..<min(output.channelCount, fifo.pointee.bus.channelCount) {
                MixKernel.copy(fifo.pointee.bus.channel(c) + from, to: output.channel(c) + done, count: n)
            }
            fifo.pointee.readOffset = from &+ n
            fifo.pointee.available &-= n
            done &+= n
        }
    }
}

// MARK: - Render-thread state and host I/O kernels
// They live in this file because the @_noLocks check must see every callee body, and without
// whole-module compilation only this file's bodies (and other modules' @inlinable ones) are visible.

/// Mutable state owned by the render thread. Allocated once by `RenderEngine`; never resized.
@usableFromInline
struct RenderCore {
    var program: UnsafeMutablePointer<RenderProgramData>?
    /// Engine sample time of the next frame to render.
    var sampleTime: Int64 = 0
    /// Timed commands sorted by time (stable for equal times), each with its queue position.
    var pending: UnsafeMutablePointer<PendingCommand>
    var pendingCount = 0
    let pendingCapacity: Int
    /// Commands popped from the queue so far (the next one's queue position).
    var poppedCount = 0
    /// The lowest queue position among pending commands, valid while `pendingChanged` is false.
    var oldestPendingSequence = 0
    var pendingChanged = false
    let maxBlockFrames: Int
    var hostInputs: UnsafePointer<UnsafePointer<Float>?>?
    var hostInputCount = 0
    var hostOutputs: UnsafePointer<UnsafeMutablePointer<Float>?>?
    var hostOutputCount = 0
    /// Exposed effects' host buffers for this period.
    var hostInserts = HostInsertIO.none
    /// Offset of the current sub-block inside the host period.
    var hostOffset = 0
    /// Other-audio ducking: the gain players glide to in this sub-block, and the lowest target the
    /// voice processors ask for in it (for the next one).
    var duckTarget: Float = 1
    var duckNext: Float = 1
    /// The audio session's gain on the output bus (1 unless other sessions duck this one or the silent
    /// switch mutes it).
    var sessionGain = ParameterRamp(1)

    init(maxBlockFrames: Int, pendingCapacity: Int) {
        self.maxBlockFrames = maxBlockFrames
        self.pendingCapacity = max(1, pendingCapacity)
        pending = .allocate(capacity: self.pendingCapacity)
    }

    /// Inserts keeping time order (after equal times, so commands at one frame keep their order).
    /// Returns false when full.
    mutating func insertPending(_ command: TimedCommand, sequence: Int) -> Bool {
        if pendingCount == pendingCapacity { return false }
        var index = pendingCount
        while index > 0 && pending[index &- 1].timed.time > command.time {
            pending[index] = pending[index &- 1]
            index &-= 1
        }
        pending[index] = PendingCommand(timed: command, sequence: sequence)
        pendingCount &+= 1
        pendingChanged = true
        return true
    }

    /// Removes and returns the earliest pending command and its queue position. Requires
    /// `pendingCount > 0`.
    mutating func removeFirstPending() -> (Command, sequence: Int) {
        let first = (pending[0].timed.command, sequence: pending[0].sequence)
        pendingCount &-= 1
        for i in 0..<pendingCount { pending[i] = pending[i &+ 1] }
        pendingChanged = true
        return first
    }

    /// Drops every pending command that points at `target` (as the state it writes or as material it
    /// hands over).
    mutating func removePending(target: UnsafeMutableRawPointer) {
        var kept = 0
        for i in 0..<pendingCount where !pending[i].timed.command.references(target) {
            pending[kept] = pending[i]
            kept &+= 1
        }
        if kept != pendingCount { pendingChanged = true }
        pendingCount = kept
    }

    /// The queue position below which every command has been applied or dropped: the oldest pending
    /// command's, or everything popped when none waits. Rescans the pending list only after it changed.
    mutating func settledSequence() -> Int {
        if pendingCount == 0 { return poppedCount }
        if pendingChanged {
            var oldest = pending[0].sequence
            for i in 1..<pendingCount where pending[i].sequence < oldest { oldest = pending[i].sequence }
            oldestPendingSequence = oldest
            pendingChanged = false
        }
        return oldestPendingSequence
    }
}

/// A timed command waiting for its frame, with the queue position it was pushed at.
@usableFromInline
struct PendingCommand {
    var timed: TimedCommand
    var sequence: Int
}

/// Per-step kernels, kept apart from the dispatch loop so each is small and testable.
@usableFromInline
enum RenderKernels {
    /// The voice processor's stage frames its input and calls speexdsp (C) through its kernel, which the
    /// static checker cannot see into, so these wrappers are exempt from it. speexdsp's echo canceller
    /// and preprocessor allocate and lock nothing after construction; the render thread's allocation
    /// test runs a voice processor to check that at runtime.
    @_semantics("no_performance_analysis") @inline(never)
    static func processVoiceFrames(_ v: VoiceProcessorStep, frames: Int) -> Bool? {
        v.stage.pointee.process(mic: v.mic, reference: v.reference, output: v.output, frames: frames)
    }

    @_semantics("no_performance_analysis") @inline(never)
    static func applyVoiceSetting(
        _ stage: UnsafeMutablePointer<VoiceProcessorStage>, _ setting: VoiceSetting, _ on: Bool
    ) {
        stage.pointee.apply(setting, on)
    }

    @_semantics("no_performance_analysis") @inline(never)
    static func captureEngineOutput(_ stage: UnsafeMutablePointer<VoiceProcessorStage>, _ bus: BusRef, frames: Int) {
        stage.pointee.captureEngineOutput(bus, frames: frames)
    }

    /// The time-pitch kernel's push and pull call Rubber Band (C), which the static checker cannot see
    /// into, so these two wrappers are exempt from it. Rubber Band's real-time mode allocates and locks
    /// nothing after construction; the allocation-probe tests of the kernel and of the render thread
    /// check that at runtime instead (DECISIONS.md).
    @_semantics("no_performance_analysis") @inline(never)
    static func push(_ kernel: UnsafeMutablePointer<TimePitchKernel>, _ bus: BusRef, frames: Int) {
        kernel.pointee.push(bus, frames: frames)
    }

    @_semantics("no_performance_analysis") @inline(never)
    static func pull(_ kernel: UnsafeMutablePointer<TimePitchKernel>, _ bus: BusRef, frames: Int) {
        kernel.pointee.pull(bus, frames: frames)
    }

    /// A time effect's input demand (0 for other effects).
    @inline(__always)
    static func inputFramesWanted(_ effect: EffectRef, outputFrames: Int) -> Int {
        switch effect {
        case .timePitch(let p): return p.pointee.inputFramesWanted(outputFrames: outputFrames)
        case .varispeed(let p): return p.pointee.inputFramesWanted(outputFrames: outputFrames)
        default: return 0
        }
    }

    /// Feeds a time effect (nothing for other effects).
    @inline(__always)
    static func push(_ effect: EffectRef, _ bus: BusRef, frames: Int) {
        switch effect {
        case .timePitch(let p): push(p, bus, frames: frames)
        case .varispeed(let p): p.pointee.push(bus, frames: frames)
        default: break
        }
    }

    /// Takes a time effect's output (silence for other effects).
    @inline(__always)
    static func pull(_ effect: EffectRef, _ bus: BusRef, frames: Int) {
        switch effect {
        case .timePitch(let p): pull(p, bus, frames: frames)
        case .varispeed(let p): p.pointee.pull(bus, frames: frames)
        default:
            for c in 0..<bus.channelCount { MixKernel.clear(bus.channel(c), count: frames) }
        }
    }

    /// Input step: host capture channel c → bus channel c; missing host channels give silence.
    @inline(__always)
    static func copyHostInputs(_ core: UnsafeMutablePointer<RenderCore>, into bus: BusRef, frames: Int) {
        let offset = core.pointee.hostOffset
        for c in 0..<bus.channelCount {
            if c < core.pointee.hostInputCount, let input = core.pointee.hostInputs?[c] {
                MixKernel.copy(input + offset, to: bus.channel(c), count: frames)
            } else {
                MixKernel.clear(bus.channel(c), count: frames)
            }
        }
    }

    /// Output step, before the bus leaves: the audio session's gain, glided (nothing when settled at 1).
    @inline(__always)
    static func applySessionGain(_ core: UnsafeMutablePointer<RenderCore>, to bus: BusRef, frames: Int) {
        let ramp = core.pointee.sessionGain
        if !ramp.isRamping && ramp.value == 1 { return }
        for c in 0..<bus.channelCount {
            var gain = ramp
            MixKernel.scale(bus.channel(c), count: frames, gain: &gain)
        }
        core.pointee.sessionGain.advance(frames: frames)
    }

    /// Output step: the output node's bus → host playback channels (channel i → port i; ports beyond the
    /// bus get silence).
    @inline(__always)
    static func writeHostOutputs(_ core: UnsafeMutablePointer<RenderCore>, from bus: BusRef, frames: Int) {
        let offset = core.pointee.hostOffset
        for c in 0..<core.pointee.hostOutputCount {
            guard let out = core.pointee.hostOutputs?[c] else { continue }
            if c < bus.channelCount {
                MixKernel.copy(bus.channel(c), to: out + offset, count: frames)
            } else {
                MixKernel.clear(out + offset, count: frames)
            }
        }
    }

    /// Effect step of an exposed effect: adds the host's insert input channels (at the current offset)
    /// to the effect's input bus. Channels without a port add nothing.
    @inline(__always)
    static func addInsertInputs(
        _ core: UnsafeMutablePointer<RenderCore>, _ slot: InsertSlot, into bus: BusRef,
        frames: Int
    ) {
        let io = core.pointee.hostInserts
        guard let inputs = io.inputs else { return }
        let offset = core.pointee.hostOffset
        for c in 0..<min(slot.channelCount, bus.channelCount) {
            let index = slot.base &+ c
            guard index < io.channelCount, let source = inputs[index] else { continue }
            let destination = bus.channel(c)
            for i in 0..<frames { destination[i] += source[offset &+ i] }
        }
    }

    /// Player step: other-audio ducking. The player's gain glides toward `target` over at most 50 ms at
    /// 48 kHz (full scale); nothing is touched while both are 1.
    @inline(__always)
    static func duck(_ player: UnsafeMutablePointer<PlayerState>, _ bus: BusRef, target: Float, frames: Int) {
        let start = player.pointee.duckGain
        if start == 1 && target == 1 { return }
        let step: Float = 1.0 / 2_400
        var gain = start
        for c in 0..<bus.channelCount {
            let channel = bus.channel(c)
            gain = start
            for i in 0..<frames {
                gain = gain < target ? min(target, gain + step) : max(target, gain - step)
                channel[i] *= gain
            }
        }
        if bus.channelCount == 0 {
            gain =
                start < target ? min(target, start + step * Float(frames)) : max(target, start - step * Float(frames))
        }
        player.pointee.duckGain = gain
    }

    /// Voice-processor step: sums the microphone and reference inputs at unity, adds the host ports
    /// (microphone at the slot's first channels, reference after them), processes, and writes the
    /// output ports. Returns a change of near-end activity while muted, to report.
    @inline(__always)
    static func processVoice(_ v: VoiceProcessorStep, _ core: UnsafeMutablePointer<RenderCore>, frames: Int) -> Bool? {
        if !v.micIsFilled {
            MixerKernel.mix(v.micInputs, into: v.mic, outputVolume: &v.unity.pointee.outputVolume, frames: frames)
        }
        MixerKernel.mix(
            v.referenceInputs, into: v.reference, outputVolume: &v.unity.pointee.outputVolume, frames: frames)
        // The slot spans the microphone's channels, then the reference's.
        var micSlot = v.slot
        micSlot.channelCount = v.stage.pointee.micChannels
        var referenceSlot = v.slot
        referenceSlot.base = v.slot.base &+ micSlot.channelCount
        referenceSlot.channelCount = v.stage.pointee.referenceChannels
        if v.slot.base >= 0 {
            addInsertInputs(core, micSlot, into: v.mic, frames: frames)
            addInsertInputs(core, referenceSlot, into: v.reference, frames: frames)
        }
        let change = processVoiceFrames(v, frames: frames)
        if v.slot.base >= 0 { writeInsertOutputs(core, micSlot, from: v.output, frames: frames) }
        return change
    }

    /// Effect step of an exposed effect: copies its output bus to the host's insert output channels.
    @inline(__always)
    static func writeInsertOutputs(
        _ core: UnsafeMutablePointer<RenderCore>, _ slot: InsertSlot, from bus: BusRef,
        frames: Int
    ) {
        let io = core.pointee.hostInserts
        guard let outputs = io.outputs else { return }
        let offset = core.pointee.hostOffset
        for c in 0..<min(slot.channelCount, bus.channelCount) {
            let index = slot.base &+ c
            guard index < io.channelCount, let destination = outputs[index] else { continue }
            MixKernel.copy(bus.channel(c), to: destination + offset, count: frames)
        }
    }

    /// Meter step: one record per sub-block, [frames, peak per channel…, sum of squares per channel…];
    /// dropped (never waited for) when the ring is full.
    @inline(__always)
    static func pushMeter(_ meter: UnsafeMutablePointer<TapState>, from bus: BusRef, frames: Int) {
        let channels = min(bus.channelCount, (meter.pointee.channelCount &- 1) / 2)
        let record = meter.pointee.scratch
        let width = meter.pointee.channelCount
        record[0] = Float(frames)
        for c in 0..<(width &- 1) / 2 {
            var peak: Float = 0
            var sum: Float = 0
            if c < channels {
                let samples = bus.channel(c)
                for i in 0..<frames {
                    let v = samples[i]
                    peak = max(peak, abs(v))
                    sum += v * v
                }
            }
            record[1 &+ c] = peak
            record[1 &+ (width &- 1) / 2 &+ c] = sum
        }
        meter.pointee.ring._withUnsafeGuaranteedRef { ring in
            if ring.samples.capacity &- ring.samples.count >= width {
                _ = ring.samples.push(contentsOf: UnsafeBufferPointer(start: record, count: width))
            }
        }
    }

    /// Tap step: interleaves the bus into the tap's ring, or counts the frames as dropped when full.
    @inline(__always)
    static func pushTap(_ tap: UnsafeMutablePointer<TapState>, from bus: BusRef, frames: Int) {
        let channels = tap.pointee.channelCount
        let scratch = tap.pointee.scratch
        for f in 0..<frames {
            for c in 0..<channels {
                scratch[f &* channels &+ c] = c < bus.channelCount ? bus.channel(c)[f] : 0
            }
        }
        tap.pointee.ring._withUnsafeGuaranteedRef { ring in
            let total = frames &* channels
            if ring.samples.capacity &- ring.samples.count < total {
                // Relaxed: a statistic.
                ring.droppedFrames.wrappingAdd(frames, ordering: .relaxed)
            } else {
                _ = ring.samples.push(contentsOf: UnsafeBufferPointer(start: scratch, count: total))
            }
        }
    }
}

extension TimedCommand {
    /// A follow-up the render thread schedules itself (defined here so the real-time checks see its body).
    @inline(__always)
    init(renderTime: Int64, _ command: Command) {
        time = renderTime
        self.command = command
    }
}

extension Command {
    /// The state this command writes, for purging.
    var target: UnsafeMutableRawPointer? {
        switch self {
        case .setMixing(let p, _, _, _, _): return UnsafeMutableRawPointer(p)
        case .setOutputVolume(let p, _, _): return UnsafeMutableRawPointer(p)
        case .setFade(let p, _, _): return UnsafeMutableRawPointer(p)
        case .playerEnqueue(let p, _, _), .playerSetLooping(let p, _): return UnsafeMutableRawPointer(p)
        case .playerPlay(let p), .playerPause(let p), .playerStop(let p), .playerFadeOut(let p, _, _),
            .playerFinishCurrent(let p, _):
            return UnsafeMutableRawPointer(p)
        case .effectParameter(let e, _, _), .effectBypass(let e, _), .effectReset(let e):
            switch e {
            case .reverb(let p): return UnsafeMutableRawPointer(p)
            case .delay(let p): return UnsafeMutableRawPointer(p)
            case .distortion(let p): return UnsafeMutableRawPointer(p)
            case .eq(let p): return UnsafeMutableRawPointer(p)
            case .timePitch(let p): return UnsafeMutableRawPointer(p)
            case .varispeed(let p): return UnsafeMutableRawPointer(p)
            }
        case .spatialVoice(let v, _), .spatialConvolver(let v, _), .spatialBed(let v, _):
            return UnsafeMutableRawPointer(v)
        case .environmentMix(let e, _, _, _, _), .environmentReverbPreset(let e, _), .environmentFilter(let e, _, _):
            return UnsafeMutableRawPointer(e)
        case .voiceSetting(let s, _, _), .voiceDuckLevel(let s, _): return UnsafeMutableRawPointer(s)
        case .purge, .takeProgram, .sessionGain: return nil
        }
    }

    /// True when the command writes `pointer`'s state or hands it to a voice (a convolver or a bed).
    @inline(__always)
    func references(_ pointer: UnsafeMutableRawPointer) -> Bool {
        if target == pointer { return true }
        switch self {
        case .spatialConvolver(_, let convolver?): return UnsafeMutableRawPointer(convolver) == pointer
        case .spatialBed(_, let bed?): return UnsafeMutableRawPointer(bed) == pointer
        case .playerFadeOut(_, let mixing, _): return UnsafeMutableRawPointer(mixing) == pointer
        default: return false
        }
    }
}

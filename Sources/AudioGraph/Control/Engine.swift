// Control side. The engine's API: one serial owner of the graph model, publishing compiled programs
// and commands to the render thread.
// Thread contract: every public method may be called from any thread; calls are serialized by `lock`
// (a batch holds it throughout).
// Handlers (taps, onEvent) run on the thread that calls `poll()`, never under the lock.
import AudioDSP
import Locking

/// A graph of nodes rendered by a `RenderEngine` (AVAudioEngine's model, driven by names).
///
/// Edits (attach, connect, set, play…) are legal while audio runs: they recompile and publish a new
/// program or enqueue commands, and never block the render thread. Memory the render thread may
/// still see is released only in `poll()`, once the render thread has provably moved past it.
public final class Engine: @unchecked Sendable {
    public let renderEngine: RenderEngine
    /// Recursive: a batch holds it while its body calls the public methods.
    let lock = Lock(recursive: true)
    var state: ControlState
    /// Loads an audio file into a buffer at the engine rate (for the player's `file` parameter).
    /// Set by the embedding layer; nil means file playback is unavailable.
    public let fileLoader: (@Sendable (_ path: String, _ sampleRate: Double) throws -> SampleBuffer)?
    /// Opens audio files for streaming at the engine rate (nil: files are always preloaded).
    public let streamOpener: StreamOpener?
    /// Whole files longer than this (seconds) are streamed instead of preloaded.
    public let streamingThresholdSeconds: Double
    /// The disk thread that fills streamed files' rings (made by `streamOpener`).
    let diskThread: (any DiskThread)?
    /// The streams handed to the disk thread and not yet released, for polls and reports (any thread).
    let liveStreams = Locked<[ObjectIdentifier: StreamHandle]>([:])
    /// Where HRTF sets come from (set by the embedding layer; nil: environments have no HRTF sets and
    /// render HRTF sources with the spherical head).
    public let hrtfSetSource: HRTFSetSource?
    /// Loads HRTF sets on a worker for live engines (`setLoadsHRTFSetsInBackground`).
    let hrtfLoader = HRTFLoadWorker()
    /// Time-pitch kernels built ahead for live engines (`keepTimePitchSpares`).
    let timePitchSpares = TimePitchSpares()
    private let eventHandler = Locked<Callback<EngineEvent>?>(nil)
    let insertObserver = Locked<Callback<HostInsertLayout>?>(nil)

    /// Creates an engine with the implicit `main` mixer connected to the `output` node.
    public init(configuration: EngineConfiguration = EngineConfiguration(),
                fileLoader: (@Sendable (String, Double) throws -> SampleBuffer)? = nil,
                streamOpener: StreamOpener? = nil,
                streamingThresholdSeconds: Double = 20,
                hrtfSets: HRTFSetSource? = nil) {
        self.streamOpener = streamOpener
        diskThread = streamOpener?.makeDiskThread()
        hrtfSetSource = hrtfSets
        self.streamingThresholdSeconds = streamingThresholdSeconds
        var config = configuration
        config.blockFrames = min(max(1, config.blockFrames), 4096)
        config.outputChannelCount = min(max(1, config.outputChannelCount), 64)
        config.inputChannelCount = min(max(0, config.inputChannelCount), 64)
        renderEngine = RenderEngine(maxBlockFrames: config.blockFrames)
        state = ControlState(configuration: config)
        self.fileLoader = fileLoader
        let output = state.makeRecord(name: "output", kind: .output)
        output[.channels] = .int(config.outputChannelCount)
        let main = state.makeRecord(name: "main", kind: .mixer)
        main.outputChannelCount = config.outputChannelCount
        main[.channels] = .int(config.outputChannelCount)
        state.nodes["output"] = output
        state.nodes["main"] = main
        let mainToOutput = Connection(source: "main", destination: "output", destinationBus: 0)
        state.connections = [mainToOutput]
        state.fades[mainToOutput] = EdgeFade(risingOver: 0)
        republish()
    }

    /// The configuration in force.
    public var configuration: EngineConfiguration { lock.withLock { _ in state.configuration } }

    /// Receives events from `poll()`.
    public func setEventHandler(_ handler: (@Sendable (EngineEvent) -> Void)?) {
        eventHandler.withLock { $0 = handler.map { Callback($0) } }
    }

    // MARK: Publishing (callers hold the lock)

    /// Compiles the current model and offers it to the render thread.
    func republish() {
        state.generation += 1
        var nodes = state.nodes
        for (key, dying) in state.dyingNodes { nodes[key] = dying.item }
        let program = GraphCompiler.compile(.init(
            nodes: nodes, connections: state.connections + state.retiringEdges.map(\.item.connection),
            fades: state.fades.merging(state.retiringEdges.map { ($0.item.connection, $0.item.fade) }) { a, _ in a },
            taps: Array(state.taps.values), meters: Array(state.meters.values), inserts: state.inserts,
            voices: state.spatialVoices.mapValues(\.voice),
            maxBlockFrames: state.configuration.blockFrames,
            generation: state.generation))
        let previous = state.lastPublished
        if renderEngine.publish(program) != nil {
            // The render thread never took `previous`: nothing can reference it.
            _ = previous
        } else if let previous {
            state.graveyard.bury(previous, generation: program.generation, commandCount: 0)
        }
        state.lastPublished = program
        // Which players this program renders: a player it leaves out does not advance its timeline. Kept
        // until an install reports a later generation; bounded for an engine that never renders (the
        // render thread installs the newest program, so only the oldest can go unclaimed).
        state.publishedPlayers[program.generation] = Set(program.activeNodeNames.compactMap { name in
            nodes[name].flatMap { $0.player != nil ? $0.id : nil }
        })
        if state.publishedPlayers.count > 1_024, let oldest = state.publishedPlayers.keys.min() {
            state.publishedPlayers[oldest] = nil
        }
        // Objects the previous program referenced and the new one does not.
        for object in state.buryAfterPublish { bury(object) }
        state.buryAfterPublish = []
        // The render thread takes the program when it reaches this command, so a program and the commands
        // sent after it in one batch take effect in the same cycle.
        if state.batchDepth > 0 {
            state.batchNeedsProgram = true
        } else if renderEngine.commands.consumedCount >= state.lastTakeProgramCount {
            // Outside batches one pending take is enough: it takes whatever program is newest.
            if renderEngine.commands.push(TimedCommand(.takeProgram)) {
                state.lastTakeProgramCount = renderEngine.commands.producedCount
            }
        }
    }

    /// Enqueues commands; all or none. Inside a batch they are held until the batch ends. Throws
    /// `.busy` when the queue cannot take them.
    func send(_ commands: [TimedCommand]) throws(EngineError) {
        if state.batchDepth > 0 {
            state.batchCommands += commands
            return
        }
        try push(commands)
    }

    /// `send` for one command, without building an array.
    func send(_ command: TimedCommand) throws(EngineError) {
        if state.batchDepth > 0 {
            state.batchCommands.append(command)
            return
        }
        guard renderEngine.commands.push(command) else {
            throw EngineError(.busy, "the render thread is not keeping up (command queue full); try again")
        }
    }

    /// Pushes commands with one release, so the render thread sees all of them or none.
    private func push(_ commands: [TimedCommand]) throws(EngineError) {
        let queue = renderEngine.commands
        guard queue.capacity - queue.count >= commands.count else {
            throw EngineError(.busy, "the render thread is not keeping up (command queue full); try again")
        }
        _ = commands.withUnsafeBufferPointer { queue.push(contentsOf: $0) }
    }

    /// The command count the queue will have reached once everything sent so far (including a pending
    /// batch) is pushed: what deferred releases wait for.
    var sentCommandCount: Int {
        renderEngine.commands.producedCount + (state.batchDepth > 0 ? state.batchCommands.count + 1 : 0)
    }

    /// Releases `object` once every command sent so far has settled (applied, or dropped by a purge)
    /// and the render thread runs the newest program. Timed commands still waiting for their frame that
    /// point into the object's render state are purged first, so they neither apply to a node that is
    /// gone nor hold its memory until their frame; a purge the queue cannot take changes nothing about
    /// safety (the graveyard waits for those commands instead).
    func bury(_ object: AnyObject) {
        if let owner = object as? CommandTargetOwner {
            for target in owner.commandTargets { try? send(TimedCommand(.purge(target))) }
        }
        state.graveyard.bury(object, generation: state.generation, commandCount: sentCommandCount)
    }

    /// Makes every change inside `body` reach the render thread together, so they take effect in the
    /// same render cycle (an OSC bundle). Nested batches join the outer one. If `body` throws, the
    /// changes it already made still apply.
    ///
    /// The batch holds the engine's (recursive) lock from start to commit, so it is also exclusive:
    /// another thread's edits wait for it instead of joining it, and another thread's batch does not
    /// interleave with it (a patch loaded on the OSC worker and a bundle arriving meanwhile each stay
    /// whole, and the bundle's commands are not held back until the patch has loaded).
    public func batch<T>(_ body: () throws(EngineError) -> T) throws(EngineError) -> T {
        try lock.withLock { _ throws(EngineError) -> T in try batchLocked(body) }
    }

    /// `batch` for code already holding the lock.
    func batchLocked<T>(_ body: () throws(EngineError) -> T) throws(EngineError) -> T {
        state.batchDepth += 1
        let result: Result<T, EngineError>
        do throws(EngineError) { result = .success(try body()) } catch { result = .failure(error) }
        state.batchDepth -= 1
        try commitBatchIfOutermost()
        return try result.get()
    }

    /// Lock held. When no batch is open any more, pushes what the batches held (a program first).
    private func commitBatchIfOutermost() throws(EngineError) {
        guard state.batchDepth == 0 else { return }
        let takes = state.batchNeedsProgram
        if takes { state.batchCommands.insert(TimedCommand(.takeProgram), at: 0) }
        state.batchNeedsProgram = false
        // The held commands' storage is kept for the next batch (frame-rate moves batch every block).
        defer { state.batchCommands.removeAll(keepingCapacity: true) }
        guard !state.batchCommands.isEmpty else { return }
        let before = renderEngine.commands.producedCount
        try push(state.batchCommands)
        if takes { state.lastTakeProgramCount = before + 1 }
    }

    // MARK: Housekeeping

    /// Control side. Delivers render events and tap blocks, and frees memory the render thread has
    /// left behind. Call every 10–50 ms from one thread (hosts run a timer; the offline renderer calls
    /// it between blocks).
    public func poll() {
        var events: [EngineEvent] = []
        var deliveries: [(@Sendable (TapBuffer) -> Void, TapBuffer)] = []
        lock.withLock { _ in
            while let event = renderEngine.events.pop() {
                handlePlayerEvent(event, into: &events)
            }
            deliverPlayedBack(into: &events)
            events += state.pendingEvents
            state.pendingEvents = []
            reportStreams(into: &events)
            for meter in state.meters.values { meter.drain() }
            for tap in state.taps.values {
                let (blocks, dropped) = tap.drain()
                for b in blocks { deliveries.append((tap.handler, b)) }
                if dropped > 0 { events.append(.tapOverflow(node: tap.node, frames: dropped)) }
            }
            adoptLoadedHRTFSets()
            finishRetirements()
            pruneVoices()
            state.graveyard.collect(
                installedGeneration: renderEngine.installedGeneration,
                settledCommands: renderEngine.settledCommandCount)
        }
        for (handler, block) in deliveries { handler(block) }
        if !events.isEmpty, let handler = eventHandler.withLock({ $0 })?.call {
            for e in events { handler(e) }
        }
    }

    deinit {
        diskThread?.stop()
        timePitchSpares.close()
    }

    /// Objects waiting for the render thread to let go of them (tests use it to check for leaks).
    public var pendingReleaseCount: Int { lock.withLock { _ in state.graveyard.count } }

    /// Engine sample time of the next frame the render thread will produce (approximate while running).
    public var sampleTime: Int64 { Int64(renderEngine.renderedFrames) }

    /// The host's sample rate changed: later ramps and conversions use `rate`. Buffers already loaded
    /// keep their samples; reloading them is the embedding layer's job.
    public func setSampleRate(_ rate: Double) {
        lock.withLock { _ in
            if state.configuration.sampleRate != rate {
                // HRTF sets are resampled to the engine rate when loaded.
                state.hrtfSets = [:]
                state.hrtfFailures = [:]
            }
            state.configuration.sampleRate = rate
        }
    }
}

/// The engine's model. Accessed only under `Engine.lock`.
struct ControlState {
    var configuration: EngineConfiguration
    var nodes: [String: NodeRecord] = [:]
    var nodesByID: [Int32: NodeRecord] = [:]
    var connections: [Connection] = []
    var taps: [Int: TapRecord] = [:]
    /// Host output latency in frames, added to `dataPlayedBack` completions.
    var outputLatencyFrames = 0
    /// `dataPlayedBack` completions waiting for their frame to reach the output.
    var pendingPlayedBack: [(node: String, id: Int32, time: Int64)] = []
    /// The sound pool (created by the first `playSound`).
    var soundVoices: [String] = []
    /// The node number of the `sounds` mixer when the sound pool made it.
    var soundPoolMixerID: Int32?
    var soundVoiceStarts: [String: Int] = [:]
    /// Voices whose stolen sound is fading out (busy, but not counted as sounding).
    var soundVoicesFading: Set<String> = []
    var soundItems: [SoundItemKey: Int] = [:]
    var nextSoundID = 1
    /// Underrun frames already reported, per stream.
    var reportedUnderruns: [ObjectIdentifier: Int] = [:]
    var reportedStreamFailures: Set<ObjectIdentifier> = []
    /// Objects removed from the model that the installed program may still reference: buried with the
    /// generation of the next published program.
    var buryAfterPublish: [AnyObject] = []
    /// Events raised outside the render thread (an audioplayer's decode error), delivered by `poll()`.
    var pendingEvents: [EngineEvent] = []
    /// Metered nodes by name.
    var meters: [String: MeterRecord] = [:]
    /// HRTF sets by file and quality, shared by every environment (loaded once per engine).
    var hrtfSets: [HRTFSetKey: any HRIRSet] = [:]
    /// Background loads under way, the environments waiting for each, and loads that failed.
    var loadsHRTFSetsInBackground = false
    var hrtfLoading: Set<HRTFSetKey> = []
    var hrtfWaiting: [HRTFSetKey: Set<Int32>] = [:]
    var hrtfFailures: [HRTFSetKey: HRTFLoadError] = [:]
    /// `hrtf` set on live environments, by node id, waiting for their sets to load.
    var hrtfChanges: [Int32: PendingHRTFChange] = [:]
    /// One voice per connection into an environment.
    var spatialVoices: [VoiceKey: SpatialVoiceRecord] = [:]
    /// `moveSources`'s list of the records it moves (kept, so a move at frame rate allocates nothing).
    var moveScratch: [NodeRecord] = []
    /// The program generation `pruneVoices` last looked at.
    var voicesPrunedAtGeneration = -1
    /// Effects exposed as host ports, by node name, and the layout version.
    var inserts: [String: HostInsert] = [:]
    var insertLayoutVersion = 0
    /// The fade of every live connection.
    var fades: [Connection: EdgeFade] = [:]
    /// Connections fading out (endpoints may name retiring nodes by their private keys).
    var retiringEdges: [Retiring<(connection: Connection, fade: EdgeFade)>] = []
    /// Detached nodes still sounding while their connections fade out, by private key.
    var dyingNodes: [String: Retiring<NodeRecord>] = [:]
    var buffers: [String: SampleBuffer] = [:]
    var generation = 0
    var lastPublished: RenderProgram?
    /// The players each published (not yet installed) program renders, by generation.
    var publishedPlayers: [Int: Set<Int32>] = [:]
    /// The players the installed program renders.
    var renderedPlayers: Set<Int32> = []
    var graveyard = Graveyard()
    var nextNodeID: Int32 = 1
    var nextTapID = 1
    /// Open `Engine.batch` calls, the commands they hold, and whether a program waits to be taken.
    var batchDepth = 0
    var batchCommands: [TimedCommand] = []
    var batchNeedsProgram = false
    /// Queue position just after the last `.takeProgram` pushed.
    var lastTakeProgramCount = 0

    init(configuration: EngineConfiguration) { self.configuration = configuration }

    mutating func makeRecord(name: String, kind: NodeKind) -> NodeRecord {
        let channels: Int
        switch kind {
        case .output: channels = configuration.outputChannelCount
        case .input: channels = max(1, configuration.inputChannelCount)
        case .mixer, .player, .audioplayer, .reverb, .delay, .distortion, .eq, .timepitch, .varispeed, .environment: channels = 2
        }
        let record = NodeRecord(name: name, kind: kind, id: nextNodeID, outputChannelCount: channels)
        if kind == .input { record[.channels] = .int(channels) }
        nextNodeID += 1
        nodesByID[record.id] = record
        return record
    }
}

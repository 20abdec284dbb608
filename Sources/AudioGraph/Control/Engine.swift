// Control side. The engine's API: a thin front over `EngineCore`, publishing compiled programs and
// commands to the render thread.
// Thread contract: every public method may be called from any thread; each takes the engine's lock
// (`control`) for its work on the model, and a batch holds it throughout. File reads, stream opening and
// handlers (taps, onEvent, the insert observer) run outside it.
import AudioDSP
import Locking

/// A graph of nodes rendered by a `RenderEngine` (AVAudioEngine's model, driven by names).
///
/// Edits (attach, connect, set, play…) are legal while audio runs: they recompile and publish a new
/// program or enqueue commands, and never block the render thread. Memory the render thread may
/// still see is released only in `poll()`, once the render thread has provably moved past it.
public final class Engine: Sendable {
    public let renderEngine: RenderEngine
    /// The model and the subsystems that change it. Reentrant: a batch holds it while its body calls the
    /// public methods.
    let control: ReentrantLocked<EngineCore>
    /// Loads an audio file into a buffer at the engine rate (for the player's `file` parameter).
    /// Set by the embedding layer; nil means file playback is unavailable.
    public let fileLoader: (@Sendable (_ path: String, _ sampleRate: Double) throws -> SampleBuffer)?
    /// Opens audio files for streaming at the engine rate (nil: files are always preloaded).
    public let streamOpener: StreamOpener?
    /// Whole files longer than this (seconds) are streamed instead of preloaded.
    public let streamingThresholdSeconds: Double
    /// Where HRTF sets come from (set by the embedding layer; nil: environments have no HRTF sets and
    /// render HRTF sources with the spherical head).
    public let hrtfSetSource: HRTFSetSource?
    let services: Services
    private let eventHandler = Locked<Callback<EngineEvent>?>(nil)
    let insertObserver = Locked<Callback<HostInsertLayout>?>(nil)

    /// What the engine calls out to, shared by the front and the core.
    struct Services: Sendable {
        let fileLoader: (@Sendable (_ path: String, _ sampleRate: Double) throws -> SampleBuffer)?
        let streamOpener: StreamOpener?
        let streamingThresholdSeconds: Double
        /// The disk thread that fills streamed files' rings (made by `streamOpener`).
        let diskThread: (any DiskThread)?
        /// The streams handed to the disk thread and not yet released, for polls and reports (any thread).
        let liveStreams = Locked<[ObjectIdentifier: StreamHandle]>([:])
        let hrtfSetSource: HRTFSetSource?
        /// Loads HRTF sets on a worker for live engines (`setLoadsHRTFSetsInBackground`).
        let hrtfLoader = HRTFLoadWorker()
        /// Time-pitch kernels built ahead for live engines (`keepTimePitchSpares`).
        let timePitchSpares = TimePitchSpares()
    }

    /// Creates an engine with the implicit `main` mixer connected to the `output` node.
    public init(
        configuration: EngineConfiguration = EngineConfiguration(),
        fileLoader: (@Sendable (String, Double) throws -> SampleBuffer)? = nil,
        streamOpener: StreamOpener? = nil,
        streamingThresholdSeconds: Double = 20,
        hrtfSets: HRTFSetSource? = nil
    ) {
        self.fileLoader = fileLoader
        self.streamOpener = streamOpener
        self.streamingThresholdSeconds = streamingThresholdSeconds
        hrtfSetSource = hrtfSets
        services = Services(
            fileLoader: fileLoader, streamOpener: streamOpener,
            streamingThresholdSeconds: streamingThresholdSeconds,
            diskThread: streamOpener?.makeDiskThread(), hrtfSetSource: hrtfSets)
        var config = configuration
        config.blockFrames = min(max(1, config.blockFrames), 4096)
        config.outputChannelCount = min(max(1, config.outputChannelCount), 64)
        config.inputChannelCount = min(max(0, config.inputChannelCount), 64)
        let renderEngine = RenderEngine(maxBlockFrames: config.blockFrames)
        self.renderEngine = renderEngine
        control = ReentrantLocked(EngineCore(configuration: config, renderEngine: renderEngine, services: services))
    }

    deinit {
        services.diskThread?.stop()
        services.timePitchSpares.close()
    }

    /// The configuration in force.
    public var configuration: EngineConfiguration { control.withLock { $0.configuration } }

    /// Receives events from `poll()`.
    public func setEventHandler(_ handler: (@Sendable (EngineEvent) -> Void)?) {
        eventHandler.withLock { $0 = handler.map { Callback($0) } }
    }

    /// Makes every change inside `body` reach the render thread together, so they take effect in the
    /// same render cycle (an OSC bundle). Nested batches join the outer one. If `body` throws, the
    /// changes it already made still apply.
    ///
    /// The batch holds the engine's (reentrant) lock from start to commit, so it is also exclusive:
    /// another thread's edits wait for it instead of joining it, and another thread's batch does not
    /// interleave with it (a patch loaded on the OSC worker and a bundle arriving meanwhile each stay
    /// whole, and the bundle's commands are not held back until the patch has loaded).
    public func batch<T>(_ body: () throws(EngineError) -> T) throws(EngineError) -> T {
        try control.withLock { core throws(EngineError) -> T in try core.batch(body) }
    }

    // MARK: Housekeeping

    /// Control side. Delivers render events and tap blocks, and frees memory the render thread has
    /// left behind. Call every 10–50 ms from one thread (hosts run a timer; the offline renderer calls
    /// it between blocks).
    public func poll() {
        var events: [EngineEvent] = []
        var deliveries: [(@Sendable (TapBuffer) -> Void, TapBuffer)] = []
        control.withLock { core in core.collect(events: &events, deliveries: &deliveries) }
        for (handler, block) in deliveries { handler(block) }
        if !events.isEmpty, let handler = eventHandler.withLock({ $0 })?.call {
            for e in events { handler(e) }
        }
    }

    /// Objects waiting for the render thread to let go of them (tests use it to check for leaks).
    public var pendingReleaseCount: Int { control.withLock { $0.pendingReleaseCount } }

    /// Engine sample time of the next frame the render thread will produce (approximate while running).
    public var sampleTime: Int64 { Int64(renderEngine.renderedFrames) }

    /// The host's sample rate changed: later ramps and conversions use `rate`, and every effect, time
    /// effect, audioplayer rate stage, voice processor and environment (with every voice into it and its
    /// HRTF sets) is made again at it with its node's values.
    /// Buffers already loaded keep their samples; reloading them is the embedding layer's job. Returns
    /// a problem per node that cannot follow.
    @discardableResult
    public func setSampleRate(_ rate: Double) -> [String] {
        let problems = control.withLock { $0.setSampleRate(rate) }
        notifyInsertObserver()
        return problems
    }
}

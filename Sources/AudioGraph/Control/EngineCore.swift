// Control side. The engine's control state and the code that runs with it: reachable only through
// `Engine.control`, that is, only while the engine's lock is held.
import AudioDSP
import Locking

/// Everything the control side changes, with the services it calls while changing it. An `Engine` owns
/// one inside its `ReentrantLocked`: no other path reaches it, so every method here runs under the
/// engine's lock without saying so, and the compiler refuses code that would keep it past the lock (it is
/// not `Sendable`). Its extensions are the subsystems: graph (`+Graph`, `+Fades`, `+TimeEffects`),
/// parameters (`+Parameters`, `+AudioPlayerParameters`), players and scheduling (`+Players`,
/// `+Schedule`, `+AudioPlayer`), streaming (`+Streaming`), sounds (`+Sounds`), taps and meters (`+Taps`,
/// `Meter.swift`), spatial (`+Environment`, `HRTFSets.swift`), inserts (`+Inserts`) and publishing
/// (`+Publishing`), each over its part of `ControlState`.
final class EngineCore {
    let renderEngine: RenderEngine
    var state: ControlState
    /// The open batches (`+Publishing`). Read for every command sent, so kept out of `state` and not
    /// checked for exclusivity: only `+Publishing` reaches it, never across a call that could reach it
    /// again.
    @exclusivity(unchecked) var openBatch = OpenBatch()
    let fileLoader: (@Sendable (_ path: String, _ sampleRate: Double) throws -> SampleBuffer)?
    let streamOpener: StreamOpener?
    let streamingThresholdSeconds: Double
    let diskThread: (any DiskThread)?
    let liveStreams: Locked<[ObjectIdentifier: StreamHandle]>
    let hrtfSetSource: HRTFSetSource?
    let hrtfLoader: HRTFLoadWorker
    let timePitchSpares: TimePitchSpares

    /// Makes the implicit `main` mixer connected to the `output` node and publishes the first program.
    init(configuration: EngineConfiguration, renderEngine: RenderEngine, services: Engine.Services) {
        self.renderEngine = renderEngine
        state = ControlState(configuration: configuration)
        fileLoader = services.fileLoader
        streamOpener = services.streamOpener
        streamingThresholdSeconds = services.streamingThresholdSeconds
        diskThread = services.diskThread
        liveStreams = services.liveStreams
        hrtfSetSource = services.hrtfSetSource
        hrtfLoader = services.hrtfLoader
        timePitchSpares = services.timePitchSpares
        let output = state.makeRecord(name: "output", kind: .output)
        output[.channels] = .int(configuration.outputChannelCount)
        let main = state.makeRecord(name: "main", kind: .mixer)
        main.outputChannelCount = configuration.outputChannelCount
        main[.channels] = .int(configuration.outputChannelCount)
        state.graph.nodes["output"] = output
        state.graph.nodes["main"] = main
        let mainToOutput = Connection(source: "main", destination: "output", destinationBus: 0)
        state.graph.connections = [mainToOutput]
        state.graph.fades[mainToOutput] = EdgeFade(risingOver: 0)
        republish()
    }

    /// The configuration in force.
    var configuration: EngineConfiguration { state.configuration }

    /// Objects waiting for the render thread to let go of them.
    var pendingReleaseCount: Int { state.publishing.graveyard.count }

    /// Poll's work under the lock: render events, played-back completions, stream reports, meters and
    /// taps drained, HRTF sets adopted, retirements finished and memory the render thread has left
    /// behind freed. Tap blocks and events are returned for delivery outside the lock.
    func collect(events: inout [EngineEvent], deliveries: inout [(@Sendable (TapBuffer) -> Void, TapBuffer)]) {
        while let event = renderEngine.events.pop() {
            handlePlayerEvent(event, into: &events)
        }
        deliverPlayedBack(into: &events)
        events += state.publishing.pendingEvents
        state.publishing.pendingEvents = []
        reportStreams(into: &events)
        for meter in state.monitors.meters.values { meter.drain() }
        for tap in state.monitors.taps.values {
            let (blocks, dropped) = tap.drain()
            for b in blocks { deliveries.append((tap.handler, b)) }
            if dropped > 0 { events.append(.tapOverflow(node: tap.node, frames: dropped)) }
        }
        adoptLoadedHRTFSets()
        finishRetirements()
        pruneVoices()
        state.publishing.graveyard.collect(
            installedGeneration: renderEngine.installedGeneration,
            settledCommands: renderEngine.settledCommandCount)
    }
}

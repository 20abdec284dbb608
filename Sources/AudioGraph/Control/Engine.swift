// Control side. The engine's API: one serial owner of the graph model, publishing compiled programs
// and commands to the render thread.
// Thread contract: every public method may be called from any thread; calls are serialized by `lock`.
// Handlers (taps, onEvent) run on the thread that calls `poll()`, never under the lock.
import AudioDSP
import Synchronization

/// A graph of nodes rendered by a `RenderEngine` (AVAudioEngine's model, driven by names).
///
/// Edits (attach, connect, set, play…) are legal while audio runs: they recompile and publish a new
/// program or enqueue commands, and never block the render thread. Memory the render thread may
/// still see is released only in `poll()`, once the render thread has provably moved past it.
public final class Engine: @unchecked Sendable {
    public let renderEngine: RenderEngine
    let lock = Mutex<Void>(())
    var state: ControlState
    /// Loads an audio file into a buffer at the engine rate (for the player's `file` parameter).
    /// Set by the embedding layer; nil means file playback is unavailable.
    public let fileLoader: (@Sendable (_ path: String, _ sampleRate: Double) throws -> SampleBuffer)?
    private let eventHandler = Mutex<(@Sendable (EngineEvent) -> Void)?>(nil)

    /// Creates an engine with the implicit `main` mixer connected to the `output` node.
    public init(configuration: EngineConfiguration = EngineConfiguration(),
                fileLoader: (@Sendable (String, Double) throws -> SampleBuffer)? = nil) {
        var config = configuration
        config.blockFrames = min(max(1, config.blockFrames), 4096)
        config.outputChannelCount = min(max(1, config.outputChannelCount), 64)
        config.inputChannelCount = min(max(0, config.inputChannelCount), 64)
        renderEngine = RenderEngine(maxBlockFrames: config.blockFrames)
        state = ControlState(configuration: config)
        self.fileLoader = fileLoader
        let output = state.makeRecord(name: "output", kind: .output)
        output.values["channels"] = .int(config.outputChannelCount)
        let main = state.makeRecord(name: "main", kind: .mixer)
        main.outputChannelCount = config.outputChannelCount
        main.values["channels"] = .int(config.outputChannelCount)
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
        eventHandler.withLock { $0 = handler }
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
            taps: Array(state.taps.values), maxBlockFrames: state.configuration.blockFrames,
            generation: state.generation))
        let previous = state.lastPublished
        if renderEngine.publish(program) != nil {
            // The render thread never took `previous`: nothing can reference it.
            _ = previous
        } else if let previous {
            state.graveyard.bury(previous, generation: program.generation, commandCount: 0)
        }
        state.lastPublished = program
    }

    /// Enqueues commands; all or none. Throws `.busy` when the queue cannot take them.
    func send(_ commands: [TimedCommand]) throws(EngineError) {
        let queue = renderEngine.commands
        guard queue.capacity - queue.count >= commands.count else {
            throw EngineError(.busy, "the render thread is not keeping up (command queue full); try again")
        }
        for c in commands { _ = queue.push(c) }
    }

    /// Releases `object` once every command sent so far has been consumed and the render thread runs
    /// the newest program.
    func bury(_ object: AnyObject) {
        state.graveyard.bury(object, generation: state.generation, commandCount: renderEngine.commands.producedCount)
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
                switch event {
                case .playerFinished(let id, let time):
                    if let node = state.nodesByID[id] {
                        node.values["playing"] = .bool(false)
                        events.append(.playerFinished(node: node.name, sampleTime: time))
                    }
                case .timedCommandOverflow:
                    events.append(.timedCommandOverflow)
                }
            }
            for tap in state.taps.values {
                let (blocks, dropped) = tap.drain()
                for b in blocks { deliveries.append((tap.handler, b)) }
                if dropped > 0 { events.append(.tapOverflow(node: tap.node, frames: dropped)) }
            }
            finishRetirements()
            state.graveyard.collect(
                installedGeneration: renderEngine.installedGeneration,
                consumedCommands: renderEngine.commands.consumedCount)
        }
        for (handler, block) in deliveries { handler(block) }
        if !events.isEmpty, let handler = eventHandler.withLock({ $0 }) {
            for e in events { handler(e) }
        }
    }

    /// Objects waiting for the render thread to let go of them (tests use it to check for leaks).
    public var pendingReleaseCount: Int { lock.withLock { _ in state.graveyard.count } }

    /// Engine sample time of the next frame the render thread will produce (approximate while running).
    public var sampleTime: Int64 { Int64(renderEngine.renderedFrames) }

    /// The host's sample rate changed: later ramps and conversions use `rate`. Buffers already loaded
    /// keep their samples; reloading them is the embedding layer's job.
    public func setSampleRate(_ rate: Double) {
        lock.withLock { _ in state.configuration.sampleRate = rate }
    }
}

/// The engine's model. Accessed only under `Engine.lock`.
struct ControlState {
    var configuration: EngineConfiguration
    var nodes: [String: NodeRecord] = [:]
    var nodesByID: [Int32: NodeRecord] = [:]
    var connections: [Connection] = []
    var taps: [Int: TapRecord] = [:]
    /// The fade of every live connection.
    var fades: [Connection: EdgeFade] = [:]
    /// Connections fading out (endpoints may name retiring nodes by their private keys).
    var retiringEdges: [Retiring<(connection: Connection, fade: EdgeFade)>] = []
    /// Detached nodes still sounding while their connections fade out, by private key.
    var dyingNodes: [String: Retiring<NodeRecord>] = [:]
    var buffers: [String: SampleBuffer] = [:]
    var generation = 0
    var lastPublished: RenderProgram?
    var graveyard = Graveyard()
    var nextNodeID: Int32 = 1
    var nextTapID = 1

    init(configuration: EngineConfiguration) { self.configuration = configuration }

    mutating func makeRecord(name: String, kind: NodeKind) -> NodeRecord {
        let channels: Int
        switch kind {
        case .output: channels = configuration.outputChannelCount
        case .input: channels = max(1, configuration.inputChannelCount)
        case .mixer, .player: channels = 2
        }
        let record = NodeRecord(name: name, kind: kind, id: nextNodeID, outputChannelCount: channels)
        if kind == .input { record.values["channels"] = .int(channels) }
        nextNodeID += 1
        nodesByID[record.id] = record
        return record
    }
}

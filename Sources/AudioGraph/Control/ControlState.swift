// Control side. The engine's model, one part per subsystem. Reached only through `EngineCore`, that is,
// only under the engine's lock.
import AudioDSP

/// The engine's model: the configuration and each subsystem's state.
struct ControlState {
    var configuration: EngineConfiguration
    var graph = GraphModel()
    var publishing = Publishing()
    var players = PlayerTimelines()
    var streams = StreamReports()
    var sounds = SoundPool()
    var monitors = Monitors()
    var spatial = SpatialModel()
    var inserts = InsertTable()
    var session = SessionModel()

    init(configuration: EngineConfiguration) { self.configuration = configuration }

    /// A new node record with the next node number, filed by number (the caller files it by name).
    mutating func makeRecord(name: String, kind: NodeKind) -> NodeRecord {
        let channels: Int
        switch kind {
        case .output: channels = configuration.outputChannelCount
        case .input: channels = max(1, configuration.inputChannelCount)
        case .mixer, .player, .audioplayer, .reverb, .delay, .distortion, .eq, .timepitch, .varispeed, .environment:
            channels = 2
        case .voiceprocessor: channels = 1
        }
        let record = NodeRecord(name: name, kind: kind, id: graph.nextNodeID, outputChannelCount: channels)
        if kind == .input { record[.channels] = .int(channels) }
        graph.nextNodeID += 1
        graph.nodesByID[record.id] = record
        return record
    }
}

/// Graph: nodes, connections and their fades, and what is still fading out.
struct GraphModel {
    var nodes: [String: NodeRecord] = [:]
    var nodesByID: [Int32: NodeRecord] = [:] {
        didSet { nodesByIDVersion &+= 1 }
    }
    /// Changes whenever `nodesByID` does: what was found in it stays valid until then.
    var nodesByIDVersion = 0
    /// The records `moveSources` last moved, by position in its list of moves, with the node numbers
    /// they were found by: a run that moves the same nodes again (at frame rate) finds them without
    /// searching while `nodesByIDVersion` is still `moveRecordsVersion`. Unretained, as `nodesByID`
    /// holds them until then (kept here, so a new graph model starts without them); kept, so a move at
    /// frame rate allocates nothing.
    var moveRecords: [(id: Int32, record: Unmanaged<NodeRecord>)] = []
    var moveRecordsVersion = -1
    var connections: [Connection] = []
    /// The fade of every live connection.
    var fades: [Connection: EdgeFade] = [:]
    /// Connections fading out (endpoints may name retiring nodes by their private keys).
    var retiringEdges: [Retiring<(connection: Connection, fade: EdgeFade)>] = []
    /// Detached nodes still sounding while their connections fade out, by private key.
    var dyingNodes: [String: Retiring<NodeRecord>] = [:]
    var nextNodeID: Int32 = 1
}

/// Publishing: programs and commands offered to the render thread, batches, and deferred releases.
struct Publishing {
    var generation = 0
    var lastPublished: RenderProgram?
    var graveyard = Graveyard()
    /// Objects removed from the model that the installed program may still reference: buried with the
    /// generation of the next published program.
    var buryAfterPublish: [AnyObject] = []
    /// Events raised outside the render thread (an audioplayer's decode error), delivered by `poll()`.
    var pendingEvents: [EngineEvent] = []
    /// Commands an open batch holds that found no free slot in the queue (after those `OpenBatch` holds
    /// in place), and whether a program waits to be taken.
    var batchCommands: [TimedCommand] = []
    var batchNeedsProgram = false
    /// Queue position just after the last `.takeProgram` pushed.
    var lastTakeProgramCount = 0
}

/// Players and scheduling: the buffer library, and which players' timelines advance.
struct PlayerTimelines {
    var buffers: [String: SampleBuffer] = [:]
    /// Host output latency in frames, added to `dataPlayedBack` completions.
    var outputLatencyFrames = 0
    /// `dataPlayedBack` completions waiting for their frame to reach the output.
    var pendingPlayedBack: [(node: String, id: Int32, time: Int64)] = []
    /// The players each published (not yet installed) program renders, by generation.
    var publishedPlayers: [Int: Set<Int32>] = [:]
    /// The players the installed program renders.
    var renderedPlayers: Set<Int32> = []
}

/// Streaming: what has been reported about each stream.
struct StreamReports {
    /// Underrun frames already reported, per stream.
    var underruns: [ObjectIdentifier: Int] = [:]
    var failures: Set<ObjectIdentifier> = []
}

/// Sounds: the pool of voices that play system sounds.
struct SoundPool {
    /// The pool's voices (created by the first `playSound`).
    var voices: [String] = []
    /// The node number of the `sounds` mixer when the pool made it.
    var mixerID: Int32?
    var voiceStarts: [String: Int] = [:]
    /// Voices whose stolen sound is fading out (busy, but not counted as sounding).
    var fadingVoices: Set<String> = []
    var items: [SoundItemKey: Int] = [:]
    var nextID = 1
}

/// Taps and meters.
struct Monitors {
    var taps: [Int: TapRecord] = [:]
    var nextTapID = 1
    /// Metered nodes by name.
    var meters: [String: MeterRecord] = [:]
}

/// Spatial: HRTF sets and the voices of 3D sources.
struct SpatialModel {
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
    var voices: [VoiceKey: SpatialVoiceRecord] = [:]
    /// The program generation `pruneVoices` last looked at.
    var voicesPrunedAtGeneration = -1
}

/// Inserts: effects exposed as host ports, by node name, and the layout version.
struct InsertTable {
    var exposed: [String: HostInsert] = [:]
    var layoutVersion = 0
}

/// The open batches (`EngineCore.batch`): how deep, and the commands they hold written in place in the
/// command queue's free slots past its tail, published together when the outermost batch ends.
struct OpenBatch {
    var depth = 0
    /// Commands written in place (the first `held` slots past the tail).
    var held = 0
    /// Slots past the tail known to be free (read again from the consumer's cursor when used up).
    var room = 0
}

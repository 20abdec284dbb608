// Control side. Everything the engine knows about one node, including the render state it owns.
import AudioDSP

/// A node as the control side sees it. Owns the node's render-state memory; freed through the
/// graveyard so the render thread never sees a dangling pointer.
final class NodeRecord {
    let name: String
    let kind: NodeKind
    /// Stable number used in render events.
    let id: Int32
    /// Engine-owned helper nodes (the sound pool's voices): not listed, not saved.
    var isInternal = false
    /// This node's parameter table (an EQ's depends on its band count), shared with every node of the
    /// same kind; `storedValues` is in its order.
    private(set) var table: ParameterTable
    /// This node's parameters, in table order.
    var specs: [ParameterSpec] { table.specs }
    /// Current parameter values, one per spec, in table order. Moves of a 3D source (`Engine.setVector`,
    /// `moveSources`) land in `spatialProperties` only and are written back here when the values are next
    /// read or changed, so a move at frame rate writes nothing here.
    private var storedValues: [ParameterValue]
    /// The vectors moved since the values were last read: a bit per `SpatialVectorProperty`.
    private var pendingVectors: UInt8 = 0
    /// The effect kernel of an effect node.
    var effect: EffectRef?
    /// Channels of the output bus (0 for the output node).
    var outputChannelCount: Int
    let mixing: UnsafeMutablePointer<MixingState>
    let player: UnsafeMutablePointer<PlayerState>?
    let mixer: UnsafeMutablePointer<MixerState>?
    /// A player's scheduled items by id, each holding its buffer alive until the render thread lets go.
    var items: [Int32: ScheduledItem] = [:]
    var nextItemID: Int32 = 1
    /// The buffer named by the player's `buffer`/`file` parameters (its "material").
    var materialBuffer: SampleBuffer?
    /// A time effect's output FIFO (allocated with its kernel).
    var timeFIFO: UnsafeMutablePointer<TimeEffectFIFO>?
    /// An audioplayer's time-pitch stage (`enableRate`); its kernel is `effect`.
    var rateStage: RateStage?
    /// A voice processor's render state (the `voiceprocessor` kind).
    var voice: UnsafeMutablePointer<VoiceProcessorStage>?
    /// An environment's state (the `environment` kind).
    var environment: EnvironmentControl?
    /// A 3D source's properties as voice targets read them, parsed from the values on first use after a
    /// change (nil: to be read again). Newer than the values for the vectors in `pendingVectors`.
    var spatialProperties: SpatialSourceProperties? {
        get { storedSpatialProperties }
        set {
            if newValue == nil, pendingVectors != 0 { writeBackVectors() }
            storedSpatialProperties = newValue
        }
    }
    /// Kept apart from its accessor so a move updates one vector in place (an observer would copy the
    /// whole value twice per move).
    private var storedSpatialProperties: SpatialSourceProperties?
    /// The voices this node feeds (one per connection into an environment), so a move reaches them
    /// without a search.
    var spatialVoices: [SourceVoice] = []
    /// An `audioplayer`'s control state (AVAudioPlayer semantics on top of the schedule queue).
    var audio: AudioPlayerControl?
    /// The last transport change the render thread reported: (engine time, player time, playing).
    var transport: (sampleTime: Int64, playerTime: Int64, isPlaying: Bool)?
    /// The queue count once the latest immediate play, pause or stop for this player was queued: its
    /// render report, and any after it, carry at least this count.
    var transportCommandCount = 0
    /// Marked `secondary` while the audio session silences secondary audio: it mixes at 0.
    var secondarySilenced = false

    init(name: String, kind: NodeKind, id: Int32, outputChannelCount: Int) {
        self.name = name
        self.kind = kind
        self.id = id
        self.outputChannelCount = outputChannelCount
        table = kind.parameterTable
        storedValues = table.defaultValues
        mixing = .allocate(capacity: 1)
        mixing.initialize(to: MixingState(left: 1, right: 1, mono: 1))
        if kind.isPlayer {
            let p = UnsafeMutablePointer<PlayerState>.allocate(capacity: 1)
            // Queue storage is allocated by PlayerState.init and freed in deinit.
            p.initialize(to: PlayerState(nodeID: id))
            player = p
        } else {
            player = nil
        }
        if kind == .mixer || kind == .output || kind.isEffect || kind == .voiceprocessor || kind == .input {
            let m = UnsafeMutablePointer<MixerState>.allocate(capacity: 1)
            m.initialize(to: MixerState(outputVolume: 1))
            mixer = m
        } else {
            mixer = nil
        }
    }

    /// Replaces the parameter table (an EQ created with a band count), resetting values to defaults.
    func useTable(_ newTable: ParameterTable) {
        table = newTable
        storedValues = newTable.defaultValues
        pendingVectors = 0
    }

    // MARK: Values

    /// The value at `position` in the table.
    subscript(position: Int) -> ParameterValue {
        get {
            if pendingVectors != 0 { writeBackVectors() }
            return storedValues[position]
        }
        set {
            if pendingVectors != 0 { writeBackVectors() }
            storedValues[position] = newValue
        }
    }

    /// The value of `key`, which this node's kind must have: asking a kind for a parameter it lacks is a
    /// programming error and traps (it never reads as 0).
    subscript(key: ParameterKey) -> ParameterValue {
        get { self[table.requiredPosition(key)] }
        set { self[table.requiredPosition(key)] = newValue }
    }

    /// The value of `key` when this node's kind has it, else nil.
    func value(_ key: ParameterKey) -> ParameterValue? { table.position(key).map { self[$0] } }

    /// Every value in table order (to save and restore around a change that may fail).
    var allValues: [ParameterValue] {
        get {
            if pendingVectors != 0 { writeBackVectors() }
            return storedValues
        }
        set {
            precondition(newValue.count == table.specs.count)
            storedValues = newValue
            pendingVectors = 0
        }
    }

    /// The values by name, for listings and snapshots (the edges).
    var valuesByName: [String: ParameterValue] {
        let values = allValues
        var byName: [String: ParameterValue] = [:]
        byName.reserveCapacity(values.count)
        for (spec, value) in zip(table.specs, values) { byName[spec.name] = value }
        return byName
    }

    deinit {
        effect?.deallocate()
        if let voice { VoiceProcessorStage.free(voice) }
        if let timeFIFO { TimeEffectFIFO.free(timeFIFO) }
        mixing.deallocate()
        player?.pointee.deallocate()
        player?.deallocate()
        mixer?.deallocate()
    }

    /// Records a move of a 3D source's vector in `spatialProperties` (which must be parsed), leaving
    /// the values to be brought up to date when next read.
    func move(_ property: SpatialVectorProperty, to v: SpatialVector) {
        switch property {
        case .position: storedSpatialProperties?.position = v
        case .velocity: storedSpatialProperties?.velocity = v
        case .direction: storedSpatialProperties?.facing = v
        }
        pendingVectors |= 1 << property.rawValue
    }

    private func writeBackVectors() {
        let pending = pendingVectors
        pendingVectors = 0
        guard let p = storedSpatialProperties else { return }
        for property in SpatialVectorProperty.allCases where pending & (1 << property.rawValue) != 0 {
            let v: SpatialVector
            switch property {
            case .position: v = p.position
            case .velocity: v = p.velocity
            case .direction: v = p.facing
            }
            let keys = property.parameterKeys
            storedValues[table.requiredPosition(keys.0)] = .float(v.x)
            storedValues[table.requiredPosition(keys.1)] = .float(v.y)
            storedValues[table.requiredPosition(keys.2)] = .float(v.z)
        }
    }

    // The value of `key` as its spec's type (values are coerced to it when set). Traps when this node's
    // kind has no `key`.
    func double(_ key: ParameterKey) -> Double { self[key].doubleValue ?? 0 }
    func int(_ key: ParameterKey) -> Int { self[key].intValue ?? 0 }
    func bool(_ key: ParameterKey) -> Bool { self[key].boolValue ?? false }
    func string(_ key: ParameterKey) -> String { self[key].stringValue ?? "" }

    /// Gain targets (left, right, mono) for this node's volume and pan, given its channel count.
    var mixingTargets: (left: Float, right: Float, mono: Float) { mixingTargets(channelCount: outputChannelCount) }

    /// The mixing targets the node would have with `channelCount` output channels.
    func mixingTargets(channelCount: Int) -> (left: Float, right: Float, mono: Float) {
        // Kinds without mixing settings (effects) pass their sources at unity.
        // Secondary audio the session silences mixes at 0, whatever its volume.
        let volume = secondarySilenced ? 0 : Float(value(.volume)?.doubleValue ?? 1)
        let pan = Float(value(.pan)?.doubleValue ?? 0)
        let (l, r) =
            channelCount == 1
            ? EqualPowerPanner.monoGains(pan: pan) : EqualPowerPanner.balanceGains(pan: pan)
        return (l * volume, r * volume, volume)
    }
}

/// The unity plumbing between an audioplayer's own player and its time-pitch stage: the FIFO, a mixer
/// input at unity (the node's volume and pan apply downstream), and a unity output volume.
final class RateStage {
    let fifo: UnsafeMutablePointer<TimeEffectFIFO>
    let unityMixing: UnsafeMutablePointer<MixingState>
    let unityFade: UnsafeMutablePointer<ParameterRamp>
    let unityMixer: UnsafeMutablePointer<MixerState>

    init(channelCount: Int, maxBlockFrames: Int) {
        fifo = TimeEffectFIFO.allocate(channelCount: channelCount, maxBlockFrames: maxBlockFrames)
        unityMixing = .allocate(capacity: 1)
        unityMixing.initialize(to: MixingState(left: 1, right: 1, mono: 1))
        unityFade = .allocate(capacity: 1)
        unityFade.initialize(to: ParameterRamp(1))
        unityMixer = .allocate(capacity: 1)
        unityMixer.initialize(to: MixerState(outputVolume: 1))
    }

    deinit {
        TimeEffectFIFO.free(fifo)
        unityMixing.deallocate()
        unityFade.deallocate()
        unityMixer.deallocate()
    }
}

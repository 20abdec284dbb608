// Control side. What the engine keeps for 3D rendering: an environment's render state and HRTF set,
// and one voice per source connection into an environment.
import AudioDSP

/// Identifies a connection into an environment by node ids, which survive the renaming of retiring
/// nodes (names do not).
struct VoiceKey: Hashable {
    let source: Int32
    let sourceBus: Int
    let environment: Int32
    let bus: Int
}

/// A voice as its source node lists it: the environment it feeds and the voice's record.
struct SourceVoice {
    let key: VoiceKey
    let environment: NodeRecord
    let record: SpatialVoiceRecord
}

/// An environment node's state.
final class EnvironmentControl {
    let layout: SpeakerLayout
    let state: UnsafeMutablePointer<EnvironmentState>
    /// The listener and the models, parsed from the node's values on first use after a change (nil: to
    /// be read again). Every source update reads it.
    var model: EnvironmentModel?
    /// The HRTF sets, one per quality (their filter lengths differ), each loaded when a voice first needs
    /// it (`hrtf` parameter, else the set source's default file).
    var datasets = HRTFSets()

    init(layout: SpeakerLayout, sampleRate: Double, maxBlockFrames: Int) {
        self.layout = layout
        state = .allocate(capacity: 1)
        state.initialize(to: EnvironmentState(sampleRate: sampleRate, maxBlockFrames: maxBlockFrames, layout: layout))
    }

    deinit {
        state.pointee.deallocate()
        state.deinitialize(count: 1)
        state.deallocate()
    }
}

/// An environment's HRTF sets by quality (a switch, not a hash: every HRTF move reads it).
struct HRTFSets {
    var standard: (any HRIRSet)?
    var high: (any HRIRSet)?

    subscript(quality: HRTFQuality) -> (any HRIRSet)? {
        get { quality == .standard ? standard : high }
        set {
            switch quality {
            case .standard: standard = newValue
            case .high: high = newValue
            }
        }
    }
}

/// What every voice target needs from its environment's parameters.
struct EnvironmentModel {
    let listener: SpatialVector
    let orientation: ListenerOrientation
    let distance: DistanceAttenuation
    let doppler: DopplerShift
    let headphones: Bool
}

/// What a voice target needs from its source's 3D parameters.
struct SpatialSourceProperties {
    var position: SpatialVector
    var velocity: SpatialVector
    var facing: SpatialVector
    let cone: ConeAttenuation
    let reverbBlend: Double
    let obstruction: Double
    let occlusion: Double
    let requested: SpatialRenderingAlgorithm
    /// `sourceMode` is `bypass`: the source's channels pass as they are.
    let bypasses: Bool
    /// `sourceMode` is `spatializeIfMono`: a source of more than one channel passes as it is.
    let spatializesOnlyMono: Bool
    /// `sourceMode` is `ambienceBed`: each channel is placed around the listener (`AmbienceBed`).
    let rendersBed: Bool
}

/// One source connection into an environment: its render-side voice, HRTF convolver and ambience bed.
final class SpatialVoiceRecord {
    let voice: UnsafeMutablePointer<SpatialVoice>
    var convolver: OwnedConvolver?
    var bed: OwnedBed?
    /// The algorithm last sent to the voice (kept while a new HRTF mode's set loads).
    var algorithm: SpatialRenderingAlgorithm?

    init(sampleRate: Double, maxBlockFrames: Int, layout: SpeakerLayout) {
        voice = .allocate(capacity: 1)
        voice.initialize(to: SpatialVoice(sampleRate: sampleRate, maxBlockFrames: maxBlockFrames, layout: layout))
    }

    deinit {
        voice.pointee.deallocate()
        voice.deinitialize(count: 1)
        voice.deallocate()
    }
}

/// Whether a voice's HRTF set can be used now.
enum HRTFReadiness {
    case ready
    /// Loading on a worker (a live engine): usable once `poll()` adopts it.
    case loading
    /// No set: the environment has none that loads (the failure was reported).
    case unavailable
}

/// An ambience bed; freed with its owner.
final class OwnedBed {
    let pointer: UnsafeMutablePointer<AmbienceBed>

    init(channelCount: Int) {
        pointer = .allocate(capacity: 1)
        pointer.initialize(to: AmbienceBed(channelCount: channelCount))
    }

    deinit {
        pointer.pointee.deallocate()
        pointer.deinitialize(count: 1)
        pointer.deallocate()
    }
}

/// An HRTF convolver and the quality it was made for; freed with its owner.
final class OwnedConvolver {
    let pointer: UnsafeMutablePointer<HRTFConvolver>
    let quality: HRTFQuality
    /// The direction cell (`HRTFQuality.cellKey`) last published (standard quality), so an update that
    /// lands in the same cell publishes nothing and starts no crossfade.
    var publishedKey: Int?

    init(_ convolver: HRTFConvolver, quality: HRTFQuality) {
        pointer = .allocate(capacity: 1)
        pointer.initialize(to: convolver)
        self.quality = quality
    }

    deinit {
        pointer.pointee.deallocate()
        pointer.deinitialize(count: 1)
        pointer.deallocate()
    }
}

/// The vectors of a 3D source that move at frame rate (`Engine.setVector`, `Engine.moveSources`).
public enum SpatialVectorProperty: UInt8, CaseIterable, Sendable, BitwiseCopyable {
    case position
    case velocity
    /// Where the source faces (its cone's axis); OpenAL's AL_DIRECTION.
    case direction

    /// The property `setVector` names `name` ("position", "velocity", "direction"), if any.
    public init?(name: String) {
        switch name {
        case "position": self = .position
        case "velocity": self = .velocity
        case "direction": self = .direction
        default: return nil
        }
    }

    /// The three parameters the vector is made of.
    var parameterKeys: (ParameterKey, ParameterKey, ParameterKey) {
        switch self {
        case .position: return (.positionX, .positionY, .positionZ)
        case .velocity: return (.velocityX, .velocityY, .velocityZ)
        case .direction: return (.directionX, .directionY, .directionZ)
        }
    }

    /// The symmetric range of each coordinate (as the parameter tables give it; a test keeps them equal).
    var limit: Double { self == .velocity ? 1e4 : 1e6 }
}

/// One move of `moveSources`: the `property` vector of the 3D source node `node` (its `Engine.nodeID`)
/// becomes (x, y, z).
public struct SourceMove: Sendable, BitwiseCopyable {
    public var node: Int32
    public var property: SpatialVectorProperty
    public var x: Double
    public var y: Double
    public var z: Double

    public init(node: Int32, _ property: SpatialVectorProperty = .position, _ x: Double, _ y: Double, _ z: Double) {
        self.node = node
        self.property = property
        self.x = x
        self.y = y
        self.z = z
    }
}

// Control side. What the engine keeps for 3D rendering: an environment's render state and HRTF set,
// and one voice per source connection into an environment.
import AudioDSP
import SpatialAssets

/// Identifies a connection into an environment by node ids, which survive the renaming of retiring
/// nodes (names do not).
struct VoiceKey: Hashable {
    let source: Int32
    let sourceBus: Int
    let environment: Int32
    let bus: Int
}

/// An environment node's state.
final class EnvironmentControl {
    let layout: SpeakerLayout
    let state: UnsafeMutablePointer<EnvironmentState>
    /// The listener and the models, parsed from the node's values on first use after a change (nil: to
    /// be read again). Every source update reads it.
    var model: EnvironmentModel?
    /// The HRTF sets, one per quality (their filter lengths differ), each loaded when a voice first needs
    /// it (`hrtf` parameter, else the Debian KEMAR set).
    var datasets: [HRTFQuality: SOFADataset] = [:]

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
    let mode: String
}

/// One source connection into an environment: its render-side voice and HRTF convolver.
final class SpatialVoiceRecord {
    let voice: UnsafeMutablePointer<SpatialVoice>
    var convolver: OwnedConvolver?

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

/// An HRTF convolver and the quality it was made for; freed with its owner.
final class OwnedConvolver {
    let pointer: UnsafeMutablePointer<HRTFConvolver>
    let quality: HRTFQuality
    /// The nearest-measurement key (`SOFADataset.nearestKey`) last published (standard quality), so an
    /// update that lands on the same measurement publishes nothing and starts no crossfade.
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

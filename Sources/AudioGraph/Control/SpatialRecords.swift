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
    /// The HRTF set, loaded when a voice first needs it (`hrtf` parameter, else the Debian KEMAR set).
    var dataset: SOFADataset?

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

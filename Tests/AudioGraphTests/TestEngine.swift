import AudioGraph
import DSPTestSupport
import SoundstageKit
import SpatialAssets

/// Shared fixtures: engines, buffers and renders at 48 kHz.
enum TestEngine {
    static let rate = 48_000.0

    static func make(outputs: Int = 2, inputs: Int = 0, block: Int = 64) -> Engine {
        Engine(
            configuration: EngineConfiguration(
                sampleRate: rate, blockFrames: block, outputChannelCount: outputs,
                inputChannelCount: inputs), hrtfSets: sofaFiles)
    }

    /// HRTF sets from SOFA files, as SoundstageKit gives them to the engines it makes.
    static let sofaFiles = HRTFSetSource.sofaFiles

    static func constant(_ name: String, value: Float, frames: Int = 48_000, channels: Int = 1) -> SampleBuffer {
        SampleBuffer(
            name: name, channels: Array(repeating: Array(repeating: value, count: frames), count: channels),
            sampleRate: rate)
    }

    static func render(_ engine: Engine, frames: Int, block: Int = 256) -> [[Float]] {
        OfflineRenderer(engine: engine).render(frameCount: frames, hostBlockFrames: block)
    }
}

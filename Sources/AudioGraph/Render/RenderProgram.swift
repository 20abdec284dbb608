// Control side builds and frees it; render side executes it. A compiled, flat, preallocated graph.
import AudioDSP
import Synchronization

/// The executable form of the active part of a graph: steps in dependency order plus every buffer they
/// touch. Built by `GraphCompiler` on the control side, handed to the render thread through
/// `RenderEngine`'s program slot, and freed on the control side once the render thread has moved on.
public final class RenderProgram: @unchecked Sendable {
    // @unchecked: published by pointer swap; after the render thread takes it, only the render thread touches it.
    /// The header the render thread sees.
    public let data: UnsafeMutablePointer<RenderProgramData>
    let steps: UnsafeMutableBufferPointer<RenderStep>
    let busSlab: UnsafeMutableBufferPointer<Float>
    let mixerInputs: UnsafeMutableBufferPointer<MixerInput>
    let environmentInputs: UnsafeMutableBufferPointer<EnvironmentInput>
    let voiceSteps: UnsafeMutableBufferPointer<VoiceProcessorStep>
    /// Names of the nodes that render, in execution order (for diagnostics and tests).
    public let activeNodeNames: [String]

    init(
        generation: Int, steps: [RenderStep], busSlab: UnsafeMutableBufferPointer<Float>,
        mixerInputs: UnsafeMutableBufferPointer<MixerInput>,
        environmentInputs: UnsafeMutableBufferPointer<EnvironmentInput>,
        voiceSteps: UnsafeMutableBufferPointer<VoiceProcessorStep>, activeNodeNames: [String]
    ) {
        let stepStorage = UnsafeMutableBufferPointer<RenderStep>.allocate(capacity: max(1, steps.count))
        _ = stepStorage.initialize(from: steps)
        self.steps = stepStorage
        self.busSlab = busSlab
        self.mixerInputs = mixerInputs
        self.environmentInputs = environmentInputs
        self.voiceSteps = voiceSteps
        self.activeNodeNames = activeNodeNames
        Self.liveCount.wrappingAdd(1, ordering: .relaxed)
        data = .allocate(capacity: 1)
        data.initialize(
            to: RenderProgramData(generation: generation, steps: stepStorage.baseAddress!, stepCount: steps.count))
    }

    /// Programs alive right now (leak checks in tests).
    public static let liveCount = Atomic<Int>(0)

    deinit {
        Self.liveCount.wrappingSubtract(1, ordering: .relaxed)
        data.deallocate()
        steps.deallocate()
        busSlab.deallocate()
        mixerInputs.deallocate()
        environmentInputs.deallocate()
        voiceSteps.deallocate()
    }

    /// The program's generation; strictly increasing per engine.
    public var generation: Int { data.pointee.generation }
}

/// What the render thread reads of a program.
public struct RenderProgramData: BitwiseCopyable {
    public var generation: Int
    public var steps: UnsafeMutablePointer<RenderStep>
    public var stepCount: Int
}

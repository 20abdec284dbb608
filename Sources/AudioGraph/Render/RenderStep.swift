// Render side. The closed set of operations a compiled program executes, once per sub-block each.
import AudioDSP

/// One step of a `RenderProgram`. Payloads are typed pointers into state owned by the control side
/// (node states) or by the program (buses, input tables); dispatch is a `switch` per step per sub-block.
public enum RenderStep: BitwiseCopyable {
    /// A player renders its region into its bus.
    case player(UnsafeMutablePointer<PlayerState>, UnsafeMutablePointer<MixingState>, BusRef)
    /// The live input copies the host's capture channels into its bus.
    case input(UnsafeMutablePointer<MixingState>, BusRef)
    /// A mixer sums its inputs with their sources' gains, then applies its output volume.
    case mixer(
        UnsafeMutablePointer<MixerState>, UnsafeMutablePointer<MixingState>, UnsafeBufferPointer<MixerInput>, BusRef)
    /// The output node sums its (usually one) input at unity — fading connections in and out — and
    /// copies the result to the host's playback channels.
    case output(UnsafeMutablePointer<MixerState>, UnsafeBufferPointer<MixerInput>, BusRef)
    /// An effect sums its inputs at unity (with connection fades) into its input bus, adds its host insert
    /// inputs (if exposed), then runs its kernel into its output bus and copies that to its insert outputs.
    case effect(
        EffectRef, UnsafeMutablePointer<MixerState>, UnsafeBufferPointer<MixerInput>, BusRef, BusRef, InsertSlot)
    /// A time effect, followed by the `Int` steps of the chain that feeds it. That chain runs only from
    /// here, on the effect's clock: as often, and for as many frames, as the kernel asks to produce each
    /// quantum of output. Inputs are summed at unity like an effect's; the output is served through the
    /// FIFO. (Effect, unity mixer, inputs, input bus, output bus, FIFO, chain length.)
    case timeEffect(
        EffectRef, UnsafeMutablePointer<MixerState>, UnsafeBufferPointer<MixerInput>, BusRef, BusRef,
        UnsafeMutablePointer<TimeEffectFIFO>, Int)
    /// An environment renders each source connection as a voice into its bus (see `EnvironmentRender`).
    case environment(UnsafeMutablePointer<EnvironmentState>, UnsafeBufferPointer<EnvironmentInput>, BusRef)
    /// A voice processor sums its microphone (bus 0) and reference (bus 1) inputs at unity, adds its
    /// host ports, and writes the cleaned microphone to its bus (and its output ports).
    case voiceProcessor(UnsafeMutablePointer<VoiceProcessorStep>)
    /// After the output step: a voice processor with `reference: engine` keeps the engine's output.
    case voiceReference(UnsafeMutablePointer<VoiceProcessorStage>, BusRef)
    /// A tap copies a bus into its ring for the control side.
    case tap(UnsafeMutablePointer<TapState>, BusRef)
    /// A meter pushes per-sub-block peak and energy of a bus (a `TapState` whose ring holds records).
    case meter(UnsafeMutablePointer<TapState>, BusRef)
}

/// The payload of a voice-processor step.
public struct VoiceProcessorStep: BitwiseCopyable {
    public var stage: UnsafeMutablePointer<VoiceProcessorStage>
    public var unity: UnsafeMutablePointer<MixerState>
    public var micInputs: UnsafeBufferPointer<MixerInput>
    public var referenceInputs: UnsafeBufferPointer<MixerInput>
    public var mic: BusRef
    public var reference: BusRef
    public var output: BusRef
    public var slot: InsertSlot
    /// The microphone bus was filled by the step before (an input's capture channels): no inputs to sum.
    public var micIsFilled: Bool
}

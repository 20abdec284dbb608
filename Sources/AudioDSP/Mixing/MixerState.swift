// Render side. Per-mixer state: the ramped output volume.

/// A mixer's own settings; its inputs' settings live with their sources (`MixingState`).
public struct MixerState: BitwiseCopyable {
    /// Master gain applied after summing, 0...1 (linear).
    public var outputVolume: ParameterRamp

    public init(outputVolume: Float) { self.outputVolume = ParameterRamp(outputVolume) }
}

/// One mixer input as compiled into a program: the source's bus, the source's mixing settings, and the
/// connection's own fade (1 when settled; glides from 0 after a connect and to 0 before a disconnect).
public struct MixerInput: BitwiseCopyable {
    public var source: BusRef
    public var mixing: UnsafeMutablePointer<MixingState>
    public var fade: UnsafeMutablePointer<ParameterRamp>

    @inlinable
    public init(source: BusRef, mixing: UnsafeMutablePointer<MixingState>, fade: UnsafeMutablePointer<ParameterRamp>) {
        self.source = source
        self.mixing = mixing
        self.fade = fade
    }
}

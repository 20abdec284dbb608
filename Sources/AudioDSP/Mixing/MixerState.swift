// Render side. Per-mixer state: the ramped output volume.


/// A mixer's own settings; its inputs' settings live with their sources (`MixingState`).
public struct MixerState: BitwiseCopyable {
    /// Master gain applied after summing, 0...1 (linear).
    public var outputVolume: ParameterRamp

    public init(outputVolume: Float) { self.outputVolume = ParameterRamp(outputVolume) }
}

/// One mixer input as compiled into a program: the source's bus and the source's mixing settings.
public struct MixerInput: BitwiseCopyable {
    public var source: BusRef
    public var mixing: UnsafeMutablePointer<MixingState>

    @inlinable
    public init(source: BusRef, mixing: UnsafeMutablePointer<MixingState>) {
        self.source = source
        self.mixing = mixing
    }
}

// Control side. The optional `engine:` section of a patch: rates and channel counts.

/// Engine settings from a patch. Every field is optional; `nil` means "not written", and the
/// engine or the command line then decides.
public struct PatchEngineSettings: Sendable, Equatable {
    /// Valid sample rates in Hz.
    public static let sampleRateRange: ClosedRange<Int> = 8000...384_000
    /// Valid output channel counts.
    public static let outputChannelCountRange: ClosedRange<Int> = 1...64
    /// Valid input (capture) channel counts.
    public static let inputChannelCountRange: ClosedRange<Int> = 0...64
    /// Valid internal render sub-block sizes in frames.
    public static let blockFramesRange: ClosedRange<Int> = 1...4096

    /// Sample rate in Hz (key `sampleRate`), used by offline rendering when no `--rate` is given.
    public var sampleRate: Int?
    /// Number of output channels (key `outputs`): JACK ports `out_1` … `out_N`.
    public var outputChannelCount: Int?
    /// Number of capture channels (key `inputs`): JACK ports `in_1` … `in_N`.
    public var inputChannelCount: Int?
    /// Internal render sub-block in frames (key `blockFrames`).
    public var blockFrames: Int?
    /// Where the `engine` mapping starts; `nil` when the section is absent or built in code.
    public var location: SourceLocation?
    /// Where each written value starts, keyed by its YAML key (`sampleRate`, `outputs`, …).
    public var fieldLocations: [String: SourceLocation]

    /// Creates settings; everything defaults to "not written".
    public init(
        sampleRate: Int? = nil, outputChannelCount: Int? = nil, inputChannelCount: Int? = nil,
        blockFrames: Int? = nil, location: SourceLocation? = nil, fieldLocations: [String: SourceLocation] = [:]
    ) {
        self.sampleRate = sampleRate
        self.outputChannelCount = outputChannelCount
        self.inputChannelCount = inputChannelCount
        self.blockFrames = blockFrames
        self.location = location
        self.fieldLocations = fieldLocations
    }

    /// Whether no field is set (the writer then leaves the section out).
    public var isEmpty: Bool {
        sampleRate == nil && outputChannelCount == nil && inputChannelCount == nil && blockFrames == nil
    }

    /// A copy with every location removed, for comparisons that ignore where things were written.
    public func withoutLocations() -> PatchEngineSettings {
        PatchEngineSettings(
            sampleRate: sampleRate, outputChannelCount: outputChannelCount,
            inputChannelCount: inputChannelCount, blockFrames: blockFrames
        )
    }
}

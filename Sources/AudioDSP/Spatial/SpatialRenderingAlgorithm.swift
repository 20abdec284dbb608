// Pure. The per-source rendering algorithms and source modes of the 3D mixer, with Apple's numbering,
// and which kernel renders each.

/// AVAudio3DMixingRenderingAlgorithm (raw values as Apple's; 4 is the AU spatial mixer's
/// vector-based panning, which AVFoundation does not name).
///
/// | case | kernel | output |
/// | --- | --- | --- |
/// | `equalPowerPanning` | `EqualPowerPanningKernel` | channels 0–1 |
/// | `sphericalHead` | `SphericalHeadKernel` | channels 0–1 (headphones) |
/// | `hrtf`, `hrtfHQ` | `HRTFConvolver` fed by `SOFADataset` (nearest / interpolated) | channels 0–1 (headphones) |
/// | `soundField` | `AmbisonicEncoder` per source + one `AmbisonicDecoder` | every speaker of the layout |
/// | `vectorBasedPanning` | `VBAPKernel` | every speaker of the layout |
/// | `stereoPassThrough` | `PassThroughKernel` | channel c → c |
/// | `auto` | see `resolved(outputChannelCount:isHeadphones:)` | |
public enum SpatialRenderingAlgorithm: Int, Sendable, BitwiseCopyable, CaseIterable {
    case equalPowerPanning = 0
    case sphericalHead = 1
    case hrtf = 2
    case soundField = 3
    case vectorBasedPanning = 4
    case stereoPassThrough = 5
    case hrtfHQ = 6
    case auto = 7

    /// The camelCase name used in patches and OSC (Apple's case names).
    public var name: String {
        switch self {
        case .equalPowerPanning: return "equalPowerPanning"
        case .sphericalHead: return "sphericalHead"
        case .hrtf: return "HRTF"
        case .soundField: return "soundField"
        case .vectorBasedPanning: return "vectorBasedPanning"
        case .stereoPassThrough: return "stereoPassThrough"
        case .hrtfHQ: return "HRTFHQ"
        case .auto: return "auto"
        }
    }

    /// The algorithm called `name`, or nil.
    public init?(name: String) {
        guard let match = Self.allCases.first(where: { $0.name == name }) else { return nil }
        self = match
    }

    /// True for the algorithms that render beyond channels 0–1 of a multichannel output.
    public var isMultichannel: Bool { self == .soundField || self == .vectorBasedPanning || self == .auto }

    /// What `auto` means for an output (our choice; Apple leaves it to the hardware): HRTF HQ on
    /// headphones, vector-base panning on more than two speakers, equal-power panning on two speakers.
    /// Other algorithms resolve to themselves.
    public func resolved(outputChannelCount: Int, isHeadphones: Bool) -> SpatialRenderingAlgorithm {
        guard self == .auto else { return self }
        if isHeadphones && outputChannelCount >= 2 { return .hrtfHQ }
        return outputChannelCount > 2 ? .vectorBasedPanning : .equalPowerPanning
    }
}

/// AVAudio3DMixingSourceMode (raw values as Apple's): how a source's channels are placed.
public enum SpatialSourceMode: Int, Sendable, BitwiseCopyable, CaseIterable {
    /// Mono sources are point sources; sources with more channels bypass (Apple's default).
    case spatializeIfMono = 0
    /// No spatialisation, no distance, occlusion, obstruction or reverb: `PassThroughKernel` at gain 1.
    case bypass = 1
    /// All channels, down-mixed, rendered as one source at the source's position.
    case pointSource = 2
    /// Each channel a far-field source at its place in the bus layout, around the listener and turned by
    /// the source's `direction` (`AmbienceBed`, encoded into the environment's B-format bus).
    case ambienceBed = 3
}

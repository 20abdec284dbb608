// Control side. The 22 distortion factory presets (AVAudioUnitDistortionPreset numbering) as recipes of
// the distortion kernel's components. Our own designs, inspired by the preset names.

/// AVAudioUnitDistortionPreset, numbered as in AVFAudio (0…21).
public enum DistortionPreset: Int, Sendable, BitwiseCopyable, CaseIterable {
    case drumsBitBrush = 0
    case drumsBufferBeats = 1
    case drumsLoFi = 2
    case multiBrokenSpeaker = 3
    case multiCellphoneConcert = 4
    case multiDecimated1 = 5
    case multiDecimated2 = 6
    case multiDecimated3 = 7
    case multiDecimated4 = 8
    case multiDistortedFunk = 9
    case multiDistortedCubed = 10
    case multiDistortedSquared = 11
    case multiEcho1 = 12
    case multiEcho2 = 13
    case multiEchoTight1 = 14
    case multiEchoTight2 = 15
    case multiEverythingIsBroken = 16
    case speechAlienChatter = 17
    case speechCosmicInterference = 18
    case speechGoldenPi = 19
    case speechRadioTower = 20
    case speechWaves = 21

    /// The camelCase name used in patches and OSC.
    public var name: String { DistortionRecipe.table[rawValue].name }

    /// All names in index order.
    public static var allNames: [String] { allCases.map(\.name) }

    /// The preset called `name`, or nil.
    public init?(name: String) {
        guard let index = DistortionRecipe.table.firstIndex(where: { $0.name == name }) else { return nil }
        self.init(rawValue: index)
    }

    /// The recipe of this preset.
    public var recipe: DistortionRecipe { DistortionRecipe.table[rawValue] }
}

/// The component settings of one distortion preset. The chain, after the pre-gain, is:
/// short delay with decay → decimation (sample-and-hold, then bit-depth rounding) → ring modulation →
/// polynomial shaping (with a DC blocker) → cubic soft clip. Each stage has its own mix (0 = stage
/// bypassed, 1 = stage output only), as AUDistortion's DelayMix, DecimationMix, RingModMix and
/// PolynomialMix do.
public struct DistortionRecipe: Sendable, Equatable {
    public var name: String
    /// Echo delay in seconds (0 … 0.5) and feedback gain (0 … 0.95).
    public var delay: Double = 0
    public var delayFeedback: Double = 0
    public var delayMix: Double = 0
    /// Sample-and-hold period in frames (≥ 1; 1 keeps every sample) and bit depth (0 = no rounding,
    /// else 1 … 24 bits: x is rounded to multiples of 2^−(bits−1)).
    public var holdFrames: Double = 1
    public var bitDepth: Double = 0
    public var decimationMix: Double = 0
    /// Ring modulator: carrier = (1 − balance)·sin(2π f1 t) + balance·sin(2π f2 t), y = x·carrier.
    public var ringFrequency1: Double = 100
    public var ringFrequency2: Double = 100
    public var ringBalance: Double = 0.5
    public var ringMix: Double = 0
    /// Polynomial y = linear·x + squared·x² + cubed·x³.
    public var linearTerm: Double = 1
    public var squaredTerm: Double = 0
    public var cubedTerm: Double = 0
    public var polynomialMix: Double = 0
    /// Gain into the soft clipper (≥ 1 drives it harder).
    public var drive: Double = 1

    /// The 22 presets, index = `DistortionPreset.rawValue`.
    public static let table: [DistortionRecipe] = {
        var t: [DistortionRecipe] = []
        func add(_ name: String, _ edit: (inout DistortionRecipe) -> Void) {
            var r = DistortionRecipe(name: name)
            edit(&r)
            t.append(r)
        }
        add("drumsBitBrush") {
            $0.holdFrames = 2; $0.bitDepth = 6; $0.decimationMix = 0.7; $0.drive = 1.5
        }
        add("drumsBufferBeats") {
            $0.delay = 0.06; $0.delayFeedback = 0.55; $0.delayMix = 0.5
            $0.bitDepth = 10; $0.decimationMix = 0.5; $0.drive = 2
        }
        add("drumsLoFi") {
            $0.holdFrames = 4; $0.bitDepth = 8; $0.decimationMix = 1
            $0.squaredTerm = 0.3; $0.polynomialMix = 0.5; $0.drive = 2
        }
        add("multiBrokenSpeaker") {
            $0.ringFrequency1 = 40; $0.ringFrequency2 = 67; $0.ringMix = 0.25
            $0.squaredTerm = 3; $0.cubedTerm = 6; $0.polynomialMix = 1; $0.drive = 4
        }
        add("multiCellphoneConcert") {
            $0.delay = 0.09; $0.delayFeedback = 0.3; $0.delayMix = 0.3
            $0.holdFrames = 6; $0.bitDepth = 9; $0.decimationMix = 1
            $0.cubedTerm = 2; $0.polynomialMix = 0.6; $0.drive = 3
        }
        add("multiDecimated1") {
            $0.holdFrames = 2; $0.bitDepth = 12; $0.decimationMix = 1
        }
        add("multiDecimated2") {
            $0.holdFrames = 4; $0.bitDepth = 8; $0.decimationMix = 1
        }
        add("multiDecimated3") {
            $0.holdFrames = 8; $0.bitDepth = 6; $0.decimationMix = 1
        }
        add("multiDecimated4") {
            $0.holdFrames = 16; $0.bitDepth = 4; $0.decimationMix = 1
        }
        add("multiDistortedFunk") {
            $0.delay = 0.0125; $0.delayFeedback = 0.2; $0.delayMix = 0.2
            $0.ringFrequency1 = 110; $0.ringFrequency2 = 220; $0.ringBalance = 0.3; $0.ringMix = 0.3
            $0.squaredTerm = 2; $0.cubedTerm = 1; $0.polynomialMix = 0.7; $0.drive = 5
        }
        add("multiDistortedCubed") {
            $0.cubedTerm = 8; $0.polynomialMix = 1; $0.drive = 3
        }
        add("multiDistortedSquared") {
            $0.squaredTerm = 8; $0.polynomialMix = 1; $0.drive = 3
        }
        add("multiEcho1") {
            $0.delay = 0.15; $0.delayFeedback = 0.5; $0.delayMix = 0.5; $0.drive = 1.2
        }
        add("multiEcho2") {
            $0.delay = 0.3; $0.delayFeedback = 0.65; $0.delayMix = 0.5
            $0.holdFrames = 2; $0.bitDepth = 12; $0.decimationMix = 0.3; $0.drive = 1.2
        }
        add("multiEchoTight1") {
            $0.delay = 0.025; $0.delayFeedback = 0.45; $0.delayMix = 0.5; $0.drive = 1.5
        }
        add("multiEchoTight2") {
            $0.delay = 0.011; $0.delayFeedback = 0.7; $0.delayMix = 0.6; $0.drive = 1.5
        }
        add("multiEverythingIsBroken") {
            $0.delay = 0.04; $0.delayFeedback = 0.6; $0.delayMix = 0.5
            $0.holdFrames = 6; $0.bitDepth = 5; $0.decimationMix = 0.8
            $0.ringFrequency1 = 311; $0.ringFrequency2 = 523; $0.ringMix = 0.5
            $0.squaredTerm = 4; $0.cubedTerm = 6; $0.polynomialMix = 0.8; $0.drive = 6
        }
        add("speechAlienChatter") {
            $0.ringFrequency1 = 700; $0.ringFrequency2 = 1130; $0.ringMix = 1
            $0.holdFrames = 2; $0.bitDepth = 10; $0.decimationMix = 0.3; $0.drive = 1.5
        }
        add("speechCosmicInterference") {
            $0.delay = 0.017; $0.delayFeedback = 0.7; $0.delayMix = 0.4
            $0.ringFrequency1 = 2900; $0.ringFrequency2 = 190; $0.ringBalance = 0.35; $0.ringMix = 0.8
            $0.drive = 1.5
        }
        add("speechGoldenPi") {
            $0.delay = 0.0314; $0.delayFeedback = 0.618; $0.delayMix = 0.3
            $0.ringFrequency1 = 161.8; $0.ringFrequency2 = 314.159; $0.ringMix = 0.7; $0.drive = 1.2
        }
        add("speechRadioTower") {
            $0.holdFrames = 5; $0.bitDepth = 7; $0.decimationMix = 1
            $0.ringFrequency1 = 50; $0.ringFrequency2 = 100; $0.ringMix = 0.15
            $0.cubedTerm = 3; $0.polynomialMix = 0.5; $0.drive = 4
        }
        add("speechWaves") {
            $0.delay = 0.08; $0.delayFeedback = 0.35; $0.delayMix = 0.35
            $0.ringFrequency1 = 0.5; $0.ringFrequency2 = 0.8; $0.ringMix = 1; $0.drive = 1.2
        }
        return t
    }()
}

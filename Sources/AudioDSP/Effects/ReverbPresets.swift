// Control side. The 13 reverb factory presets (AVAudioUnitReverbPreset numbering) and the design values
// the reverb kernel derives its delay lengths and gains from. Our own designs, inspired by the names.

/// AVAudioUnitReverbPreset, numbered as in AVFAudio, AU `kReverbRoomType_*` and OpenAL ASA (0…12).
public enum ReverbPreset: Int, Sendable, BitwiseCopyable, CaseIterable {
    case smallRoom = 0
    case mediumRoom = 1
    case largeRoom = 2
    case mediumHall = 3
    case largeHall = 4
    case plate = 5
    case mediumChamber = 6
    case largeChamber = 7
    case cathedral = 8
    case largeRoom2 = 9
    case mediumHall2 = 10
    case mediumHall3 = 11
    case largeHall2 = 12

    /// The camelCase name used in patches and OSC.
    public var name: String { ReverbPresetDesign.table[rawValue].name }

    /// All names in index order.
    public static var allNames: [String] { allCases.map(\.name) }

    /// The preset called `name`, or nil.
    public init?(name: String) {
        guard let index = ReverbPresetDesign.table.firstIndex(where: { $0.name == name }) else { return nil }
        self.init(rawValue: index)
    }

    /// The design values of this preset.
    public var design: ReverbPresetDesign { ReverbPresetDesign.table[rawValue] }
}

/// The character of one reverb preset.
///
/// `rt60` is the design decay time (60 dB) at 1 kHz, the ISO 3382 mid band; the decay time falls
/// towards `rt60 · highFrequencyRatio` at Nyquist through each line's one-pole absorption filter. The
/// feedback delay network's 16 lines are `size · ratio[i]` milliseconds long (ratios 1 … 2.08, each
/// rounded to a distinct prime number of frames), so `size` sets the modal and echo density.
public struct ReverbPresetDesign: Sendable, Equatable {
    public let name: String
    /// Decay time in seconds at 1 kHz.
    public let rt60: Double
    /// Decay time at Nyquist relative to `rt60` (0 < ratio ≤ 1; lower is darker).
    public let highFrequencyRatio: Double
    /// Delay before the first early reflection and the late reverb, in milliseconds.
    public let preDelay: Double
    /// Shortest feedback-delay line, in milliseconds.
    public let size: Double
    /// Level of the early reflections (0 … 1; the plate has none).
    public let earlyLevel: Double
    /// Spacing scale of the early reflection taps, in milliseconds.
    public let earlySpacing: Double
    /// Gains of the left and right wet outputs in dB: they bring the preset's wet RMS on white noise to
    /// −6 dB re the input on both sides (measured from the impulse response energy; docs/EFFECTS.md).
    public var leftGain: Double = 0
    public var rightGain: Double = 0

    /// Scale of the input diffusers' delays: `size` / 24 ms, within 0.3 … 1.5. Keeps the diffusers'
    /// own decay (T60 ≈ 0.19 s × scale) well below the preset's rt60, so it does not bend the decay.
    public var diffuserScale: Double { min(max(size / 24, 0.3), 1.5) }

    /// The 13 presets, index = `ReverbPreset.rawValue`. Every rt60 is distinct.
    public static let table: [ReverbPresetDesign] = [
        .init(
            name: "smallRoom", rt60: 0.40, highFrequencyRatio: 0.45, preDelay: 2, size: 7, earlyLevel: 0.04,
            earlySpacing: 1.5, leftGain: 8.84, rightGain: 9.19),
        .init(
            name: "mediumRoom", rt60: 0.70, highFrequencyRatio: 0.5, preDelay: 4, size: 11, earlyLevel: 0.5,
            earlySpacing: 2.5, leftGain: -3.55, rightGain: -3.31),
        .init(
            name: "largeRoom", rt60: 1.00, highFrequencyRatio: 0.5, preDelay: 8, size: 16, earlyLevel: 0.45,
            earlySpacing: 4, leftGain: -2.69, rightGain: -2.44),
        .init(
            name: "mediumHall", rt60: 1.60, highFrequencyRatio: 0.55, preDelay: 15, size: 24, earlyLevel: 0.3,
            earlySpacing: 6, leftGain: 0.40, rightGain: 0.67),
        .init(
            name: "largeHall", rt60: 2.40, highFrequencyRatio: 0.55, preDelay: 22, size: 32, earlyLevel: 0.3,
            earlySpacing: 8, leftGain: 0.38, rightGain: 0.62),
        .init(
            name: "plate", rt60: 1.30, highFrequencyRatio: 0.8, preDelay: 0, size: 9, earlyLevel: 0,
            earlySpacing: 1, leftGain: 6.61, rightGain: 7.01),
        .init(
            name: "mediumChamber", rt60: 1.10, highFrequencyRatio: 0.6, preDelay: 6, size: 13, earlyLevel: 0.45,
            earlySpacing: 3, leftGain: -2.76, rightGain: -2.50),
        .init(
            name: "largeChamber", rt60: 1.50, highFrequencyRatio: 0.6, preDelay: 10, size: 18, earlyLevel: 0.4,
            earlySpacing: 4, leftGain: -1.85, rightGain: -1.58),
        .init(
            name: "cathedral", rt60: 5.00, highFrequencyRatio: 0.4, preDelay: 40, size: 48, earlyLevel: 0.25,
            earlySpacing: 12, leftGain: 1.75, rightGain: 2.01),
        .init(
            name: "largeRoom2", rt60: 1.20, highFrequencyRatio: 0.45, preDelay: 10, size: 19, earlyLevel: 0.45,
            earlySpacing: 4.5, leftGain: -2.67, rightGain: -2.42),
        .init(
            name: "mediumHall2", rt60: 1.80, highFrequencyRatio: 0.5, preDelay: 18, size: 26, earlyLevel: 0.3,
            earlySpacing: 6.5, leftGain: 0.45, rightGain: 0.69),
        .init(
            name: "mediumHall3", rt60: 2.00, highFrequencyRatio: 0.6, preDelay: 12, size: 22, earlyLevel: 0.35,
            earlySpacing: 5.5, leftGain: -0.83, rightGain: -0.58),
        .init(
            name: "largeHall2", rt60: 3.00, highFrequencyRatio: 0.5, preDelay: 28, size: 38, earlyLevel: 0.3,
            earlySpacing: 9, leftGain: 0.41, rightGain: 0.67)
    ]

    /// Line length ratios of the 16-line network (roughly geometric, 1 … 2.08).
    public static let lineRatios: [Double] = [
        1.000, 1.047, 1.113, 1.165, 1.232, 1.291, 1.362, 1.418,
        1.497, 1.563, 1.641, 1.712, 1.801, 1.889, 1.978, 2.081
    ]

    /// Early reflection tap times (multiples of `earlySpacing`, after 1 ms) and gains, left then right.
    public static let earlyTapTimes: [Double] = [
        0.00, 0.43, 0.97, 1.51, 2.26, 2.93, 3.74, 4.61,
        0.19, 0.71, 1.23, 1.86, 2.55, 3.31, 4.13, 5.02
    ]
    public static let earlyTapGains: [Double] = [
        0.80, -0.68, 0.58, 0.49, -0.42, 0.36, -0.30, 0.26,
        0.78, 0.66, -0.56, 0.48, -0.41, -0.35, 0.29, -0.25
    ]

    /// Input diffusers: Schroeder all-pass delays in ms and gains, 4 per side (left, then right). The
    /// left chain is Dattorro's input diffusion (142, 107, 379, 277 samples at 29.761 kHz; gains 0.75,
    /// 0.75, 0.625, 0.625); the right uses slightly different lengths.
    public static let diffuserDelays: [Double] = [4.771, 3.595, 12.735, 9.307, 4.993, 3.781, 12.149, 9.829]
    public static let diffuserGains: [Double] = [0.75, 0.75, 0.625, 0.625, 0.75, 0.75, 0.625, 0.625]
}

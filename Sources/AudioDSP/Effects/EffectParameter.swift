// Control side. Plain descriptions of every effect parameter (name, unit, range, default), from which
// the graph layer builds its ParameterSpec tables. Nothing here runs on the render thread.

/// One user-facing effect parameter. Names and units follow AVFAudio (inventory §5).
public struct EffectParameter: Sendable, Equatable {
    /// The parameter's name in patches and OSC, e.g. `wetDryMix`.
    public let name: String
    /// Unit shown to users: `s`, `Hz`, `dB`, `%`, `octaves`, `bool`, `index`.
    public let unit: String
    public let minimum: Double
    /// Upper bound; when `isMaximumNyquist` it is replaced by `sampleRate / 2`.
    public let maximum: Double
    public let isMaximumNyquist: Bool
    public let defaultValue: Double
    /// True when a change glides instead of jumping.
    public let isSmoothed: Bool
    /// Names of the values of an `index` parameter (`filterType`), in index order; empty otherwise.
    public let valueNames: [String]
    public let summary: String

    public init(
        _ name: String, unit: String, minimum: Double, maximum: Double, isMaximumNyquist: Bool = false,
        default defaultValue: Double, isSmoothed: Bool, valueNames: [String] = [], _ summary: String
    ) {
        self.name = name
        self.unit = unit
        self.minimum = minimum
        self.maximum = maximum
        self.isMaximumNyquist = isMaximumNyquist
        self.defaultValue = defaultValue
        self.isSmoothed = isSmoothed
        self.valueNames = valueNames
        self.summary = summary
    }

    /// The valid range at `sampleRate`.
    public func range(sampleRate: Double) -> ClosedRange<Double> {
        minimum...(isMaximumNyquist ? sampleRate / 2 : maximum)
    }

    /// `bypass`, common to every effect: crossfades to the dry input over 10 ms.
    public static let bypass = EffectParameter(
        "bypass", unit: "bool", minimum: 0, maximum: 1, default: 0, isSmoothed: true,
        "true passes the input through unchanged (10 ms crossfade; bit-exact once settled)")
}

// Control side. A synthetic buffer description (`generate:` in a patch's buffer entry).

/// Parameters for a buffer the engine synthesizes instead of loading a file.
///
/// The parser enforces the ranges below. Whether `frequency` is below the Nyquist frequency
/// depends on the sample rate and is checked later.
public struct PatchGenerator: Sendable, Equatable {
    /// The waveform to synthesize.
    public enum Waveform: String, Sendable, CaseIterable {
        case sine, square, saw, triangle, noise, silence, click

        /// Whether the waveform has a pitch and so needs a `frequency` (sine, square, saw, triangle).
        public var isPeriodic: Bool {
            switch self {
            case .sine, .square, .saw, .triangle: true
            case .noise, .silence, .click: false
            }
        }
    }

    /// Amplitude used when `amplitude` is not written.
    public static let defaultAmplitude = 0.5
    /// Channel count used when `channels` is not written.
    public static let defaultChannelCount = 1
    /// Valid amplitudes (linear, peak).
    public static let amplitudeRange: ClosedRange<Double> = 0...1
    /// Valid channel counts.
    public static let channelCountRange: ClosedRange<Int> = 1...64
    /// The longest duration accepted, in seconds (an hour keeps a generated buffer bounded).
    public static let maximumDuration = 3600.0

    /// The waveform.
    public var waveform: Waveform
    /// Frequency in Hz, > 0; present exactly when `waveform.isPeriodic`.
    public var frequency: Double?
    /// Length in seconds, 0 < duration ≤ ``maximumDuration``.
    public var duration: Double
    /// Peak linear amplitude in ``amplitudeRange`` (key `amplitude`, default 0.5).
    public var amplitude: Double
    /// Number of identical channels in ``channelCountRange`` (key `channels`, default 1).
    public var channelCount: Int
    /// Where the `generate` mapping starts; `nil` for a generator built in code.
    public var location: SourceLocation?
    /// Where each written value starts, keyed by its YAML key (`waveform`, `frequency`, …).
    public var fieldLocations: [String: SourceLocation]

    /// Creates a generator; locations default to empty (built in code, not read from a file).
    public init(
        waveform: Waveform, frequency: Double? = nil, duration: Double,
        amplitude: Double = PatchGenerator.defaultAmplitude, channelCount: Int = PatchGenerator.defaultChannelCount,
        location: SourceLocation? = nil, fieldLocations: [String: SourceLocation] = [:]
    ) {
        self.waveform = waveform
        self.frequency = frequency
        self.duration = duration
        self.amplitude = amplitude
        self.channelCount = channelCount
        self.location = location
        self.fieldLocations = fieldLocations
    }

    /// A copy with every location removed, for comparisons that ignore where things were written.
    public func withoutLocations() -> PatchGenerator {
        PatchGenerator(
            waveform: waveform, frequency: frequency, duration: duration,
            amplitude: amplitude, channelCount: channelCount
        )
    }
}

// Control side. Why SampleRateConverter refused or failed a conversion of in-memory audio.

/// Failure of `SampleRateConverter.convert`. The reader wraps it into
/// `AudioFileError.rateConversionFailed`, adding the file path.
public struct SampleRateConversionError: Error, CustomStringConvertible, Equatable {
    /// What went wrong, for example "source sample rate must be positive, not 0 Hz" or soxr's
    /// own message.
    public var reason: String

    public init(reason: String) {
        self.reason = reason
    }

    public var description: String { "Sample-rate conversion failed: \(reason)." }
}

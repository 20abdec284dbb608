// Control side. How PCM containers (WAV, AIFF, CAF, FLAC) store each sample on disk.

/// Sample encoding for PCM containers. Compressed formats (Ogg Vorbis, Opus, MP3) ignore it.
public enum AudioSampleEncoding: String, Sendable, CaseIterable, Equatable {
    /// IEEE 754 32-bit float: exact for any `Float` sample, including values beyond ±1.
    case float32
    /// Signed 16-bit integer: quantization step 2⁻¹⁵ (≈ -90 dBFS); values beyond ±1 are clipped.
    case int16
    /// Signed 24-bit integer: quantization step 2⁻²³ (≈ -138 dBFS); values beyond ±1 are clipped.
    case int24

    /// Bits per stored sample: 32, 16 or 24.
    public var bitDepth: Int {
        switch self {
        case .float32: 32
        case .int16: 16
        case .int24: 24
        }
    }

    /// True for the integer encodings, whose writes are clipped to [-1, 1].
    public var isInteger: Bool { self != .float32 }
}

// Control side. The container/codec combinations AudioFileWriter can produce, and how a file
// name's extension maps to one of them.

/// A file format the writer can produce (the reader accepts these and everything else libsndfile
/// decodes).
public enum AudioFileFormat: String, Sendable, CaseIterable, Equatable {
    /// RIFF WAVE (`.wav`). PCM or float; no size limit below 4 GiB of sample data.
    case wav
    /// Apple/SGI AIFF (`.aif`, `.aiff`, `.aifc`).
    case aiff
    /// Apple Core Audio Format (`.caf`).
    case caf
    /// Free Lossless Audio Codec (`.flac`). Integer samples only (`.int16` or `.int24`).
    case flac
    /// Vorbis in an Ogg container (`.ogg`, `.oga`). Lossy.
    case oggVorbis
    /// Opus in an Ogg container (`.opus`). Lossy; only 8, 12, 16, 24 and 48 kHz.
    case opus
    /// MPEG-1/2 Layer III (`.mp3`). Lossy; at most 2 channels; MPEG sample rates only.
    case mp3

    /// Chooses a format from a file extension, case-insensitively, with or without the leading dot.
    /// Returns nil for extensions this module does not write.
    public init?(pathExtension: String) {
        var ext = pathExtension.lowercased()
        if ext.hasPrefix(".") { ext.removeFirst() }
        switch ext {
        case "wav", "wave": self = .wav
        case "aif", "aiff", "aifc": self = .aiff
        case "caf": self = .caf
        case "flac": self = .flac
        case "ogg", "oga": self = .oggVorbis
        case "opus": self = .opus
        case "mp3": self = .mp3
        default: return nil
        }
    }

    /// Chooses a format from the extension of the last path component of `path`; nil when the name
    /// has no extension or an unknown one.
    public init?(path: String) {
        let name = path.split(separator: "/", omittingEmptySubsequences: false).last.map(String.init) ?? path
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return nil }
        self.init(pathExtension: String(name[name.index(after: dot)...]))
    }

    /// Human-readable name, the same string `AudioFileInfo.formatName` reports for such a file.
    public var displayName: String {
        switch self {
        case .wav: "WAV"
        case .aiff: "AIFF"
        case .caf: "CAF"
        case .flac: "FLAC"
        case .oggVorbis: "Ogg Vorbis"
        case .opus: "Opus"
        case .mp3: "MP3"
        }
    }

    /// True for formats that store samples exactly (up to the chosen encoding's quantization).
    public var isLossless: Bool {
        switch self {
        case .wav, .aiff, .caf, .flac: true
        case .oggVorbis, .opus, .mp3: false
        }
    }

    /// Encoding used when the caller passes none: `.float32` for WAV/AIFF/CAF, `.int24` for FLAC,
    /// nil for the lossy formats (which have no sample encoding).
    public var defaultEncoding: AudioSampleEncoding? {
        switch self {
        case .wav, .aiff, .caf: .float32
        case .flac: .int24
        case .oggVorbis, .opus, .mp3: nil
        }
    }

    /// Sample rates (Hz) the encoder accepts, or nil when any positive whole rate is allowed.
    public var supportedSampleRates: [Int]? {
        switch self {
        case .opus: [8000, 12000, 16000, 24000, 48000]
        case .mp3: [8000, 11025, 12000, 16000, 22050, 24000, 32000, 44100, 48000]
        case .wav, .aiff, .caf, .flac, .oggVorbis: nil
        }
    }

    /// Largest channel count the encoder accepts, or nil when libsndfile's own limit applies.
    public var maximumChannelCount: Int? {
        switch self {
        case .mp3: 2
        case .flac: 8
        case .opus: 8
        case .wav, .aiff, .caf, .oggVorbis: nil
        }
    }
}

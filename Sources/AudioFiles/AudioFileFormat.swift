// Control side. The container/codec combinations AudioFileWriter can produce, and how a file
// name's extension maps to one of them.

/// A file format the writer can produce (the reader accepts these, everything else libsndfile
/// decodes and, through FFmpeg, everything else FFmpeg decodes).
///
/// libsndfile writes the first seven; FFmpeg (libavformat, libavcodec) writes AAC and ALAC.
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
    /// AAC-LC (FFmpeg's native `aac` encoder) in an MPEG-4 audio file (`.m4a`, `.mp4`). Lossy;
    /// gapless: the edit list records the encoder delay and the exact length, so the reader
    /// returns exactly the frames written.
    case aacM4A
    /// Apple Lossless in an MPEG-4 audio file. Never chosen from an extension (`.m4a` means AAC);
    /// pass it explicitly. Integer samples only (`.int16` or `.int24`).
    case alacM4A
    /// AAC-LC in a raw ADTS stream (`.aac`). Lossy and **not gapless**: ADTS has no place for the
    /// encoder delay or the length, so a reader gets 1024 extra frames at the start and up to
    /// 1023 at the end. Prefer `.aacM4A` for assets.
    case aacADTS

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
        case "m4a", "mp4": self = .aacM4A
        case "aac", "adts": self = .aacADTS
        default: return nil
        }
    }

    /// Chooses a format from a name a user writes (patch `recorders:`, OSC `/recorder/new`): any
    /// extension `init(pathExtension:)` knows, "alac" for ALAC in M4A, or a case name (`alacM4A`).
    public init?(name: String) {
        if name.lowercased() == "alac" {
            self = .alacM4A
        } else if let format = AudioFileFormat(pathExtension: name) ?? AudioFileFormat(rawValue: name) {
            self = format
        } else {
            return nil
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
        case .aacM4A: "AAC (M4A)"
        case .alacM4A: "ALAC (M4A)"
        case .aacADTS: "AAC (ADTS)"
        }
    }

    /// The usual file extension, without the dot: "wav", "aiff", "caf", "flac", "ogg", "opus",
    /// "mp3", "m4a" (AAC and ALAC) or "aac".
    public var fileExtension: String {
        switch self {
        case .wav: "wav"
        case .aiff: "aiff"
        case .caf: "caf"
        case .flac: "flac"
        case .oggVorbis: "ogg"
        case .opus: "opus"
        case .mp3: "mp3"
        case .aacM4A, .alacM4A: "m4a"
        case .aacADTS: "aac"
        }
    }

    /// True for the formats FFmpeg encodes (AAC, ALAC); false for libsndfile's.
    var isEncodedByFFmpeg: Bool {
        switch self {
        case .aacM4A, .alacM4A, .aacADTS: true
        case .wav, .aiff, .caf, .flac, .oggVorbis, .opus, .mp3: false
        }
    }

    /// True for formats that store samples exactly (up to the chosen encoding's quantization).
    public var isLossless: Bool {
        switch self {
        case .wav, .aiff, .caf, .flac, .alacM4A: true
        case .oggVorbis, .opus, .mp3, .aacM4A, .aacADTS: false
        }
    }

    /// Encoding used when the caller passes none: `.float32` for WAV/AIFF/CAF, `.int24` for FLAC
    /// and ALAC, nil for the lossy formats (which have no sample encoding).
    public var defaultEncoding: AudioSampleEncoding? {
        switch self {
        case .wav, .aiff, .caf: .float32
        case .flac, .alacM4A: .int24
        case .oggVorbis, .opus, .mp3, .aacM4A, .aacADTS: nil
        }
    }

    /// Why this format cannot store samples as `encoding`, as a clause ("FLAC stores integers only;
    /// use int16 or int24"), or nil when it can: WAV, AIFF and CAF take every encoding, FLAC and ALAC
    /// the integer ones, and the lossy formats none (they have no sample encoding; `quality` or a bit
    /// rate sets their size), so asking one for an encoding is refused rather than ignored.
    public func encodingRefusal(_ encoding: AudioSampleEncoding) -> String? {
        switch self {
        case .wav, .aiff, .caf:
            nil
        case .flac, .alacM4A:
            encoding == .float32 ? "\(displayName) stores integers only; use int16 or int24" : nil
        case .oggVorbis, .opus, .mp3, .aacM4A, .aacADTS:
            "\(displayName) is lossy and has no sample encoding (\(encoding.rawValue) would be ignored); "
                + "leave the encoding out and set the quality instead"
        }
    }

    /// Sample rates (Hz) the encoder accepts, or nil when any positive whole rate is allowed.
    public var supportedSampleRates: [Int]? {
        switch self {
        case .opus: [8000, 12000, 16000, 24000, 48000]
        case .mp3: [8000, 11025, 12000, 16000, 22050, 24000, 32000, 44100, 48000]
        case .aacM4A, .aacADTS: [8000, 11025, 12000, 16000, 22050, 24000, 32000, 44100, 48000, 64000, 88200, 96000]
        case .wav, .aiff, .caf, .flac, .oggVorbis, .alacM4A: nil
        }
    }

    /// Largest channel count the encoder accepts, or nil when libsndfile's own limit applies.
    /// AAC and ALAC take 1–8 channels, stored in FFmpeg's standard layout for that count (for
    /// example 5.1 for 6) and read back in the same order.
    public var maximumChannelCount: Int? {
        switch self {
        case .mp3: 2
        case .flac, .opus, .aacM4A, .aacADTS, .alacM4A: 8
        case .wav, .aiff, .caf, .oggVorbis: nil
        }
    }
}

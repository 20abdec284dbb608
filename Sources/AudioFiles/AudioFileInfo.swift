// Control side. What a file's header says about it, as read by AudioFileReader.info(path:)
// without decoding the audio.

/// Description of an audio file, taken from its header.
public struct AudioFileInfo: Sendable, Equatable {
    /// The path the information was read from, as given by the caller.
    public var path: String

    /// Container (or, for Ogg and MPEG, codec family) name: "WAV", "AIFF", "CAF", "FLAC",
    /// "Ogg Vorbis", "Opus", "MP3", or libsndfile's own name for rarer formats (for example
    /// "AU (Sun/NeXT)").
    public var formatName: String

    /// Sample encoding or codec, in libsndfile's words: "Signed 16 bit PCM", "32 bit float",
    /// "Vorbis", "Opus", "MPEG Layer III", …
    public var codecName: String

    /// The writer's format that matches this file, or nil when the file is in another format.
    public var format: AudioFileFormat?

    /// Frames per second, in Hz, as the decoder delivers them. For Opus this is the rate recorded
    /// in the stream header (the codec runs at 48 kHz internally; libsndfile decodes at the
    /// original rate when it is one of 8, 12, 16, 24 or 48 kHz).
    public var sampleRate: Double

    /// Number of channels (≥ 1).
    public var channelCount: Int

    /// Number of frames (samples per channel). Exact for PCM, FLAC, Vorbis and Opus; for MP3 it
    /// comes from the LAME/Xing header when there is one, otherwise it is mpg123's estimate, and
    /// `AudioFileReader.load` returns however many frames actually decode.
    public var frameCount: Int

    /// Bits per stored sample for uncompressed and lossless encodings (8, 16, 24, 32, 64; 32 and 64
    /// also for float), nil for lossy codecs that have none.
    public var bitDepth: Int?

    /// Length in seconds: `frameCount / sampleRate`.
    public var duration: Double {
        sampleRate > 0 ? Double(frameCount) / sampleRate : 0
    }

    public init(
        path: String,
        formatName: String,
        codecName: String,
        format: AudioFileFormat?,
        sampleRate: Double,
        channelCount: Int,
        frameCount: Int,
        bitDepth: Int?
    ) {
        self.path = path
        self.formatName = formatName
        self.codecName = codecName
        self.format = format
        self.sampleRate = sampleRate
        self.channelCount = channelCount
        self.frameCount = frameCount
        self.bitDepth = bitDepth
    }
}

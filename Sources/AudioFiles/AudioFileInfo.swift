// Control side. What a file's header says about it, as read by AudioFileReader.info(path:)
// without decoding the audio.

/// Description of an audio file, taken from its header.
public struct AudioFileInfo: Sendable, Equatable {
    /// The path the information was read from, as given by the caller.
    public var path: String

    /// Container (or, for Ogg and MPEG, codec family) name: "WAV", "AIFF", "CAF", "FLAC",
    /// "Ogg Vorbis", "Opus", "MP3", "AAC (M4A)", "ALAC (M4A)", "AAC (ADTS)" (the writer's
    /// `AudioFileFormat.displayName`), libsndfile's own name for rarer formats (for example
    /// "AU (Sun/NeXT)"), or for files only FFmpeg opens "MPEG-4", "QuickTime" or FFmpeg's
    /// demuxer name ("Matroska / WebM", …).
    public var formatName: String

    /// Sample encoding or codec: libsndfile's words for the formats it reads ("Signed 16 bit PCM",
    /// "32 bit float", "Vorbis", "Opus", "MPEG Layer III", …); for files decoded by FFmpeg "AAC LC",
    /// "HE-AAC", "ALAC (Apple Lossless Audio Codec)" or another FFmpeg codec name.
    public var codecName: String

    /// The writer's format that matches this file, or nil when the file is in another format.
    public var format: AudioFileFormat?

    /// Frames per second, in Hz, as the decoder delivers them. For Opus this is the rate recorded
    /// in the stream header (the codec runs at 48 kHz internally; libsndfile decodes at the
    /// original rate when it is one of 8, 12, 16, 24 or 48 kHz).
    public var sampleRate: Double

    /// Number of channels (≥ 1).
    public var channelCount: Int

    /// Number of valid frames (samples per channel): what `AudioFileReader.load` returns, with
    /// encoder priming and remainder already removed. Exact for PCM, FLAC, Vorbis, Opus and
    /// MP4/M4A (AAC, ALAC); for MP3 it comes from the LAME/Xing header when there is one,
    /// otherwise it is mpg123's estimate, and `load` returns however many frames actually
    /// decode. For other FFmpeg-decoded files it is counted by decoding the file once.
    public var frameCount: Int

    /// Bits per stored sample for uncompressed and lossless encodings (8, 16, 24, 32, 64; 32 and 64
    /// also for float), nil for lossy codecs that have none.
    public var bitDepth: Int?

    /// Average bits per second of the stored stream for compressed encodings (AAC, ALAC, FLAC,
    /// Vorbis, Opus, MP3): the container's figure when it gives one, otherwise file size × 8 /
    /// duration (which includes headers). Nil for uncompressed PCM.
    public var bitRate: Int?

    /// Frames the encoder put before the audio (its delay, "priming"; 2112 for Apple's AAC
    /// encoder, 1024 for FFmpeg's), which the reader removes. 0 when there are none or when
    /// libsndfile removes them without reporting them (Vorbis, Opus pre-skip, MP3 with a LAME
    /// tag).
    public var primingFrameCount: Int

    /// Frames the codec produces after the audio (padding of the last packet, "remainder"), which
    /// the reader removes. 0 when there are none or libsndfile removes them itself.
    public var remainderFrameCount: Int

    /// Same as `frameCount`: the frames that are audio, with priming and remainder removed.
    public var validFrameCount: Int { frameCount }

    /// Frames the codec decodes in all: priming + valid + remainder (for AAC a multiple of 1024).
    public var totalFrameCount: Int { primingFrameCount + frameCount + remainderFrameCount }

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
        bitDepth: Int?,
        bitRate: Int? = nil,
        primingFrameCount: Int = 0,
        remainderFrameCount: Int = 0
    ) {
        self.path = path
        self.formatName = formatName
        self.codecName = codecName
        self.format = format
        self.sampleRate = sampleRate
        self.channelCount = channelCount
        self.frameCount = frameCount
        self.bitDepth = bitDepth
        self.bitRate = bitRate
        self.primingFrameCount = primingFrameCount
        self.remainderFrameCount = remainderFrameCount
    }
}

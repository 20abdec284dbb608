// Control side. How a `Recorder` encodes its file and how much it buffers between the engine and the disk.
import AudioFiles

/// File format and buffering of a `Recorder` (the counterpart of AVAudioRecorder's `settings`).
///
/// The sample rate and channel count are not settings: a recording always runs at the engine rate
/// with the recorded node's channel count.
public struct RecorderSettings: Sendable, Equatable {
    /// Container and codec; nil chooses from the file extension (`.wav`, `.caf`, `.flac`, `.aif`/`.aiff`,
    /// `.ogg`, `.opus`, `.mp3`, `.m4a`, `.aac`). Every format reads back after a killed process (M4A is
    /// written as fragmented MP4, MP3 at a constant bit rate; `RECORDER.md`, "Crash safety").
    public var format: AudioFileFormat?
    /// Sample encoding for the lossless formats; nil = the format's default (float32 for WAV/AIFF/CAF,
    /// int24 for FLAC and ALAC, which store integers only). `Recorder` refuses float32 for FLAC and ALAC,
    /// and any encoding for the lossy formats, which have none.
    public var encoding: AudioSampleEncoding?
    /// 0 (smallest file) … 1 (best sound) for Ogg Vorbis, Opus and MP3; ignored otherwise.
    public var quality: Double
    /// Frames per tap block (1 … 65536). Smaller blocks make `pause()`/`stop()` land closer to the
    /// moment they are called (at most one block of lag) at the price of more, smaller hand-overs.
    public var tapFrameCount: Int
    /// How far the disk thread may fall behind, in seconds of audio (> 0). Beyond it incoming blocks are
    /// dropped and reported as `RecorderError.framesLost(…, cause: .writerBehind)`; memory stays bounded
    /// by this many seconds × channels × 4 bytes.
    public var maximumBacklog: Double
    /// Longest time, in seconds (> 0, ≤ 1), between header updates while frames are being written. A
    /// process killed at any moment leaves a WAV/AIFF/CAF file whose header covers all but at most this
    /// long plus the backlog at that moment.
    public var headerUpdateInterval: Double
    /// What a block that finds the backlog full does: false (live recording) drops it, so the thread
    /// calling `Engine.poll()` never waits for the disk; true (an offline render, where that thread
    /// is the render itself) waits until the disk thread has written enough, so nothing is lost and
    /// the render runs no faster than the disk.
    public var waitsForWriter: Bool

    public init(
        format: AudioFileFormat? = nil,
        encoding: AudioSampleEncoding? = nil,
        quality: Double = AudioFileWriter.defaultQuality,
        tapFrameCount: Int = 256,
        maximumBacklog: Double = 4,
        headerUpdateInterval: Double = 0.5,
        waitsForWriter: Bool = false
    ) {
        self.format = format
        self.encoding = encoding
        self.quality = quality
        self.tapFrameCount = tapFrameCount
        self.maximumBacklog = maximumBacklog
        self.headerUpdateInterval = headerUpdateInterval
        self.waitsForWriter = waitsForWriter
    }
}

// Control side. Loads audio files into memory through libsndfile or, for what libsndfile does not
// recognise (AAC, ALAC, MP4, …), FFmpeg, optionally converting the sample rate with soxr.
// Blocking file I/O: never call it from the render thread.

/// Reads audio files: WAV, AIFF, CAF, FLAC, Ogg Vorbis, Opus, MP3 and the other formats
/// libsndfile 1.2.0 decodes (AU, Wave64, RF64, …) through libsndfile; AAC and ALAC in MP4/M4A,
/// ADTS AAC and everything else FFmpeg 5.1 decodes through FFmpeg. libsndfile is always tried
/// first; FFmpeg only sees files libsndfile reports as unrecognised or unsupported.
///
/// Gapless: encoder priming and remainder frames are removed, so a compressed file decodes to
/// exactly the frames it was made from (MP4 edit lists and iTunSMPB tags; Ogg granule positions,
/// Opus pre-skip and LAME tags inside libsndfile). See `AudioFileInfo.primingFrameCount`.
///
/// Integer PCM is scaled into [-1, 1) (a sample of -2^(b-1) reads as -1.0). Float files are read
/// as stored.
///
/// Truncation policy (docs/AUDIO_FILES.md): a file that declares more frames than it holds is
/// reported with `AudioFileError.truncated`, never half-loaded. "Declares" means the
/// WAV/RF64/Wave64/AIFF/CAF header, FLAC's STREAMINFO, the Ogg end position, or an MP3
/// Xing/Info/VBRI tag (MP3 within 1681 frames). Formats whose length is not declared anywhere (an
/// Ogg file cut between pages, an untagged MP3) load as a shorter file; `inspect(path:verify:)`
/// checks more (the end of a FLAC or Ogg stream, an MP3 tag's byte count) without decoding.
public enum AudioFileReader {
    /// Most samples (frames × channels) `load` holds in memory: 2³¹, i.e. 8 GiB of 32-bit floats,
    /// about 6 hours of 48 kHz stereo. Larger requests, including headers that claim absurd
    /// lengths, throw `AudioFileError.tooLarge` before anything is allocated.
    public static let maximumSampleCount = 1 << 31
    /// Most channels `load` accepts (the engine's buses carry at most 64).
    public static let maximumChannelCount = 64

    /// Reads a file's header without decoding its audio.
    ///
    /// Cost: one open and a header parse (an MP4 is parsed twice, with and without its edit
    /// list); for MP3 without length information and for FFmpeg formats other than MP4 (ADTS,
    /// Matroska, …), one full decode to count frames.
    /// - Throws: `AudioFileError` naming `path`: not found, permission denied, not a regular file,
    ///   empty, unsupported format, corrupt header or truncated (the header claims more frames than
    ///   the file holds).
    public static func info(path: String) throws(AudioFileError) -> AudioFileInfo {
        try openSession(path: path).describe()
    }

    /// Decodes a file, or a region of it, into memory.
    ///
    /// - Parameters:
    ///   - path: the file to read.
    ///   - targetSampleRate: when given and different from the file's rate, the decoded region is
    ///     converted once with soxr (high quality, linear phase) to this rate, in Hz (> 0). The
    ///     result then has `round(frames × target / source)` frames, aligned with the source
    ///     (no added latency, no lost tail).
    ///   - startFrame: first frame to read, in the file's own frames (0 ≤ startFrame ≤ file frames).
    ///   - frameCount: number of frames to read, in the file's own frames; nil reads to the end.
    ///     `startFrame + frameCount` must not exceed the file's frame count.
    /// - Returns: deinterleaved samples at `targetSampleRate` (or the file's rate).
    /// - Throws: the errors of `info(path:)`, plus `.regionOutOfRange`, `.corruptData` (a decoding
    ///   error mid-stream), `.truncated` (fewer frames decode than the file declares),
    ///   `.tooLarge` (more than `maximumSampleCount` samples), `.invalidArgument` (bad target
    ///   rate) and `.rateConversionFailed`.
    public static func load(
        path: String,
        targetSampleRate: Double? = nil,
        startFrame: Int = 0,
        frameCount: Int? = nil
    ) throws(AudioFileError) -> AudioData {
        if let targetSampleRate, !(targetSampleRate.isFinite && targetSampleRate > 0) {
            throw .invalidArgument(
                path: path, reason: "target sample rate must be a positive number of Hz, not \(targetSampleRate)")
        }
        let file = try openSession(path: path)
        // Buses carry at most 64 channels; a header claiming more is refused before anything is read.
        guard file.channelCount <= maximumChannelCount else {
            throw .unsupportedFormat(
                path: path, reason: "it has \(file.channelCount) channels; at most \(maximumChannelCount) can be played"
            )
        }
        let fileFrames = try file.frameCount()
        let isRegionValid =
            startFrame >= 0 && startFrame <= fileFrames
            && (frameCount.map { $0 >= 0 && $0 <= fileFrames - startFrame } ?? true)
        guard isRegionValid else {
            throw .regionOutOfRange(
                path: path, startFrame: startFrame, frameCount: frameCount, fileFrameCount: fileFrames)
        }

        // With an exact frame count, read exactly what is left; otherwise (MP3) read to the end
        // of the stream and judge the length afterwards.
        let tolerance = file.truncationTolerance
        let limit = frameCount ?? (tolerance == 0 ? fileFrames - startFrame : nil)
        let expectedFrames = limit ?? (fileFrames - startFrame)
        if expectedFrames > maximumSampleCount / max(1, file.channelCount) {
            throw .tooLarge(path: path, frameCount: expectedFrames, channelCount: file.channelCount)
        }
        let channels = try file.read(startFrame: startFrame, limit: limit)
        let endFrame = startFrame + (channels.first?.count ?? 0)
        if let frameCount, endFrame < startFrame + frameCount {
            throw .truncated(path: path, expectedFrames: startFrame + frameCount, availableFrames: endFrame)
        }
        if frameCount == nil, let tolerance, endFrame + tolerance < fileFrames {
            throw .truncated(path: path, expectedFrames: fileFrames, availableFrames: endFrame)
        }

        let data = AudioData(channels: channels, sampleRate: file.sampleRate)
        guard let targetSampleRate, targetSampleRate != data.sampleRate else { return data }
        do {
            return try SampleRateConverter().convert(data, to: targetSampleRate)
        } catch {
            throw .rateConversionFailed(path: path, targetSampleRate: targetSampleRate, reason: error.reason)
        }
    }

    /// Opens a decoding session: libsndfile first, FFmpeg when libsndfile does not recognise or
    /// support the file. When neither can, the error carries both libraries' reasons.
    static func openSession(path: String) throws(AudioFileError) -> any DecodingSession {
        try openEither(
            path: path, sndfile: { () throws(AudioFileError) -> any DecodingSession in try SndFileReader(path: path) },
            ffmpeg: { () throws(AudioFileError) -> any DecodingSession in try FFmpegReader(path: path) })
    }

    /// Opens a session for incremental decoding (streaming), with the same choice of library.
    static func openStreamingSession(path: String) throws(AudioFileError) -> any StreamingSession {
        try openEither(
            path: path, sndfile: { () throws(AudioFileError) -> any StreamingSession in try SndFileReader(path: path) },
            ffmpeg: { () throws(AudioFileError) -> any StreamingSession in
                try FFmpegReader(path: path, skipsPrimingManually: true)
            })
    }

    /// Runs `sndfile`, then `ffmpeg` when libsndfile does not recognise or support the file.
    static func openEither<Session>(
        path: String, sndfile: () throws(AudioFileError) -> Session, ffmpeg: () throws(AudioFileError) -> Session
    ) throws(AudioFileError) -> Session {
        let sndfileReason: String
        do {
            return try sndfile()
        } catch {
            guard case .unsupportedFormat(_, let reason) = error else { throw error }
            sndfileReason = reason
        }
        do {
            return try ffmpeg()
        } catch {
            guard case .unsupportedFormat(_, let reason) = error else { throw error }
            throw .unsupportedFormat(path: path, reason: "\(sndfileReason); \(reason)")
        }
    }
}

/// One open file being decoded (libsndfile or FFmpeg). Control side; not shared between threads.
protocol DecodingSession: AnyObject {
    /// Frames per second, in Hz, as decoded.
    var sampleRate: Double { get }
    /// Channels per frame (≥ 1).
    var channelCount: Int { get }
    /// How many frames the decoded length may fall short of `frameCount()` before the file counts
    /// as truncated; nil when the count is an estimate and any length is accepted.
    var truncationTolerance: Int? { get }
    /// Valid frames, from the header or by decoding once.
    func frameCount() throws(AudioFileError) -> Int
    /// The header description.
    func describe() throws(AudioFileError) -> AudioFileInfo
    /// What the header claims that the data cannot hold, found without decoding; nil when nothing is.
    func damage() -> AudioFileDamage?
    /// Decodes from `startFrame`, at most `limit` frames (nil = to the end).
    func read(startFrame: Int, limit: Int?) throws(AudioFileError) -> [[Float]]
}

/// A session that decodes incrementally into interleaved frames and can go back: the decoder
/// behind `AudioFileStreamReader`. Opened on the control side, then used by the disk thread.
protocol StreamingSession: DecodingSession {
    /// True when `seek(toFrame:)` lands exactly; otherwise the stream reopens the file and
    /// decodes up to the frame it wants.
    var seeksExactly: Bool { get }
    /// Bytes of decode buffers the session holds (the libraries' internal state not counted).
    var bufferBytes: Int { get }
    /// Positions the next read at valid frame `frame` (0 ≤ frame ≤ frame count).
    func seek(toFrame frame: Int) throws(AudioFileError)
    /// Decodes up to `frames` interleaved frames into `buffer`; 0 at the end.
    func readInterleaved(into buffer: UnsafeMutablePointer<Float>, frames: Int) throws(AudioFileError) -> Int
}

extension SndFileReader: DecodingSession {}
extension FFmpegReader: DecodingSession {}

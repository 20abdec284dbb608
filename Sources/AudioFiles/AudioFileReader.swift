// Control side. Loads audio files into memory through libsndfile, optionally converting the sample
// rate with soxr. Blocking file I/O: never call it from the render thread.

/// Reads audio files: WAV, AIFF, CAF, FLAC, Ogg Vorbis, Opus, MP3 and the other formats
/// libsndfile 1.2.0 decodes (AU, Wave64, RF64, …).
///
/// Integer PCM is scaled into [-1, 1) (a sample of -2^(b-1) reads as -1.0). Float files are read
/// as stored.
///
/// Truncation policy (docs/AUDIO_FILES.md): a file that declares more frames than it holds is
/// reported with `AudioFileError.truncated`, never half-loaded. "Declares" means the WAV/AIFF/CAF
/// header, FLAC's STREAMINFO, the Ogg end position, or an MP3 Xing/Info/VBRI tag (MP3 within
/// 1681 frames). Formats whose length is not declared anywhere (an Ogg file cut between pages,
/// an untagged MP3) cannot be told apart from a shorter file and load as such.
public enum AudioFileReader {
    /// Reads a file's header without decoding its audio.
    ///
    /// Cost: one open and a header parse (for MP3 without length information, one full decode to
    /// count frames).
    /// - Throws: `AudioFileError` naming `path`: not found, permission denied, not a regular file,
    ///   empty, unsupported format, corrupt header or truncated (the header claims more frames than
    ///   the file holds).
    public static func info(path: String) throws(AudioFileError) -> AudioFileInfo {
        try SndFileReader(path: path).describe()
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
    ///   `.invalidArgument` (bad target rate) and `.rateConversionFailed`.
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
        let file = try SndFileReader(path: path)
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
}

// Control side. Every way reading, converting or writing an audio file can fail. Each case carries
// the path so that the message a user sees always names the file.

import Foundation

/// Failure of `AudioFileReader`, `AudioFileWriter` or the reader's rate conversion.
///
/// `description` is a complete sentence for the user: it names the file (as the caller spelled
/// the path) and the reason. Nothing in this module traps on file content; every malformed input
/// ends up as one of these cases.
public enum AudioFileError: Error, CustomStringConvertible, Equatable {
    /// Nothing exists at `path`.
    case fileNotFound(path: String)
    /// The file exists but this process may not open it (read or write, per the operation).
    case permissionDenied(path: String)
    /// `path` names something other than a regular file; `kind` says what ("a directory",
    /// "a FIFO", "a device", "a socket").
    case notARegularFile(path: String, kind: String)
    /// The file has zero bytes.
    case emptyFile(path: String)
    /// libsndfile does not recognise the data, or recognises it but cannot decode its encoding;
    /// `reason` is libsndfile's `sf_strerror` text. Also used for writer formats it cannot produce.
    case unsupportedFormat(path: String, reason: String)
    /// The header parses but the data is damaged: a malformed header, or a decoder error in the
    /// middle of the stream. `reason` includes libsndfile's text and, when known, the frame.
    case corruptData(path: String, reason: String)
    /// The file declares `expectedFrames` frames (header, FLAC STREAMINFO, Ogg end position, MP3
    /// Xing tag) but only `availableFrames` are present or decodable (a cut-off copy, an
    /// interrupted write, a lost Ogg page). Nothing is returned for such a file.
    case truncated(path: String, expectedFrames: Int, availableFrames: Int)
    /// The requested region (`startFrame`, `frameCount` frames; nil = to the end) does not lie
    /// inside the file's `fileFrameCount` frames, or has a negative start or length.
    case regionOutOfRange(path: String, startFrame: Int, frameCount: Int?, fileFrameCount: Int)
    /// Decoding would hold more than `AudioFileReader.maximumSampleCount` samples in memory: the
    /// header claims `frameCount` frames of `channelCount` channels (an absurd or damaged header,
    /// or a recording too long to load; stream such files instead).
    case tooLarge(path: String, frameCount: Int, channelCount: Int)
    /// A parameter is unusable (non-positive sample rate, mismatched channel lengths, …).
    case invalidArgument(path: String, reason: String)
    /// soxr refused or failed the conversion to `targetSampleRate` (Hz).
    case rateConversionFailed(path: String, targetSampleRate: Double, reason: String)
    /// The operating system reported an I/O error while reading.
    case readFailed(path: String, reason: String)
    /// Creating, writing or finalising the output file failed.
    case writeFailed(path: String, reason: String)

    /// The file the error is about.
    public var path: String {
        switch self {
        case .fileNotFound(let path), .permissionDenied(let path), .notARegularFile(let path, _),
            .emptyFile(let path), .unsupportedFormat(let path, _), .corruptData(let path, _),
            .truncated(let path, _, _), .regionOutOfRange(let path, _, _, _), .tooLarge(let path, _, _),
            .invalidArgument(let path, _),
            .rateConversionFailed(let path, _, _), .readFailed(let path, _), .writeFailed(let path, _):
            path
        }
    }

    public var description: String {
        let file = "'\(path)'"
        switch self {
        case .fileNotFound:
            return "Cannot open \(file): no such file."
        case .permissionDenied:
            return "Cannot open \(file): permission denied."
        case .notARegularFile(_, let kind):
            return "Cannot open \(file): it is \(kind), not a regular file."
        case .emptyFile:
            return "Cannot read \(file): the file is empty (0 bytes)."
        case .unsupportedFormat(_, let reason):
            return "Cannot use \(file): unrecognised or unsupported audio format (\(reason))."
        case .corruptData(_, let reason):
            return "Cannot read \(file): the audio data is corrupt (\(reason))."
        case .truncated(_, let expected, let available):
            return "Cannot read \(file): the file is truncated; it declares \(expected) frames "
                + "but only \(available) are present."
        case .regionOutOfRange(_, let start, let count, let fileFrames):
            let requested = count.map { "\($0) frames from frame \(start)" } ?? "frames from frame \(start) to the end"
            return "Cannot read \(file): \(requested) requested, but the file has \(fileFrames) frames."
        case .tooLarge(_, let frames, let channels):
            let gibibytes = Double(frames) * Double(channels) * 4 / Double(1 << 30)
            return "Cannot load \(file): it declares \(frames) frames of \(channels) channels "
                + "(\(String(format: "%.1f", gibibytes)) GiB as 32-bit floats), more than the "
                + "\(AudioFileReader.maximumSampleCount) samples the reader holds in memory."
        case .invalidArgument(_, let reason):
            return "Cannot process \(file): \(reason)."
        case .rateConversionFailed(_, let rate, let reason):
            return "Cannot convert \(file) to \(formatRate(rate)) Hz: \(reason)."
        case .readFailed(_, let reason):
            return "Cannot read \(file): \(reason)."
        case .writeFailed(_, let reason):
            return "Cannot write \(file): \(reason)."
        }
    }
}

/// "44100" for whole rates, "44100.5" otherwise.
func formatRate(_ rate: Double) -> String {
    if rate.isFinite, rate == rate.rounded(), abs(rate) < 1e15 {
        return String(Int(rate))
    }
    return String(rate)
}

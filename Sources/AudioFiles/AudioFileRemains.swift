// Control side (or a recorder's disk thread). What a write that failed leaves where the caller
// expects its file, and how a full disk is told apart from other write failures.
import Foundation

/// What a failed `AudioFileWriter` left at its destination (`AudioFileWriter.abandon()`, or a
/// `close()` that threw: `AudioFileWriter.remains`).
public enum AudioFileRemains: Sendable, Equatable {
    /// A new file written in place (a recording) keeps the `frames` frames that reached the disk
    /// and decode: a valid WAV, AIFF or CAF whose header declares them, or a FLAC, Ogg, Opus, MP3
    /// or M4A file cut after them, as a killed recording is.
    case kept(frames: Int)
    /// A new file written in place held no audio that decodes (nothing reached the disk, or only
    /// a header): it was removed, so no empty or broken file is left.
    case removed
    /// The destination holds what it held before: an existing file (this write went beside it and
    /// was removed), a FIFO, a device or standard output (nothing was sent).
    case unchanged

    /// Frames the destination holds from this write: `frames` when kept, else 0.
    public var keptFrames: Int {
        if case .kept(let frames) = self { return frames }
        return 0
    }
}

enum DiskSpace {
    /// The reason given for any failed write to a disk with no space left.
    static let fullReason = "the disk is full (no space left on device)"

    /// True when the file system holding `descriptor` has no block left for this process (a write
    /// that failed there failed for want of space, whatever the library made of the error).
    static func isFull(descriptor: Int32) -> Bool {
        var status = statvfs()
        guard fstatvfs(descriptor, &status) == 0 else { return false }
        return status.f_blocks > 0 && (status.f_bavail == 0 || status.f_bfree == 0)
    }

    /// `error`, with its reason replaced by `fullReason` when it is a write failure on a full disk
    /// (libsndfile says "problem with initialization of the flac decoder" or "This is a bug in
    /// libsndfile" there; FFmpeg says "No space left on device" without the path).
    static func explained(_ error: AudioFileError, descriptor: Int32) -> AudioFileError {
        guard case .writeFailed(let path, _) = error, isFull(descriptor: descriptor) else { return error }
        return .writeFailed(path: path, reason: fullReason)
    }
}

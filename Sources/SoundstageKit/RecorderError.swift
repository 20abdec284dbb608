// Control side. Every way a recording can fail or lose audio; each case names the file.
import AudioFiles
import Foundation
import AudioGraph

/// Why frames did not reach a recording.
public enum RecorderFrameLossCause: String, Sendable, Equatable {
    /// The tap's ring filled because `Engine.poll()` was not called often enough
    /// (`EngineEvent.tapOverflow`); the render thread dropped the frames.
    case tapOverflow
    /// The disk thread fell more than `RecorderSettings.maximumBacklog` behind; the recorder dropped
    /// the frames instead of buffering without bound.
    case writerBehind
}

/// A refused recorder request or a problem reported while recording.
///
/// `description` is a complete sentence naming the file (as the caller spelled the path).
public enum RecorderError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Creating, writing, updating or finalising the file failed, or its format is unusable
    /// (unknown extension, a combination the encoder refuses). The wrapped error names the file.
    case file(AudioFileError)
    /// A write, header update or close failed during a take (a full disk, the file-size limit, an I/O
    /// error): the take ended there. `remains` says what is left where the take was going: a new file
    /// keeps the frames that reached the disk and decode, or is removed when none do; an existing
    /// file (or a FIFO, a device) is left as it was. `sampleRate` is the take's, for the message.
    case takeFailed(AudioFileError, remains: AudioFileRemains, sampleRate: Double)
    /// The engine refused: unknown node, no such output bus, tap out of range.
    case engine(path: String, EngineError)
    /// `frames` frames did not reach the file. The recording continues without them (no silence is
    /// inserted), so later audio moves earlier by that many frames.
    case framesLost(path: String, frames: Int, cause: RecorderFrameLossCause)
    /// The request does not fit the recorder's state (for example `deleteRecording()` while recording).
    case notAllowed(path: String, reason: String)
    /// A parameter is out of range (a negative duration, a settings value outside its range).
    case invalidArgument(path: String, reason: String)
    /// The recorded node was freed during a take: the take ended there and the file holds what was
    /// recorded until then.
    case nodeFreed(path: String, node: String)
    /// The engine's sample rate changed during a take (the JACK server came back at another rate): the
    /// take ended there, since its file's rate is fixed.
    case sampleRateChanged(path: String, from: Double, to: Double)

    /// The recording's file.
    public var path: String {
        switch self {
        case .file(let error), .takeFailed(let error, _, _): error.path
        case .engine(let path, _), .framesLost(let path, _, _), .notAllowed(let path, _),
            .invalidArgument(let path, _), .nodeFreed(let path, _), .sampleRateChanged(let path, _, _):
            path
        }
    }

    public var description: String {
        switch self {
        case .file(let error):
            return error.description
        case .takeFailed(let error, let remains, let rate):
            switch remains {
            case .kept(let frames):
                let seconds = String(format: "%.3f", Double(frames) / max(rate, 1))
                return "\(error.description) The file keeps the take's first \(frames) frames (\(seconds) s), "
                    + "which reached the disk."
            case .removed:
                return "\(error.description) Nothing of the take reached the disk, so the file was removed."
            case .unchanged:
                return "\(error.description) The take was discarded; '\(error.path)' is as it was before."
            }
        case .engine(let path, let error):
            return "Cannot record to '\(path)': \(error.message)."
        case .framesLost(let path, let frames, let cause):
            let why =
                switch cause {
                case .tapOverflow: "the engine was not polled often enough and the tap overflowed"
                case .writerBehind: "the disk could not keep up and the recorder's backlog was full"
                }
            return "Recording '\(path)' lost \(frames) frames: \(why)."
        case .notAllowed(let path, let reason):
            return "Cannot do that with the recording '\(path)': \(reason)."
        case .invalidArgument(let path, let reason):
            return "Cannot record to '\(path)': \(reason)."
        case .nodeFreed(let path, let node):
            return
                "Recording '\(path)' ended: its node '\(node)' was freed; the file holds what was recorded until then."
        case .sampleRateChanged(let path, let from, let to):
            return
                "Recording '\(path)' ended: the engine's sample rate changed from \(Int(from)) to \(Int(to)) Hz; "
                + "the file holds what was recorded at \(Int(from)) Hz."
        }
    }
}

// Control side. What `AudioFileReader.inspect` finds wrong with a file whose header reads: the data
// cannot hold what the header claims, or a full decode ends early or fails.

/// A mismatch between what a file declares and what it holds.
public struct AudioFileDamage: Sendable, Equatable, CustomStringConvertible {
    public enum Kind: String, Sendable {
        /// The file ends before the audio its header declares (a cut copy, an interrupted write).
        case truncated
        /// The data is there but does not agree with the header, or does not decode.
        case damaged
    }

    public var kind: Kind
    /// Frames the header declares, when it declares a length.
    public var expectedFrames: Int?
    /// Frames the data holds (exact after a full decode, otherwise estimated from the bytes
    /// present), when known.
    public var availableFrames: Int?
    /// What was found, as a clause for the user: "the header declares 88200 frames but only
    /// 44094 are present".
    public var reason: String

    public init(kind: Kind, expectedFrames: Int? = nil, availableFrames: Int? = nil, reason: String) {
        self.kind = kind
        self.expectedFrames = expectedFrames
        self.availableFrames = availableFrames
        self.reason = reason
    }

    /// "truncated: the header declares 88200 frames but only 44094 are present".
    public var description: String { "\(kind.rawValue): \(reason)" }

    /// The damage an open or a decode reported as an error, or nil for errors of another kind
    /// (a missing file, an unsupported format).
    public init?(_ error: AudioFileError) {
        switch error {
        case .truncated(_, let expected, let available):
            self.init(
                kind: .truncated, expectedFrames: expected, availableFrames: available,
                reason: "the header declares \(expected) frames but only \(available) are present")
        case .corruptData(_, let reason):
            self.init(kind: .damaged, reason: reason)
        default:
            return nil
        }
    }

    /// The error's own reason, without the sentence around it that names the file: what goes
    /// after "decoding fails at frame N:".
    public static func clause(of error: AudioFileError) -> String {
        switch error {
        case .corruptData(_, let reason), .readFailed(_, let reason):
            return reason
        default:
            let text = error.description
            return text.hasSuffix(".") ? String(text.dropLast()) : text
        }
    }
}

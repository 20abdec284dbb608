// Control side. `soundstage info --json`: one JSON object per file, printed as one JSON array.

import AudioFiles
import Foundation

/// The JSON form of `soundstage info`, for scripts. Keys are documented in docs/AUDIO_FILES.md.
enum InfoJSON {
    /// A pretty-printed JSON array (keys sorted) with one object per inspection, in order.
    static func text(for inspections: [AudioFileInspection]) throws -> String {
        let data = try JSONSerialization.data(
            withJSONObject: inspections.map(object), options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
        return String(decoding: data, as: UTF8.self)
    }

    /// One file's object. Header fields are present when the header could be read; `damaged` is
    /// always present; `reason` (and `expectedFrames` / `availableFrames` when known) when damaged;
    /// `error` when the file cannot be read at all; `verifiedFrames` (and `verifyError`,
    /// `verifyErrorFrame`) with --verify.
    static func object(_ inspection: AudioFileInspection) -> [String: Any] {
        var object: [String: Any] = ["path": inspection.path, "damaged": inspection.damage != nil]
        if let info = inspection.info {
            object["format"] = info.formatName
            object["codec"] = info.codecName
            object["sampleRate"] = info.sampleRate
            object["channels"] = info.channelCount
            object["frames"] = info.frameCount
            object["duration"] = info.duration
            object["priming"] = info.primingFrameCount
            object["remainder"] = info.remainderFrameCount
            if let bits = info.bitDepth { object["bitDepth"] = bits }
            if let rate = info.bitRate { object["bitRate"] = rate }
        }
        if let damage = inspection.damage {
            object["reason"] = damage.description
            if let expected = damage.expectedFrames { object["expectedFrames"] = expected }
            if let available = damage.availableFrames { object["availableFrames"] = available }
        }
        if let error = inspection.error { object["error"] = error.description }
        if let verification = inspection.verification {
            object["verifiedFrames"] = verification.decodedFrameCount
            if let error = verification.error, let frame = verification.errorFrame {
                object["verifyError"] = AudioFileDamage.clause(of: error)
                object["verifyErrorFrame"] = frame
            }
        }
        return object
    }
}

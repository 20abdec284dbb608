// Control side. Notifications a `Recorder` sends (AVAudioRecorderDelegate's two callbacks).

/// What a recorder reports through its event handler.
public enum RecorderEvent: Sendable, Equatable {
    /// The recording ended and its file is closed: by `stop()`, at the end of `record(forDuration:)`,
    /// or after a write error. `successfully` is false when writing or finalising the file failed.
    case finished(successfully: Bool)
    /// Something went wrong while recording: frames were lost (tap overflow, disk too slow) or a
    /// write failed. A write failure ends the recording (a `finished(successfully: false)` follows);
    /// lost frames do not.
    case error(RecorderError)
}

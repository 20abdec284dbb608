// Control side. Notifications an engine delivers from `poll()`.

/// Something that happened on the render side, translated to names.
public enum EngineEvent: Sendable, Equatable {
    /// A non-looping player reached the end of its region (it stopped and rewound).
    case playerFinished(node: String, sampleTime: Int64)
    /// A tap's consumer fell behind and `frames` frames were dropped.
    case tapOverflow(node: String, frames: Int)
    /// A timed command arrived while the render thread's pending list was full; it applied early.
    case timedCommandOverflow
}

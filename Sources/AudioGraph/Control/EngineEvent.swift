// Control side. Notifications an engine delivers from `poll()`.

/// Something that happened on the render side, translated to names.
public enum EngineEvent: Sendable, Equatable {
    /// A player's parameter material (`buffer`/`file`) played to its end without looping; the player
    /// paused and rewound, so `play` plays it again.
    case playerFinished(node: String, sampleTime: Int64)
    /// An item scheduled with a completion kind ended: played (`completed`) or dropped by an interrupt or
    /// a stop. `sampleTime` is the engine frame it ended on (plus output latency for `dataPlayedBack`).
    case scheduleCompleted(node: String, id: Int32, kind: CompletionKind, sampleTime: Int64, completed: Bool)
    /// An audioplayer finished playing (AVAudioPlayerDelegate's audioPlayerDidFinishPlaying): `successfully`
    /// is false when its material could not be played to the end (a decode error).
    case audioPlayerFinished(node: String, successfully: Bool)
    /// An audioplayer's file could not be decoded (audioPlayerDecodeErrorDidOccur).
    case audioPlayerDecodeError(node: String, message: String)
    /// An environment could not do what was asked (an HRTF set that does not load); it carries on with
    /// a fallback.
    case environmentProblem(node: String, message: String)
    /// A sound started with `playSound` ended: played to its end, or stolen by a newer sound.
    case soundFinished(id: Int, sampleTime: Int64, completed: Bool)
    /// A streamed file could not be decoded fast enough: `frames` frames were played as silence.
    case streamUnderrun(path: String, frames: Int)
    /// A streamed file failed to decode part-way; it ends where the error occurred.
    case streamFailed(path: String, message: String)
    /// A player's schedule was full (64 items) and the item was dropped.
    case playerQueueFull(node: String, id: Int32)
    /// A tap's consumer fell behind and `frames` frames were dropped.
    case tapOverflow(node: String, frames: Int)
    /// The tap `tapID` went with its node, which was freed (or replaced by a patch load): no more blocks
    /// come from it.
    case tapRemoved(node: String, tapID: Int)
    /// A timed command arrived while the render thread's pending list was full; it applied early.
    case timedCommandOverflow
    /// A muted voice processor heard its near end start (`started`) or stop talking (muted-talker
    /// detection, AVAudioVoiceProcessingSpeechActivityEvent).
    case voiceActivity(node: String, started: Bool)
}

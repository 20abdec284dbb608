// Control → render. Commands are small bit-copyable values applied by the render thread in order.
import AudioDSP

/// A change the render thread applies to node state. Pointers target state owned by control-side node
/// records, which are freed only after the render thread has consumed every command enqueued before the
/// node was removed (see `Graveyard`).
public enum Command: BitwiseCopyable {
    /// Glide a source's mixing gains to new targets.
    case setMixing(UnsafeMutablePointer<MixingState>, left: Float, right: Float, mono: Float, rampFrames: Int32)
    /// Glide a mixer's output volume to a target.
    case setOutputVolume(UnsafeMutablePointer<MixerState>, target: Float, rampFrames: Int32)
    /// Glide a connection's fade (0 silent … 1 connected).
    case setFade(UnsafeMutablePointer<ParameterRamp>, target: Float, rampFrames: Int32)
    /// Schedule an item on a player (append, interrupt, or interrupt at the loop point).
    case playerEnqueue(UnsafeMutablePointer<PlayerState>, PlayerScheduleItem, PlayerScheduleMode)
    /// Change whether the playing item loops, keeping its position.
    case playerSetLooping(UnsafeMutablePointer<PlayerState>, Bool)
    case playerPlay(UnsafeMutablePointer<PlayerState>)
    case playerPause(UnsafeMutablePointer<PlayerState>)
    /// Stop: unschedule everything and reset the player timeline to 0.
    case playerStop(UnsafeMutablePointer<PlayerState>)
    /// The item playing now finishes its pass (it stops looping; `pausesAtEnd` says whether the player
    /// pauses there) and every item queued after it is dropped (an audioplayer's `numberOfLoops` set
    /// while it plays).
    case playerFinishCurrent(UnsafeMutablePointer<PlayerState>, pausesAtEnd: Bool)
    /// Glide the player's mixing gains to silence over `frames`, then stop it exactly when silent (a
    /// stolen sound-pool voice). The stop is timed from when the render thread applies this command.
    case playerFadeOut(UnsafeMutablePointer<PlayerState>, UnsafeMutablePointer<MixingState>, frames: Int32)
    /// Set an effect parameter (kernel table index; glides inside the kernel).
    case effectParameter(EffectRef, index: Int32, value: Double)
    /// Bypass an effect (10 ms crossfade) or bring it back.
    case effectBypass(EffectRef, Bool)
    /// Clear an effect's tails.
    case effectReset(EffectRef)
    /// Move a voice of an environment to a new place (gains and directions glide).
    case spatialVoice(UnsafeMutablePointer<SpatialVoice>, SpatialVoiceTarget)
    /// Hand a voice a new HRTF convolver (nil: none); the old one is freed by the control side later.
    case spatialConvolver(UnsafeMutablePointer<SpatialVoice>, UnsafeMutablePointer<HRTFConvolver>?)
    /// Hand a voice a new ambience bed (nil: none); the old one is freed by the control side later.
    case spatialBed(UnsafeMutablePointer<SpatialVoice>, UnsafeMutablePointer<AmbienceBed>?)
    /// An environment's reverb on/off and return level, and its output volume (linear), gliding.
    case environmentMix(
        UnsafeMutablePointer<EnvironmentState>, reverbEnabled: Bool, reverbLevel: Float,
        outputVolume: Float, rampFrames: Int32)
    /// A parameter of an environment's reverb-return filter (EQ kernel index).
    case environmentFilter(UnsafeMutablePointer<EnvironmentState>, index: Int32, value: Double)
    /// An environment's reverb preset (index into `ReverbPreset`).
    case environmentReverbPreset(UnsafeMutablePointer<EnvironmentState>, Int32)
    /// Take the newest program from the slot (no-op when there is none). Sent after each publish.
    /// Changes a voice processor's setting.
    case voiceSetting(UnsafeMutablePointer<VoiceProcessorStage>, VoiceSetting, Bool)
    /// Sets the gain a voice processor's `duckOthers` brings other audio to (linear).
    case voiceDuckLevel(UnsafeMutablePointer<VoiceProcessorStage>, Float)
    /// The audio session's gain on the engine's output (ducking by other sessions, the silent switch).
    case sessionGain(target: Float, rampFrames: Int32)
    case takeProgram
    /// Drop every pending timed command that targets this state (sent before a node is freed).
    case purge(UnsafeMutableRawPointer)
}

/// A command with the engine sample time at which it must take effect (negative: as soon as possible).
public struct TimedCommand: BitwiseCopyable {
    public var time: Int64
    public var command: Command

    public init(time: Int64 = -1, _ command: Command) {
        self.time = time
        self.command = command
    }
}

/// Render → control notifications.
public enum RenderEvent: BitwiseCopyable, Equatable {
    /// A scheduled item left a player's queue at `sampleTime`: played to its end (`completed`), or
    /// dropped by an interrupt or a stop.
    case playerItemEnded(nodeID: Int32, itemID: Int32, sampleTime: Int64, completed: Bool)
    /// A player started, paused or stopped at engine `sampleTime`, when its timeline read `playerTime`;
    /// `commandCount` commands had been taken from the queue by then (the control side ignores a report
    /// older than the latest transport command it sent the player).
    case playerTransport(nodeID: Int32, sampleTime: Int64, playerTime: Int64, isPlaying: Bool, commandCount: Int)
    /// A player's schedule was full; the item was dropped.
    case playerQueueFull(nodeID: Int32, itemID: Int32)
    /// A timed command arrived while the pending list was full; it was applied at once instead.
    case timedCommandOverflow(sampleTime: Int64)
    /// The render thread installed program `generation` at engine `sampleTime` (players it leaves out
    /// stop advancing their timelines from that frame; players it brings in resume).
    case programInstalled(generation: Int, sampleTime: Int64)
    /// A muted voice processor heard its near end start or stop talking (muted-talker detection).
    case voiceActivity(nodeID: Int32, started: Bool)
}

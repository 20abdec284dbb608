// Control side, the API. AVAudioPlayerNode scheduling: buffers and file segments on a player's timeline.
// Each method takes the engine's lock and hands the work to `EngineCore` (EngineCore+Schedule.swift).
import AudioDSP

extension Engine {
    /// Schedules a region of a loaded buffer on a player. `atPlayerTime` is a frame on the player's
    /// timeline (0 at the first `play` after a stop; it does not advance while paused); nil plays right
    /// after what is queued. Returns the item id used in `.scheduleCompleted`.
    @discardableResult
    public func scheduleBuffer(
        _ node: String, buffer name: String, startFrame: Int = 0, frameCount: Int? = nil,
        atPlayerTime time: Int64? = nil, options: PlayerScheduleOptions = [], completion: CompletionKind? = nil,
        atSampleTime commandTime: Int64? = nil
    ) throws(EngineError) -> Int32 {
        try control.withLock { core throws(EngineError) in
            try core.scheduleBuffer(
                node, buffer: name, startFrame: startFrame, frameCount: frameCount, atPlayerTime: time,
                options: options, completion: completion, atSampleTime: commandTime)
        }
    }

    /// Schedules a segment of an audio file on a player. `startFrame` and `frameCount` count the file's
    /// own frames (AVAudioPlayerNode.scheduleSegment): 44,100 is one second into a 44.1 kHz file at
    /// any engine rate. A file or segment longer than `streamingThresholdSeconds` is streamed from disk
    /// by the disk thread (the render thread never reads files), in any format the engine reads; a
    /// looping stream loops its segment. Shorter ones are decoded once and converted to the engine rate.
    @discardableResult
    public func scheduleFile(
        _ node: String, path: String, startFrame: Int = 0, frameCount: Int? = nil, atPlayerTime time: Int64? = nil,
        options: PlayerScheduleOptions = [], completion: CompletionKind? = nil, atSampleTime commandTime: Int64? = nil
    ) throws(EngineError) -> Int32 {
        _ = try control.withLock { core throws(EngineError) in try core.schedulingRecord(node) }
        let material: FileMaterial
        if let handle = try openStream(
            path, startFrame: startFrame, frameCount: frameCount,
            looping: options.contains(.loops))
        {
            material = .stream(handle)
        } else {
            let buffer = try loadFile(path)
            let (start, count) = Engine.engineFrames(
                fileStart: startFrame, fileCount: frameCount,
                fileRate: buffer.sourceSampleRate ?? buffer.sampleRate,
                engineRate: buffer.sampleRate)
            material = .buffer(buffer, startFrame: start, frameCount: count)
        }
        return try control.withLock { core throws(EngineError) in
            try core.scheduleFile(
                node, material, atPlayerTime: time, options: options, completion: completion,
                atSampleTime: commandTime)
        }
    }

    /// The player time at engine `sampleTime`, or nil when the player is not playing.
    public func playerTime(_ node: String, forSampleTime sampleTime: Int64) throws(EngineError) -> Int64? {
        try control.withLock { core throws(EngineError) in try core.playerTime(node, forSampleTime: sampleTime) }
    }

    /// The engine sample time at which the player's timeline reaches `playerTime`, or nil when the player
    /// is not playing.
    public func sampleTime(_ node: String, forPlayerTime playerTime: Int64) throws(EngineError) -> Int64? {
        try control.withLock { core throws(EngineError) in try core.sampleTime(node, forPlayerTime: playerTime) }
    }

    /// The host's output latency in frames (JACK playback latency), for `dataPlayedBack` completions.
    public func setOutputLatency(frames: Int) {
        control.withLock { core in core.setOutputLatency(frames: frames) }
    }
}

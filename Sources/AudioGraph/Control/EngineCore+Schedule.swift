// Control side. AVAudioPlayerNode scheduling: buffers and file segments queued on a player's timeline,
// with completion notifications of the three kinds, and the parameter-driven material built on it.
import AudioDSP

/// When a schedule completion is reported (AVAudioPlayerNodeCompletionCallbackType).
public enum CompletionKind: String, Sendable, CaseIterable {
    /// The player has read all the item's data.
    case dataConsumed
    /// The item's last frame has been rendered.
    case dataRendered
    /// The item's last frame has reached the output, counting the host's output latency.
    case dataPlayedBack
}

/// How a scheduled item relates to what is queued (AVAudioPlayerNodeBufferOptions).
public struct PlayerScheduleOptions: OptionSet, Sendable {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }
    /// Loop the item until it is interrupted.
    public static let loops = PlayerScheduleOptions(rawValue: 1)
    /// Replace everything queued, including what is playing.
    public static let interrupts = PlayerScheduleOptions(rawValue: 2)
    /// Replace what is playing at its loop point (it finishes its current pass first).
    public static let interruptsAtLoop = PlayerScheduleOptions(rawValue: 4)
}

/// A scheduled item as the control side remembers it.
/// What `scheduleFile` queues: a stream, or a decoded buffer with the segment in engine frames.
enum FileMaterial {
    case stream(StreamHandle)
    case buffer(SampleBuffer, startFrame: Int, frameCount: Int?)
}

struct ScheduledItem {
    /// The preloaded buffer the item reads, or nil for a streamed file.
    let buffer: SampleBuffer?
    /// The disk stream the item reads, or nil for a buffer.
    var stream: StreamHandle? = nil
    let completion: CompletionKind?
    /// True for the material of the `buffer`/`file` parameters.
    let isMaterial: Bool
}

extension EngineCore {
    func scheduleBuffer(
        _ node: String, buffer name: String, startFrame: Int = 0, frameCount: Int? = nil,
        atPlayerTime time: Int64? = nil, options: PlayerScheduleOptions = [], completion: CompletionKind? = nil,
        atSampleTime commandTime: Int64? = nil
    ) throws(EngineError) -> Int32 {
        let record = try schedulingRecord(node)
        guard let buffer = try bufferNamed(name) else {
            throw EngineError(.unknownBuffer, "no buffer named ''")
        }
        return try enqueue(
            record, buffer, startFrame: startFrame, frameCount: frameCount, playerTime: time,
            options: options, completion: completion, isMaterial: false, commandTime: commandTime ?? -1)
    }

    /// A file segment decoded or opened by `Engine.scheduleFile`, queued on `node`.
    func scheduleFile(
        _ node: String, _ material: FileMaterial, atPlayerTime time: Int64?,
        options: PlayerScheduleOptions, completion: CompletionKind?, atSampleTime commandTime: Int64?
    )
        throws(EngineError) -> Int32
    {
        let record = try schedulingRecord(node)
        switch material {
        case .stream(let handle):
            return try enqueueStream(
                record, handle, playerTime: time, options: options, completion: completion,
                commandTime: commandTime ?? -1)
        case .buffer(let buffer, let start, let count):
            return try enqueue(
                record, buffer, startFrame: start, frameCount: count, playerTime: time,
                options: options, completion: completion, isMaterial: false, commandTime: commandTime ?? -1)
        }
    }

    func playerTime(_ node: String, forSampleTime sampleTime: Int64) throws(EngineError) -> Int64? {
        renderedPlayerTime(try playerRecord(node), at: sampleTime)
    }

    func sampleTime(_ node: String, forPlayerTime playerTime: Int64) throws(EngineError) -> Int64? {
        guard let t = try playerRecord(node).transport, t.isPlaying else { return nil }
        return t.sampleTime + (playerTime - t.playerTime)
    }

    func setOutputLatency(frames: Int) {
        state.players.outputLatencyFrames = max(0, frames)
    }

    // MARK: Helpers

    func playerRecord(_ name: String) throws(EngineError) -> NodeRecord {
        let node = try record(name)
        guard node.player != nil else {
            throw EngineError(.notAllowed, "'\(name)' is a \(node.kind.rawValue), not a player")
        }
        return node
    }

    /// A `player` node for scheduling: an audioplayer plays its own file or buffer (AVAudioPlayer has no
    /// schedule), so items queued on it would never play.
    func schedulingRecord(_ name: String) throws(EngineError) -> NodeRecord {
        let node = try playerRecord(name)
        guard node.audio == nil else {
            throw EngineError(
                .notAllowed,
                "'\(name)' is an audioplayer: it plays its `file` or `buffer`; schedule "
                    + "items on a player node")
        }
        return node
    }

    /// The region `startFrame ..< startFrame + frameCount` (nil: to the end) of `buffer`, checked.
    func material(of buffer: SampleBuffer, startFrame: Int, frameCount: Int?, loops: Bool, node: String)
        throws(EngineError) -> PlayerMaterial
    {
        guard buffer.frameCount > 0 else { throw EngineError(.bufferMismatch, "buffer '\(buffer.name)' is empty") }
        guard startFrame >= 0, startFrame < buffer.frameCount else {
            throw EngineError(
                .outOfRange,
                "\(node): start frame \(startFrame) is outside buffer '\(buffer.name)' (\(buffer.frameCount) frames)")
        }
        let length = frameCount ?? (buffer.frameCount - startFrame)
        guard length > 0, startFrame + length <= buffer.frameCount else {
            throw EngineError(
                .outOfRange,
                "\(node): region \(startFrame)..<\(startFrame + length) exceeds buffer '\(buffer.name)' (\(buffer.frameCount) frames)"
            )
        }
        return PlayerMaterial(
            channels: UnsafePointer(buffer.channelPointers), channelCount: buffer.channelCount,
            regionStart: startFrame, regionLength: length, isLooping: loops)
    }

    /// Queues an item (sending the command, reshaping the player's bus to the buffer's channel count).
    func enqueue(
        _ node: NodeRecord, _ buffer: SampleBuffer, startFrame: Int, frameCount: Int?, playerTime: Int64?,
        options: PlayerScheduleOptions, completion: CompletionKind?, isMaterial: Bool, commandTime: Int64,
        pausesAtEnd: Bool? = nil
    ) throws(EngineError) -> Int32 {
        guard let player = node.player else { throw EngineError(.notAllowed, "'\(node.name)' is not a player") }
        guard node.items.count < player.pointee.capacity else {
            throw EngineError(.busy, "\(node.name): the schedule is full (\(player.pointee.capacity) items)")
        }
        let material = try material(
            of: buffer, startFrame: startFrame, frameCount: frameCount,
            loops: options.contains(.loops), node: node.name)
        let mode: PlayerScheduleMode =
            isMaterial && options.contains(.interrupts)
            ? .replacesMaterial
            : options.contains(.interrupts)
                ? .interrupts
                : options.contains(.interruptsAtLoop) ? .interruptsAtLoop : .append
        let item = PlayerScheduleItem(
            material: material, startTime: playerTime ?? -1, id: node.nextItemID,
            pausesAtEnd: pausesAtEnd ?? isMaterial)
        let (id, reshaped) = try queue(
            item, mode: mode, on: node, player: player, channelCount: buffer.channelCount,
            as: ScheduledItem(buffer: buffer, completion: completion, isMaterial: isMaterial),
            commandTime: commandTime)
        if reshaped { republish() }
        return id
    }

    /// Sends `item` to the player and files it as the node's next item, first reshaping the player's bus
    /// to `channelCount` when it differs. Returns the item's id and whether the bus changed (the caller
    /// republishes then). Throws, changing nothing, when the queue cannot take the commands.
    func queue(
        _ item: PlayerScheduleItem, mode: PlayerScheduleMode, on node: NodeRecord,
        player: UnsafeMutablePointer<PlayerState>, channelCount: Int, as scheduled: ScheduledItem, commandTime: Int64
    ) throws(EngineError) -> (id: Int32, reshaped: Bool) {
        var commands = [TimedCommand(time: commandTime, .playerEnqueue(player, item, mode))]
        let reshape = channelCount != node.outputChannelCount
        if reshape {
            let t = node.mixingTargets(channelCount: channelCount)
            commands.append(
                TimedCommand(
                    .setMixing(
                        node.mixing, left: t.left, right: t.right, mono: t.mono,
                        rampFrames: state.configuration.rampFrames)))
        }
        try send(commands)
        if reshape {
            node.outputChannelCount = channelCount
            node[.channels] = .int(channelCount)
        }
        let id = node.nextItemID
        node.nextItemID = node.nextItemID == Int32.max ? 1 : node.nextItemID + 1
        node.items[id] = scheduled
        return (id, reshape)
    }

    /// Replaces a player's parameter material with `buffer` (nil: none), at `time`: the new material plays
    /// first, and items scheduled with `enqueue` stay queued after it (`PlayerScheduleMode.replacesMaterial`).
    /// The material pauses the player when it ends and is queued again, so `play` replays it.
    func setMaterial(_ node: NodeRecord, _ buffer: SampleBuffer?, time: Int64 = -1) throws(EngineError) {
        guard let player = node.player else { return }
        if let buffer {
            _ = try enqueue(
                node, buffer, startFrame: node.int(.start),
                frameCount: node.int(.frames) == 0 ? nil : node.int(.frames), playerTime: nil,
                options: node.bool(.loop) ? [.interrupts, .loops] : [.interrupts], completion: nil,
                isMaterial: true, commandTime: time)
        } else if node.materialBuffer != nil {
            try send([TimedCommand(time: time, .playerStop(player))])
        }
        node.materialBuffer = buffer
    }

    /// Queues the material again after it ended or after a stop (so `play` replays it).
    func requeueMaterial(_ node: NodeRecord) {
        guard let buffer = node.materialBuffer else { return }
        _ = try? enqueue(
            node, buffer, startFrame: node.int(.start),
            frameCount: node.int(.frames) == 0 ? nil : node.int(.frames), playerTime: nil,
            options: node.bool(.loop) ? [.loops] : [], completion: nil, isMaterial: true, commandTime: -1)
    }

    /// Handles a player event from the render thread (poll); returns events for the user.
    func handlePlayerEvent(_ event: RenderEvent, into events: inout [EngineEvent]) {
        switch event {
        case .playerItemEnded(let nodeID, let itemID, let time, let completed):
            guard let node = state.graph.nodesByID[nodeID], let item = node.items.removeValue(forKey: itemID) else {
                return
            }
            release(item)
            if let audio = node.audio {
                audioPassEnded(node, audio, id: itemID, completed: completed, into: &events)
            }
            if let sound = state.sounds.items.removeValue(forKey: SoundItemKey(node: nodeID, item: itemID)) {
                events.append(.soundFinished(id: sound, sampleTime: time, completed: completed))
            }
            if item.isMaterial && completed && item.buffer === node.materialBuffer {
                node[.playing] = .bool(false)
                events.append(.playerFinished(node: node.name, sampleTime: time))
                requeueMaterial(node)
            }
            if let kind = item.completion {
                if kind == .dataPlayedBack && completed {
                    state.players.pendingPlayedBack.append(
                        (node.name, itemID, time + Int64(state.players.outputLatencyFrames)))
                } else {
                    events.append(
                        .scheduleCompleted(
                            node: node.name, id: itemID, kind: kind, sampleTime: time,
                            completed: completed))
                }
            }
        case .playerTransport(let nodeID, let time, let playerTime, let isPlaying, let commandCount):
            // A report from before the render took the latest play, pause or stop sent to this player
            // (a pause reported after a seek's stop was sent) would show a state that is already gone.
            guard let node = state.graph.nodesByID[nodeID], commandCount >= node.transportCommandCount else {
                return
            }
            node.transport = (time, playerTime, isPlaying)
        case .programInstalled(let generation, let time):
            programInstalled(generation, at: time)
        case .voiceActivity(let nodeID, let started):
            guard let node = state.graph.nodesByID[nodeID] else { return }
            events.append(.voiceActivity(node: node.name, started: started))
        case .playerQueueFull(let nodeID, let itemID):
            guard let node = state.graph.nodesByID[nodeID], let item = node.items.removeValue(forKey: itemID) else {
                return
            }
            release(item)
            events.append(.playerQueueFull(node: node.name, id: itemID))
        case .timedCommandOverflow:
            events.append(.timedCommandOverflow)
        }
    }

    /// A program was installed at engine frame `time` (poll): a playing player it leaves out
    /// keeps its timeline where it stood at `time`, one it brings back resumes from there, so player
    /// times and an audioplayer's `currentTime` follow what was really rendered.
    func programInstalled(_ generation: Int, at time: Int64) {
        guard let rendered = state.players.publishedPlayers[generation] else { return }
        for key in state.players.publishedPlayers.keys where key <= generation {
            state.players.publishedPlayers[key] = nil
        }
        for id in state.players.renderedPlayers.symmetricDifference(rendered) {
            guard let node = state.graph.nodesByID[id], let t = node.transport, t.isPlaying else { continue }
            let wasRendered = state.players.renderedPlayers.contains(id)
            // Leaving: the timeline stood at `time`. Coming back: it resumes from where it stopped.
            let playerTime = wasRendered ? t.playerTime + max(0, time - t.sampleTime) : t.playerTime
            node.transport = (time, playerTime, true)
        }
        state.players.renderedPlayers = rendered
    }

    /// The player's timeline at engine frame `sampleTime`, as the render thread advances it: only while
    /// it plays and the installed program renders it.
    func renderedPlayerTime(_ node: NodeRecord, at sampleTime: Int64) -> Int64? {
        guard let t = node.transport, t.isPlaying else { return nil }
        guard state.players.renderedPlayers.contains(node.id) else { return t.playerTime }
        return t.playerTime + (sampleTime - t.sampleTime)
    }

    /// Delivers `dataPlayedBack` completions whose frame has reached the output (poll).
    func deliverPlayedBack(into events: inout [EngineEvent]) {
        let now = Int64(renderEngine.renderedFrames)
        state.players.pendingPlayedBack.removeAll { entry in
            guard entry.time <= now else { return false }
            events.append(
                .scheduleCompleted(
                    node: entry.node, id: entry.id, kind: .dataPlayedBack,
                    sampleTime: entry.time, completed: true))
            return true
        }
    }
}

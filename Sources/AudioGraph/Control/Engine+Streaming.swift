// Control side. Streaming long files from disk through the disk thread and a ring per item.
import AudioDSP

extension Engine {
    /// Frames a stream's ring holds (about 1.4 s at 48 kHz): the disk thread may stall that long.
    static let streamRingFrames = 65_536

    /// Opens `path` for streaming when it is long enough to be worth it; nil means "preload instead".
    /// Not under the lock (it reads the file's header and primes the ring from disk).
    func openStream(_ path: String, looping: Bool) throws(EngineError) -> StreamHandle? {
        guard let opener = streamOpener else { return nil }
        let rate = configuration.sampleRate
        let source: StreamSource
        do {
            source = try opener(path, rate)
        } catch let error as EngineError {
            throw error
        } catch {
            throw EngineError(.fileError, "\(error)")
        }
        guard Double(source.frameCount) > streamingThresholdSeconds * rate else { return nil }
        let handle = StreamHandle(source: source, path: path, capacityFrames: Self.streamRingFrames, isLooping: looping)
        // Prime the ring now, so a play right after scheduling starts without an underrun.
        handle.refill()
        if let failure = handle.failure { throw EngineError(.fileError, failure) }
        return handle
    }

    /// Queues a streamed item and hands its ring to the disk thread. Lock held.
    func enqueueStream(
        _ node: NodeRecord, _ handle: StreamHandle, playerTime: Int64?, options: PlayerScheduleOptions,
        completion: CompletionKind?, commandTime: Int64
    ) throws(EngineError) -> Int32 {
        guard let player = node.player else { throw EngineError(.notAllowed, "'\(node.name)' is not a player") }
        guard node.items.count < player.pointee.capacity else {
            throw EngineError(.busy, "\(node.name): the schedule is full (\(player.pointee.capacity) items)")
        }
        let material = PlayerMaterial(channels: nil, channelCount: handle.ring.channelCount, regionStart: 0,
                                      regionLength: 0, isLooping: false, stream: handle.ring)
        let mode: PlayerScheduleMode = options.contains(.interrupts) ? .interrupts
            : options.contains(.interruptsAtLoop) ? .interruptsAtLoop : .append
        let id = node.nextItemID
        var commands = [TimedCommand(time: commandTime, .playerEnqueue(
            player, PlayerScheduleItem(material: material, startTime: playerTime ?? -1, id: id), mode))]
        let reshape = handle.ring.channelCount != node.outputChannelCount
        if reshape {
            node.outputChannelCount = handle.ring.channelCount
            node.values["channels"] = .int(handle.ring.channelCount)
            let t = node.mixingTargets
            commands.append(TimedCommand(.setMixing(node.mixing, left: t.left, right: t.right, mono: t.mono,
                                                    rampFrames: state.configuration.rampFrames)))
        }
        try send(commands)
        node.nextItemID = node.nextItemID == Int32.max ? 1 : node.nextItemID + 1
        node.items[id] = ScheduledItem(buffer: nil, stream: handle, completion: completion, isMaterial: false)
        diskStreamer.add(handle)
        if reshape { republish() }
        return id
    }

    /// Lets go of an item's buffer or stream once the render thread cannot reach it. Lock held.
    func release(_ item: ScheduledItem) {
        if let buffer = item.buffer { bury(buffer) }
        if let stream = item.stream {
            diskStreamer.remove(stream)
            state.reportedUnderruns[ObjectIdentifier(stream)] = nil
            state.reportedStreamFailures.remove(ObjectIdentifier(stream))
            bury(stream)
        }
    }

    /// Reports new underruns and decode failures of live streams (poll, lock held).
    func reportStreams(into events: inout [EngineEvent]) {
        for handle in diskStreamer.handles {
            let key = ObjectIdentifier(handle)
            let total = handle.ring.underrunFrames
            let before = state.reportedUnderruns[key] ?? 0
            if total > before {
                events.append(.streamUnderrun(path: handle.path, frames: total - before))
                state.reportedUnderruns[key] = total
            }
            if let failure = handle.failure, state.reportedStreamFailures.insert(key).inserted {
                events.append(.streamFailed(path: handle.path, message: failure))
            }
        }
    }

    /// Streams currently being read, and the memory each holds (bytes).
    public var streamMemory: [(path: String, bytes: Int)] {
        diskStreamer.handles.map { ($0.path, $0.memoryBytes) }
    }

    /// Test hook: stops (true) or resumes (false) the disk thread, to provoke underruns.
    public func setDiskThreadPaused(_ paused: Bool) {
        diskStreamer.isPaused.store(paused, ordering: .relaxed)
    }
}

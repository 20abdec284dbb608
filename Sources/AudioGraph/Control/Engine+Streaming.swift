// Control side. Streaming long files from disk through the disk thread and a ring per item.
import AudioDSP

extension Engine {
    /// Frames a stream's ring holds (about 1.4 s at 48 kHz): the disk thread may stall that long.
    static let streamRingFrames = 65_536

    /// Opens `path` for streaming when the region `startFrame ..< startFrame + frameCount` (the file's
    /// own frames, as AVAudioPlayerNode's segments; nil: to the end) is long enough to be worth it; nil
    /// means "preload instead". Not under the lock (it reads the file's header, seeks and primes the
    /// ring from disk).
    func openStream(_ path: String, startFrame fileStart: Int, frameCount fileCount: Int?, looping: Bool)
        throws(EngineError) -> StreamHandle?
    {
        guard let opener = streamOpener else { return nil }
        let rate = configuration.sampleRate
        let source: StreamSource
        do {
            source = try opener.open(path, rate)
        } catch let error as EngineError {
            throw error
        } catch {
            throw EngineError(.fileError, "\(error)")
        }
        let fileFrames = source.frameCount
        guard fileFrames > 0 else { throw EngineError(.fileError, "'\(path)' holds no audio frames") }
        let (startFrame, count) = Self.engineFrames(fileStart: fileStart, fileCount: fileCount,
                                                    fileRate: source.sourceSampleRate, engineRate: rate)
        guard fileStart >= 0, startFrame < fileFrames else {
            throw EngineError(.outOfRange, "start frame \(fileStart) is outside '\(path)'")
        }
        let length = count ?? (fileFrames - startFrame)
        guard length > 0, length <= fileFrames - startFrame else {
            throw EngineError(.outOfRange, "region \(fileStart)..<\(fileStart + (fileCount ?? 0)) (file frames) exceeds '\(path)'")
        }
        guard Double(length) > streamingThresholdSeconds * rate else { return nil }
        if startFrame != 0 || length != fileFrames {
            do {
                try source.selectRegion(startFrame: startFrame, frameCount: length)
            } catch {
                throw EngineError(.fileError, "\(error)")
            }
        }
        let handle = StreamHandle(source: source, path: path, capacityFrames: Self.streamRingFrames, isLooping: looping)
        // Prime the ring now, so a play right after scheduling starts without an underrun.
        handle.prime()
        if let failure = handle.failure { throw EngineError(.fileError, failure) }
        return handle
    }

    /// A segment in a file's own frames, in engine frames (rounded to the nearest frame).
    static func engineFrames(fileStart: Int, fileCount: Int?, fileRate: Double, engineRate: Double)
        -> (start: Int, count: Int?)
    {
        guard fileRate > 0, fileRate != engineRate else { return (fileStart, fileCount) }
        let ratio = engineRate / fileRate
        return (Int((Double(fileStart) * ratio).rounded()), fileCount.map { Int((Double($0) * ratio).rounded()) })
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
            node[.channels] = .int(handle.ring.channelCount)
            let t = node.mixingTargets
            commands.append(TimedCommand(.setMixing(node.mixing, left: t.left, right: t.right, mono: t.mono,
                                                    rampFrames: state.configuration.rampFrames)))
        }
        try send(commands)
        node.nextItemID = node.nextItemID == Int32.max ? 1 : node.nextItemID + 1
        node.items[id] = ScheduledItem(buffer: nil, stream: handle, completion: completion, isMaterial: false)
        liveStreams.withLock { $0[ObjectIdentifier(handle)] = handle }
        diskThread?.add(handle)
        if reshape { republish() }
        return id
    }

    /// Lets go of an item's buffer or stream once the render thread cannot reach it. Lock held.
    func release(_ item: ScheduledItem) {
        if let buffer = item.buffer { bury(buffer) }
        if let stream = item.stream {
            diskThread?.remove(stream)
            _ = liveStreams.withLock { $0.removeValue(forKey: ObjectIdentifier(stream)) }
            state.reportedUnderruns[ObjectIdentifier(stream)] = nil
            state.reportedStreamFailures.remove(ObjectIdentifier(stream))
            bury(stream)
        }
    }

    /// Reports new underruns and decode failures of live streams (poll, lock held).
    func reportStreams(into events: inout [EngineEvent]) {
        for handle in streamHandles {
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
        streamHandles.map { ($0.path, $0.memoryBytes) }
    }

    /// Live streams as the render thread sees them: frames buffered ahead of it, the ring's size, and
    /// frames it missed so far. Any thread; a snapshot (the disk thread keeps filling).
    public var streamStatus: [StreamStatus] {
        streamHandles.map {
            StreamStatus(path: $0.path, memoryBytes: $0.memoryBytes, bufferedFrames: $0.ring.readableFrames,
                         capacityFrames: $0.ring.capacityFrames, underrunFrames: $0.ring.underrunFrames,
                         isFinished: $0.ring.totalFrames != nil)
        }
    }

    /// Test hook: stops (true) or resumes (false) the disk thread, to provoke underruns.
    public func setDiskThreadPaused(_ paused: Bool) {
        diskThread?.setPaused(paused)
    }

    /// The live streams (any thread; a snapshot).
    private var streamHandles: [StreamHandle] { liveStreams.withLock { Array($0.values) } }
}

/// One live stream's state (`Engine.streamStatus`).
public struct StreamStatus: Sendable, Equatable {
    public var path: String
    /// Ring, disk-thread scratch and decoder buffers, in bytes.
    public var memoryBytes: Int
    /// Frames decoded and waiting for the render thread.
    public var bufferedFrames: Int
    public var capacityFrames: Int
    /// Frames the render thread could not get in time, since the stream started.
    public var underrunFrames: Int
    /// The disk thread has delivered everything (the end of the file or region, or a failure).
    public var isFinished: Bool
}

// Control side. Streaming long files from disk through the disk thread and a ring per item.
import AudioDSP

extension EngineCore {
    /// Queues a streamed item and hands its ring to the disk thread.
    func enqueueStream(
        _ node: NodeRecord, _ handle: StreamHandle, playerTime: Int64?, options: PlayerScheduleOptions,
        completion: CompletionKind?, commandTime: Int64
    ) throws(EngineError) -> Int32 {
        guard let player = node.player else { throw EngineError(.notAllowed, "'\(node.name)' is not a player") }
        guard node.items.count < player.pointee.capacity else {
            throw EngineError(.busy, "\(node.name): the schedule is full (\(player.pointee.capacity) items)")
        }
        let material = PlayerMaterial(
            channels: nil, channelCount: handle.ring.channelCount, regionStart: 0,
            regionLength: 0, isLooping: false, stream: handle.ring)
        let mode: PlayerScheduleMode =
            options.contains(.interrupts)
            ? .interrupts
            : options.contains(.interruptsAtLoop) ? .interruptsAtLoop : .append
        let item = PlayerScheduleItem(material: material, startTime: playerTime ?? -1, id: node.nextItemID)
        let (id, reshaped) = try queue(
            item, mode: mode, on: node, player: player, channelCount: handle.ring.channelCount,
            as: ScheduledItem(buffer: nil, stream: handle, completion: completion, isMaterial: false),
            commandTime: commandTime)
        liveStreams.withLock { $0[ObjectIdentifier(handle)] = handle }
        diskThread?.add(handle)
        if reshaped { republish() }
        return id
    }

    /// Lets go of an item's buffer or stream once the render thread cannot reach it.
    func release(_ item: ScheduledItem) {
        if let buffer = item.buffer { bury(buffer) }
        if let stream = item.stream {
            diskThread?.remove(stream)
            _ = liveStreams.withLock { $0.removeValue(forKey: ObjectIdentifier(stream)) }
            state.streams.underruns[ObjectIdentifier(stream)] = nil
            state.streams.failures.remove(ObjectIdentifier(stream))
            bury(stream)
        }
    }

    /// Reports new underruns and decode failures of live streams (poll).
    func reportStreams(into events: inout [EngineEvent]) {
        for handle in liveStreams.withLock({ Array($0.values) }) {
            let key = ObjectIdentifier(handle)
            let total = handle.ring.underrunFrames
            let before = state.streams.underruns[key] ?? 0
            if total > before {
                events.append(.streamUnderrun(path: handle.path, frames: total - before))
                state.streams.underruns[key] = total
            }
            if let failure = handle.failure, state.streams.failures.insert(key).inserted {
                events.append(.streamFailed(path: handle.path, message: failure))
            }
        }
    }
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

// The rules this subsystem applies; pure, so they live on the front.
extension Engine {
    /// Frames a stream's ring holds (about 1.4 s at 48 kHz): the disk thread may stall that long.
    static let streamRingFrames = 65_536

    /// A segment in a file's own frames, in engine frames (rounded to the nearest frame).
    static func engineFrames(fileStart: Int, fileCount: Int?, fileRate: Double, engineRate: Double)
        -> (start: Int, count: Int?)
    {
        guard fileRate > 0, fileRate != engineRate else { return (fileStart, fileCount) }
        let ratio = engineRate / fileRate
        return (Int((Double(fileStart) * ratio).rounded()), fileCount.map { Int((Double($0) * ratio).rounded()) })
    }
}

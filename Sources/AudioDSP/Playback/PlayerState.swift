// Render side. State and kernel of a player node: a queue of scheduled buffer regions played on the
// player's own timeline (AVAudioPlayerNode's model).

/// A region of a preloaded, engine-rate sample buffer.
public struct PlayerMaterial: BitwiseCopyable {
    /// Channel start pointers of the buffer (owned by a `SampleBuffer` on the control side).
    public var channels: UnsafePointer<UnsafeMutablePointer<Float>>?
    public var channelCount: Int
    /// First frame of the region inside the buffer.
    public var regionStart: Int
    /// Frames in the region (> 0 when `channels` is non-nil).
    public var regionLength: Int
    /// Loop the region until interrupted (AVAudioPlayerNodeBufferOptions.loops).
    public var isLooping: Bool
    /// A file streamed from disk instead of a preloaded buffer (`channels` is nil then). Its length is
    /// the ring's total once the disk thread knows it; a looping stream is looped by the disk thread.
    public var stream: StreamRing?

    @inlinable
    public init(
        channels: UnsafePointer<UnsafeMutablePointer<Float>>?, channelCount: Int, regionStart: Int,
        regionLength: Int, isLooping: Bool, stream: StreamRing? = nil
    ) {
        self.channels = channels
        self.channelCount = channelCount
        self.regionStart = regionStart
        self.regionLength = regionLength
        self.isLooping = isLooping
        self.stream = stream
    }
}

/// One entry of a player's schedule.
public struct PlayerScheduleItem: BitwiseCopyable {
    public var material: PlayerMaterial
    /// Player-timeline frame at which the item starts; negative: right after the previous item.
    public var startTime: Int64
    /// Control-side identifier reported when the item ends.
    public var id: Int32
    /// Pause the player when this item ends (the parameter-driven "play once" material).
    public var pausesAtEnd: Bool

    @inlinable
    public init(material: PlayerMaterial, startTime: Int64, id: Int32, pausesAtEnd: Bool = false) {
        self.material = material
        self.startTime = startTime
        self.id = id
        self.pausesAtEnd = pausesAtEnd
    }
}

/// How a newly scheduled item relates to what is queued (AVAudioPlayerNodeBufferOptions).
public enum PlayerScheduleMode: Int8, BitwiseCopyable {
    /// Append after everything queued.
    case append = 0
    /// Drop everything queued, including what is playing, and start this now.
    case interrupts = 1
    /// Let the playing item finish its current pass (a loop ends at its loop point), drop the rest, then
    /// play this.
    case interruptsAtLoop = 2
    /// A player's parameter material changed: drop the queued material items (`pausesAtEnd`) and play
    /// this first; items scheduled with `enqueue` stay queued after it, in order (one that was playing
    /// starts again from its beginning).
    case replacesMaterial = 3
}

/// An item that left the queue during a render call: its id and the frame offset inside the call.
public struct PlayerItemEnd: BitwiseCopyable {
    public var id: Int32
    public var offset: Int32

    @inlinable
    public init(id: Int32, offset: Int32) {
        self.id = id
        self.offset = offset
    }
}

/// A player's transport: its schedule queue (a ring of `capacity` items), the read position inside the
/// first item, and the player timeline, which advances only while playing.
public struct PlayerState: BitwiseCopyable {
    public let items: UnsafeMutablePointer<PlayerScheduleItem>
    public let capacity: Int
    public var head = 0
    public var count = 0
    /// Frames already played inside the first item's region.
    public var position = 0
    /// Player timeline: frames elapsed while playing since the last stop (AVAudioPlayerNode's player time).
    public var playerTime: Int64 = 0
    public var isPlaying = false
    /// The gain other-audio ducking (a voice processor's `duckOthers`) applies to this player's output,
    /// gliding toward the engine's ducking target.
    public var duckGain: Float = 1
    /// Stable node number used in events.
    public let nodeID: Int32
    /// Items that ended during the last `render` call (drained by the caller).
    public let ended: UnsafeMutablePointer<PlayerItemEnd>
    public var endedCount = 0

    /// Control side: allocates the queue (`capacity` items).
    public init(nodeID: Int32, capacity: Int = 64) {
        self.nodeID = nodeID
        self.capacity = capacity
        items = .allocate(capacity: capacity)
        ended = .allocate(capacity: capacity)
    }

    /// Control side: frees the queue.
    public func deallocate() {
        items.deallocate()
        ended.deallocate()
    }

    /// Removes the `index`-th queued item (0: the playing one), keeping the others in order. The read
    /// position restarts when the first item is removed.
    @inlinable
    public mutating func remove(at index: Int) {
        guard index >= 0 && index < count else { return }
        var k = index
        while k &+ 1 < count {
            items[(head &+ k) % capacity] = items[(head &+ k &+ 1) % capacity]
            k &+= 1
        }
        count &-= 1
        if index == 0 { position = 0 }
    }

    /// Puts `item` first in the queue (it plays next, from its start); returns false when the queue is
    /// full.
    @inlinable
    public mutating func pushFront(_ item: PlayerScheduleItem) -> Bool {
        if count == capacity { return false }
        head = (head &+ capacity &- 1) % capacity
        items[head] = item
        count &+= 1
        position = 0
        return true
    }

    /// Appends an item; returns false when the queue is full.
    @inlinable
    public mutating func enqueue(_ item: PlayerScheduleItem) -> Bool {
        if count == capacity { return false }
        items[(head &+ count) % capacity] = item
        count &+= 1
        return true
    }

    /// Writes `frames` frames into `bus` and advances the player timeline while playing. Items that end
    /// are listed in `ended` with their frame offset inside this call.
    @inlinable
    public mutating func render(into bus: BusRef, frames: Int) {
        for c in 0..<bus.channelCount { MixKernel.clear(bus.channel(c), count: frames) }
        endedCount = 0
        guard isPlaying else { return }
        var written = 0
        while written < frames && isPlaying {
            if count == 0 {
                // Nothing scheduled: the timeline still runs, as AVAudioPlayerNode's does.
                playerTime &+= Int64(frames &- written)
                break
            }
            let item = items[head]
            if position == 0 && item.startTime > playerTime {
                let gap = Int(min(Int64(frames &- written), item.startTime &- playerTime))
                written &+= gap
                playerTime &+= Int64(gap)
                continue
            }
            let material = item.material
            if let stream = material.stream {
                // Streamed: take what the disk thread has delivered; a shortfall is an underrun (silence,
                // the stream resumes where it was), never a wait.
                let total = stream.totalFrames
                let wanted = min(frames &- written, (total ?? Int.max) &- position)
                let got = wanted > 0 ? stream.read(into: bus, offset: written, frames: wanted) : 0
                position &+= got
                if got < wanted && (total == nil || position < total!) {
                    stream.noteUnderrun(frames: wanted &- got)
                }
                written &+= max(wanted, 0)
                playerTime &+= Int64(max(wanted, 0))
                if let total, position >= total {
                    position = 0
                    ended[endedCount] = PlayerItemEnd(id: item.id, offset: Int32(written))
                    endedCount &+= 1
                    head = (head &+ 1) % capacity
                    count &-= 1
                    if item.pausesAtEnd { isPlaying = false }
                }
                continue
            }
            let n = min(frames &- written, material.regionLength &- position)
            if let source = material.channels {
                let readStart = material.regionStart &+ position
                for c in 0..<min(bus.channelCount, material.channelCount) {
                    MixKernel.copy(source[c] + readStart, to: bus.channel(c) + written, count: n)
                }
            }
            written &+= n
            position &+= n
            playerTime &+= Int64(n)
            if position >= material.regionLength {
                position = 0
                if !material.isLooping {
                    ended[endedCount] = PlayerItemEnd(id: item.id, offset: Int32(written))
                    endedCount &+= 1
                    head = (head &+ 1) % capacity
                    count &-= 1
                    if item.pausesAtEnd {
                        isPlaying = false
                    }
                }
            }
        }
    }
}

// Control side: the disk thread of one recording. The recorder (on the thread calling `Engine.poll()`)
// hands blocks over through a bounded queue; only this thread writes, updates the header and closes.
import AudioFiles
import Dispatch
import Foundation
import Locking

/// One open recording file and the thread that writes it.
///
/// Thread contract: `enqueue` is called by the tap handler (poll thread), `finish`/`waitUntil…` by
/// control threads; the writer thread alone touches `file` after `start()`. The queue is bounded by
/// `capacityFrames`: a producer never grows it past that, and never blocks unless `waitsForWriter`.
final class RecorderWriter: Sendable {
    /// Result of handing a block over.
    enum EnqueueResult {
        case accepted
        /// The backlog is full: the block was not taken.
        case full
        /// The writer has failed or is finishing: the block was not taken.
        case closed
    }

    /// How the recording ended, passed to `onEnd` on the writer thread after the file is closed.
    struct Outcome: Sendable {
        /// The first write, header or close error; nil when the file was written and finalised.
        var failure: AudioFileError?
        /// Frames the recorder dropped and asked `finish` to report with the end.
        var lostFrames: Int
        /// After a failure, what the take left: the frames a new file keeps, its removal, or the old
        /// file (or FIFO, device) left as it was. Nil when the take succeeded.
        var remains: AudioFileRemains?
    }

    let file: AudioFileWriter
    let capacityFrames: Int
    let headerUpdateInterval: Double
    /// True: `enqueue` waits for room instead of refusing a block (`RecorderSettings.waitsForWriter`).
    let waitsForWriter: Bool

    private struct Queue {
        var blocks: [(channels: [[Float]], frames: Int)] = []
        var queuedFrames = 0
        var isFinishing = false
        var lostFramesToReport = 0
        var hasFailed = false
        /// Test hook: while true the writer thread writes nothing.
        var isHeld = false
    }

    private let queue = Locked(Queue())
    /// Signalled on every enqueue and on finish; extra signals only cause an idle loop turn.
    private let wakeup = DispatchSemaphore(value: 0)
    /// Signalled whenever the disk thread frees room, fails or ends, for a producer waiting in `enqueue`.
    private let roomFreed = DispatchSemaphore(value: 0)
    /// Left once the file is closed (before `onEnd` runs).
    private let closed = DispatchGroup()
    /// Left once `onEnd` has returned.
    private let completed = DispatchGroup()
    private let threadID = Locked<pthread_t?>(nil)
    private let onEnd: @Sendable (Outcome) -> Void

    /// Opens the file (`OutputDestination`, `.inPlaceWhenNew`: a new file is written in place, an
    /// existing one is replaced when the take is closed); the thread starts with `start()`.
    ///
    /// - Throws: the `AudioFileWriter` initializer's errors, which name the file.
    init(
        path: String, sampleRate: Double, channelCount: Int, settings: RecorderSettings,
        onEnd: @escaping @Sendable (Outcome) -> Void
    ) throws(AudioFileError) {
        file = try AudioFileWriter(
            path: path, format: settings.format, sampleRate: sampleRate, channelCount: channelCount,
            encoding: settings.encoding, quality: settings.quality, replacement: .inPlaceWhenNew,
            isCrashTolerant: true)
        capacityFrames = max(1, Int((settings.maximumBacklog * sampleRate).rounded()))
        headerUpdateInterval = settings.headerUpdateInterval
        waitsForWriter = settings.waitsForWriter
        self.onEnd = onEnd
        closed.enter()
        completed.enter()
    }

    /// Starts the disk thread. Call once.
    func start() {
        let thread = Thread { [self] in run() }
        thread.name = "soundstage-recorder"
        thread.start()
    }

    /// Poll thread. Hands `frames` planar frames to the disk thread without blocking on I/O. A block
    /// finding the queue already holding `capacityFrames` frames is refused, or, when
    /// `waitsForWriter`, waits until the disk thread has made room (an empty queue always takes one
    /// block, so any block size works).
    func enqueue(_ channels: [[Float]], frames: Int) -> EnqueueResult {
        while true {
            let result: EnqueueResult = queue.withLock { queue in
                if queue.isFinishing || queue.hasFailed { return .closed }
                if queue.queuedFrames > 0, queue.queuedFrames + frames > capacityFrames { return .full }
                queue.blocks.append((channels, frames))
                queue.queuedFrames += frames
                return .accepted
            }
            if result == .accepted { wakeup.signal() }
            guard result == .full, waitsForWriter else { return result }
            // Stale signals only cause another check.
            roomFreed.wait()
        }
    }

    /// Any thread. Asks the disk thread to write what is queued, finalise the file and end. Later
    /// blocks are refused. `lostFrames` are handed back in the `Outcome`, so that the report of
    /// frames lost at the end precedes the end notification. Does not wait.
    func finish(reportingLostFrames lostFrames: Int = 0) {
        queue.withLock {
            $0.isFinishing = true
            $0.lostFramesToReport += lostFrames
        }
        wakeup.signal()
        roomFreed.signal()
    }

    /// Blocks until the file is closed (immediately if it is).
    func waitUntilClosed() { closed.wait() }

    /// Blocks until the end notification has been delivered. Returns at once on the disk thread
    /// itself (an event handler calling `stop()`), which would otherwise wait for itself.
    func waitUntilCompleted() {
        if isCurrentThread { return }
        completed.wait()
    }

    /// True on the disk thread.
    var isCurrentThread: Bool {
        threadID.withLock { id in id.map { pthread_equal($0, pthread_self()) != 0 } ?? false }
    }

    /// Test hook: while held, the disk thread writes nothing, so the backlog fills.
    func setHeld(_ held: Bool) {
        queue.withLock { $0.isHeld = held }
        wakeup.signal()
    }

    // MARK: Disk thread

    private func run() {
        threadID.withLock { $0 = pthread_self() }
        var scratch: [Float] = []
        var failure: AudioFileError?
        var lastHeaderUpdate = ContinuousClock.now
        var hasUndeclaredFrames = false
        let interval = Duration.seconds(headerUpdateInterval)
        loop: while failure == nil {
            let (blocks, isFinishing) = queue.withLock { queue in
                var taken: [(channels: [[Float]], frames: Int)] = []
                if !queue.isHeld { swap(&taken, &queue.blocks) }
                return (taken, queue.isFinishing && !queue.isHeld)
            }
            for block in blocks {
                do throws(AudioFileError) {
                    try write(block.channels, frames: block.frames, scratch: &scratch)
                } catch {
                    failure = error
                    break loop
                }
                // Frames leave the backlog only once written, so a slow disk shows up as a full queue.
                queue.withLock { $0.queuedFrames -= block.frames }
                roomFreed.signal()
                hasUndeclaredFrames = true
            }
            // `close()` writes the final header; before that, rewrite it at least every `interval`.
            if hasUndeclaredFrames, !isFinishing, ContinuousClock.now - lastHeaderUpdate >= interval {
                do throws(AudioFileError) {
                    try file.updateHeader()
                } catch {
                    failure = error
                    break loop
                }
                lastHeaderUpdate = ContinuousClock.now
                hasUndeclaredFrames = false
            }
            if isFinishing { break }
            if blocks.isEmpty {
                // Wake for new blocks, or when frames written before a pause become due for the header.
                var timeout = 1.0
                if hasUndeclaredFrames {
                    let remaining = interval - (ContinuousClock.now - lastHeaderUpdate)
                    timeout = max(0.001, remaining / .seconds(1))
                }
                _ = wakeup.wait(timeout: .now() + timeout)
            }
        }
        if failure != nil {
            queue.withLock {
                $0.hasFailed = true; $0.blocks = []; $0.queuedFrames = 0
            }
        }
        roomFreed.signal()
        var remains: AudioFileRemains?
        if failure != nil {
            // The take is cut: keep what decodes of a new file, never put a cut take over an old one.
            remains = file.abandon()
        } else {
            do throws(AudioFileError) {
                try file.close()
            } catch {
                failure = error
                remains = file.remains ?? .unchanged
            }
        }
        closed.leave()
        onEnd(Outcome(failure: failure, lostFrames: queue.withLock { $0.lostFramesToReport }, remains: remains))
        completed.leave()
    }

    /// Interleaves one block into `scratch` and writes it.
    private func write(_ channels: [[Float]], frames: Int, scratch: inout [Float]) throws(AudioFileError) {
        let channelCount = channels.count
        let needed = frames * channelCount
        if scratch.count < needed { scratch = [Float](repeating: 0, count: needed) }
        for (index, channel) in channels.enumerated() {
            channel.withUnsafeBufferPointer { source in
                var target = index
                for frame in 0..<frames {
                    scratch[target] = source[frame]
                    target += channelCount
                }
            }
        }
        try scratch.withUnsafeBufferPointer { (buffer) throws(AudioFileError) in
            try file.write(interleaved: buffer, frames: frames)
        }
    }
}

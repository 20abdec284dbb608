// Disk thread. Keeps every streamed file's ring filled so the render thread never touches a file.
import AudioDSP
import Foundation
import Locking
import Synchronization

/// A decoder the disk thread pulls from (`AudioFileStreamReader`, through SoundstageKit).
/// Used from one thread at a time: the control side while opening and priming, then the disk thread.
public protocol StreamSource: AnyObject {
    var channelCount: Int { get }
    /// Frames of the whole file at the engine rate (an estimate is fine; the real end is reported
    /// by `read` returning 0).
    var frameCount: Int { get }
    /// Bytes of decode buffers the source holds, for reports (the codec libraries' own state is
    /// not counted).
    var bufferBytes: Int { get }
    /// Decodes up to `frames` interleaved frames into `buffer`; 0 means the end (of the region).
    func read(into buffer: UnsafeMutablePointer<Float>, frames: Int) throws -> Int
    /// Goes back to the first frame of the region (for looping).
    func rewind() throws
    /// Plays only `startFrame ..< startFrame + frameCount` (engine-rate frames) and moves there.
    /// Control side, before the first `read`.
    func selectRegion(startFrame: Int, frameCount: Int) throws
}

/// One streamed item: its source, its ring, and the disk thread's progress.
final class StreamHandle: @unchecked Sendable {
    let source: StreamSource
    let ring: StreamRing
    let isLooping: Bool
    let path: String
    /// Written only by whoever fills (the control side while priming, then the disk thread).
    var delivered = 0
    var isFinished = false
    /// Why decoding stopped, if it failed: written by whoever fills, read by `poll()` on the control
    /// side while the disk thread runs, hence behind a lock (a `String` must not be read while written).
    var failure: String? {
        get { failureBox.withLock { $0 } }
        set { failureBox.withLock { $0 = newValue } }
    }
    private let failureBox = Locked<String?>(nil)
    /// The source's decode buffers, recorded by `prime()` (read by reports while the disk thread
    /// decodes, so never read from the source itself).
    private(set) var sourceBytes = 0
    private var scratch: [Float]

    init(source: StreamSource, path: String, capacityFrames: Int, isLooping: Bool) {
        self.source = source
        self.path = path
        self.isLooping = isLooping
        ring = StreamRing(channelCount: source.channelCount, capacityFrames: capacityFrames)
        scratch = [Float](repeating: 0, count: 4096 * max(1, source.channelCount))
    }

    deinit { ring.deallocate() }

    /// Bytes this stream holds (ring, the disk thread's scratch and the decoder's buffers), for reports.
    var memoryBytes: Int { (ring.samples.capacity + scratch.count) * MemoryLayout<Float>.size + sourceBytes }

    /// Control side, before the disk thread sees the handle: fills the ring and records the
    /// source's buffer sizes (allocated by the first decode).
    func prime() {
        refill()
        sourceBytes = source.bufferBytes
    }

    /// Decodes into the ring until it is full or the file ends. Returns true if it did any work.
    @discardableResult
    func refill() -> Bool {
        guard !isFinished, failure == nil else { return false }
        let channels = ring.channelCount
        var worked = false
        while true {
            // Decode in whole chunks (up to the scratch's 4,096 frames, 85 ms at 48 kHz): per call, the
            // decoders' and the file's fixed costs outweigh the decoding itself at small sizes.
            let room = min(ring.writableFrames, scratch.count / channels)
            if room < min(scratch.count / channels, ring.capacityFrames / 4) { break }
            let got: Int
            do {
                got = try scratch.withUnsafeMutableBufferPointer { try source.read(into: $0.baseAddress!, frames: room) }
            } catch {
                failure = "\(error)"
                ring.finish(totalFrames: delivered)
                isFinished = true
                return true
            }
            if got == 0 {
                if isLooping && delivered > 0 {
                    do { try source.rewind() } catch {
                        failure = "\(error)"
                        ring.finish(totalFrames: delivered)
                        isFinished = true
                        return true
                    }
                    continue
                }
                ring.finish(totalFrames: delivered)
                isFinished = true
                return true
            }
            let written = scratch.withUnsafeBufferPointer { ring.write(interleaved: $0.baseAddress!, frames: got) }
            delivered += written
            worked = true
        }
        return worked
    }
}

/// The disk thread: wakes every few milliseconds and tops up every stream's ring.
final class DiskStreamer: @unchecked Sendable {
    private let streams = Locked<[ObjectIdentifier: StreamHandle]>([:])
    private let running = Atomic<Bool>(true)
    /// Set by tests to starve streams on purpose.
    let isPaused = Atomic<Bool>(false)
    private var thread: Thread?

    init() {
        let thread = Thread { [weak self] in
            // Named from inside: on Linux, Foundation passes a name to the OS (ps, top, /proc) only
            // when the running thread sets its own.
            Thread.current.name = "soundstage-disk"
            while let self, self.running.load(ordering: .acquiring) {
                var busy = false
                if !self.isPaused.load(ordering: .relaxed) {
                    let handles = self.streams.withLock { Array($0.values) }
                    busy = !handles.isEmpty
                    for handle in handles { handle.refill() }
                }
                // Every 3 ms while streams play (a 1.4 s ring leaves ample margin); idle otherwise.
                usleep(busy ? 3_000 : 20_000)
            }
        }
        thread.start()
        self.thread = thread
    }

    func add(_ handle: StreamHandle) { streams.withLock { $0[ObjectIdentifier(handle)] = handle } }

    func remove(_ handle: StreamHandle) { _ = streams.withLock { $0.removeValue(forKey: ObjectIdentifier(handle)) } }

    var handles: [StreamHandle] { streams.withLock { Array($0.values) } }

    func stop() { running.store(false, ordering: .releasing) }

    deinit { running.store(false, ordering: .releasing) }
}

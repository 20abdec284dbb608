// Control side and disk thread. What the engine asks of the embedding layer to stream a file (a decoder
// and a disk thread), and the streamed item the disk thread keeps filled so the render thread never
// touches a file.
import AudioDSP
import Locking

/// A decoder the disk thread pulls from (`AudioFileStreamReader`, through SoundstageKit).
/// Used from one thread at a time: the control side while opening and priming, then the disk thread.
public protocol StreamSource: AnyObject {
    var channelCount: Int { get }
    /// Frames of the whole file at the engine rate (an estimate is fine; the real end is reported
    /// by `read` returning 0).
    var frameCount: Int { get }
    /// The file's own sample rate (segments given in file frames are converted with it).
    var sourceSampleRate: Double { get }
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

/// A streamed item as the disk thread sees it.
public protocol RefillableStream: AnyObject, Sendable {
    /// Decodes into the item's ring until it is full or the item ends. Returns true if it did any work.
    /// Called only from the disk thread once the engine has handed the item over (`DiskThread.add`).
    @discardableResult
    func refill() -> Bool
}

/// The thread that keeps streamed items' rings filled: it calls `refill()` on every item it holds, often
/// enough that a ring never runs dry (SoundstageKit's `DiskStreamer` wakes every 3 ms). It never waits
/// for the render thread, and the render thread never waits for it.
public protocol DiskThread: AnyObject, Sendable {
    /// Starts filling `stream` (control side, engine lock held: must not block).
    func add(_ stream: any RefillableStream)
    /// Stops filling `stream`; after it returns the thread no longer calls it (control side, lock held).
    func remove(_ stream: any RefillableStream)
    /// Test hook: a paused thread fills nothing, so streams underrun on purpose.
    func setPaused(_ paused: Bool)
    /// Ends the thread (the engine's deinit).
    func stop()
}

/// How an engine streams files, given to `Engine.init` by the embedding layer: it opens a file as a
/// `StreamSource` at the engine rate, and makes the engine's disk thread. Both come together, so an
/// engine that can open a stream always has a thread to read it.
public struct StreamOpener: Sendable {
    /// Opens `path` for streaming at `sampleRate` Hz (control side, not under the engine lock).
    public var open: @Sendable (_ path: String, _ sampleRate: Double) throws -> StreamSource
    /// Makes the engine's disk thread (once, when the engine is made).
    public var makeDiskThread: @Sendable () -> any DiskThread

    public init(
        open: @escaping @Sendable (_ path: String, _ sampleRate: Double) throws -> StreamSource,
        makeDiskThread: @escaping @Sendable () -> any DiskThread
    ) {
        self.open = open
        self.makeDiskThread = makeDiskThread
    }
}

/// One streamed item: its source, its ring, and the disk thread's progress.
final class StreamHandle: RefillableStream, @unchecked Sendable {
    // @unchecked: handed from the control side to the disk thread; the ring orders what both see.
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
                got = try scratch.withUnsafeMutableBufferPointer {
                    try source.read(into: $0.baseAddress!, frames: room)
                }
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

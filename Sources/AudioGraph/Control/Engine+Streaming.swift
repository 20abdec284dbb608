// Control side, the API. Streams read from disk: opening them (outside the engine's lock), their memory
// and status.
import AudioDSP

extension Engine {
    /// Streams currently being read, and the memory each holds (bytes).
    public var streamMemory: [(path: String, bytes: Int)] {
        streamHandles.map { ($0.path, $0.memoryBytes) }
    }

    /// Live streams as the render thread sees them: frames buffered ahead of it, the ring's size, and
    /// frames it missed so far. Any thread; a snapshot (the disk thread keeps filling).
    public var streamStatus: [StreamStatus] {
        streamHandles.map {
            StreamStatus(
                path: $0.path, memoryBytes: $0.memoryBytes, bufferedFrames: $0.ring.readableFrames,
                capacityFrames: $0.ring.capacityFrames, underrunFrames: $0.ring.underrunFrames,
                isFinished: $0.ring.totalFrames != nil)
        }
    }

    /// Test hook: stops (true) or resumes (false) the disk thread, to provoke underruns.
    public func setDiskThreadPaused(_ paused: Bool) {
        services.diskThread?.setPaused(paused)
    }

    /// The live streams (any thread; a snapshot).
    private var streamHandles: [StreamHandle] { services.liveStreams.withLock { Array($0.values) } }

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
        let (startFrame, count) = Engine.engineFrames(
            fileStart: fileStart, fileCount: fileCount,
            fileRate: source.sourceSampleRate, engineRate: rate)
        guard fileStart >= 0, startFrame < fileFrames else {
            throw EngineError(.outOfRange, "start frame \(fileStart) is outside '\(path)'")
        }
        let length = count ?? (fileFrames - startFrame)
        guard length > 0, length <= fileFrames - startFrame else {
            throw EngineError(
                .outOfRange, "region \(fileStart)..<\(fileStart + (fileCount ?? 0)) (file frames) exceeds '\(path)'")
        }
        guard Double(length) > streamingThresholdSeconds * rate else { return nil }
        if startFrame != 0 || length != fileFrames {
            do {
                try source.selectRegion(startFrame: startFrame, frameCount: length)
            } catch {
                throw EngineError(.fileError, "\(error)")
            }
        }
        let handle = StreamHandle(
            source: source, path: path, capacityFrames: Engine.streamRingFrames, isLooping: looping)
        // Prime the ring now, so a play right after scheduling starts without an underrun.
        handle.prime()
        if let failure = handle.failure { throw EngineError(.fileError, failure) }
        return handle
    }
}

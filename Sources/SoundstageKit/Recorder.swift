// Control side. Records a node's output (a tap on it) to a file, with AVAudioRecorder's semantics.
// Threads: control methods from any thread; tap blocks arrive on the thread calling `Engine.poll()`;
// file I/O happens only on the recorder's disk thread (`RecorderWriter`). See docs/RECORDER.md.
import AudioFiles
import AudioGraph
import Foundation
import Locking

/// Records any node's output, the live input included, to WAV, CAF, FLAC, AIFF, Ogg Vorbis, Opus, MP3
/// or AAC at the engine rate with the node's channel count (AVAudioRecorder on an engine node). Only
/// WAV, CAF and FLAC survive a killed process (docs/RECORDER.md).
///
/// ```swift
/// let recorder = try Recorder(engine: engine, node: "input", path: "/tmp/take.wav")
/// recorder.setEventHandler { event in … }          // .finished(successfully:), .error(…)
/// engine.setEventHandler { recorder.handle($0) }    // forwards tap overflows
/// try recorder.record(forDuration: 10)             // or record() … stop()
/// ```
///
/// Life cycle: stopped → (`prepareToRecord`) prepared → (`record`) recording ⇄ (`pause`/`record`)
/// paused → (`stop`, the end of a duration, or a write error) stopped. Recording again after a stop
/// starts a new take that replaces the file when it is complete, as AVAudioRecorder overwrites it.
/// Where the take goes (`OutputDestination`): a new path is written in place (a crash leaves the take
/// there); an existing file stays until the new take is stopped; a FIFO or device gets the take at stop.
///
/// Timing: the recorder receives audio in blocks of `settings.tapFrameCount` frames when the host
/// calls `Engine.poll()` (every ~10 ms). `record()` takes the node's output from the first frame the
/// render thread produces after the call; `pause()`, a resuming `record()` and `stop()` take effect at
/// the next block delivered after the call, so they land at most one poll interval plus one block
/// after the call. `record(forDuration:)` is exact: the file holds exactly that many frames.
///
/// Thread contract: every public method may be called from any thread; control calls are
/// serialised. Tap blocks are handled on the poll thread and only handed to a bounded queue (with
/// `settings.waitsForWriter`, an offline render, the poll thread waits for room in it); the
/// disk thread writes them, rewrites the header at least every `settings.headerUpdateInterval`
/// seconds and closes the file. Event handlers run on the poll thread (lost frames), on the thread
/// calling `handle(_:)` (tap overflow) or on the disk thread (finished, write errors), never with
/// a recorder lock held, so they may call any recorder method.
public final class Recorder: Sendable {
    /// The engine whose node is recorded.
    public let engine: Engine
    /// The recorded node's name (`input` for the live input when the patch names it so).
    public let node: String
    /// The recorded output bus of `node`.
    public let bus: Int
    /// The file, as given.
    public let path: String
    /// Format and buffering.
    public let settings: RecorderSettings
    /// The file's container and codec (from `settings.format` or the extension).
    public let format: AudioFileFormat

    private enum Phase { case stopped, prepared, recording, paused }

    private struct State {
        var phase = Phase.stopped
        /// Counts takes; a tap handler or a writer from an earlier take is ignored.
        var take = 0
        var writer: RecorderWriter?
        /// The newest take's writer, kept after it ends so later calls can wait for its file to close.
        var lastWriter: RecorderWriter?
        var tapID: Int?
        var sampleRate: Double
        var channelCount: Int
        var recordedFrames = 0
        var frameLimit: Int?
        var meter: RecorderMeter
        var isMeteringEnabled = false
        /// Frames the full backlog refused and not yet reported; when the current report period began.
        var unreportedDrops = 0
        var dropReportStart: ContinuousClock.Instant?
    }

    /// What ending a take leaves for the caller to do outside the lock.
    private struct Ending {
        var writer: RecorderWriter?
        var tapID: Int?
        var unreportedDrops: Int
    }

    /// Held for the whole of each control call (never by the tap handler or the disk thread).
    private let operations = Lock()
    private let state: Locked<State>
    private let eventHandler = Locked<Callback<RecorderEvent>?>(nil)

    /// Checks the node, bus, format and settings, the folder and the file name, and that the format
    /// takes the engine rate and the node's channel count. The file is not touched until
    /// `prepareToRecord()` or `record()`.
    ///
    /// - Parameters:
    ///   - engine: the engine that renders `node`.
    ///   - node: any node with an output bus (player, mixer, input; not `output`).
    ///   - bus: the output bus to record (0 for every current kind).
    ///   - path: destination file; its directory must exist. An existing file is replaced when the
    ///     take is complete.
    ///   - settings: format and buffering; the format defaults to the extension's.
    /// - Throws: `.file(.unsupportedFormat)` for an extension with no known format, `.engine` for an
    ///   unknown node or bus, `.invalidArgument` for settings out of range or an encoding the format
    ///   cannot store or has none of (the lossy formats), `.file(.writeFailed)` for a missing folder or
    ///   a file name too long, `.file(.invalidArgument)` for a rate or channel count the format cannot
    ///   take. Every error names `path`.
    public init(
        engine: Engine, node: String, bus: Int = 0, path: String,
        settings: RecorderSettings = RecorderSettings()
    ) throws(RecorderError) {
        guard let format = settings.format ?? AudioFileFormat(path: path) else {
            throw .file(
                .unsupportedFormat(
                    path: path,
                    reason: "cannot choose a format from the file name; use .wav, .caf, .flac, .aif, .aiff, .ogg, "
                        + ".opus, .mp3, .m4a or .aac, or set RecorderSettings.format"))
        }
        if let named = settings.format, let fromExtension = AudioFileFormat(path: path),
            fromExtension.fileExtension != named.fileExtension
        {
            throw .invalidArgument(
                path: path,
                reason: "the format \(named.displayName) does not match the extension, which says "
                    + "\(fromExtension.displayName); name the file .\(named.fileExtension) or leave the format out")
        }
        try Self.checkEncoding(settings.encoding, format: format, path: path)
        try Self.validate(settings, path: path)
        // The folder must be there now: a take that fails only at `record` loses what the user meant to keep.
        let folder = URL(fileURLWithPath: path).deletingLastPathComponent().path
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: folder, isDirectory: &isFolder), isFolder.boolValue else {
            throw .file(.writeFailed(path: path, reason: "the folder '\(folder)' does not exist"))
        }
        try Self.checkFileName(path)
        let info = try Self.nodeInfo(engine: engine, node: node, bus: bus, path: path)
        try Self.checkWriter(
            format: format, sampleRate: engine.configuration.sampleRate, channelCount: info.outputChannelCount,
            settings: settings, path: path)
        self.engine = engine
        self.node = node
        self.bus = bus
        self.path = path
        self.settings = settings
        self.format = format
        let rate = engine.configuration.sampleRate
        state = Locked(
            State(
                sampleRate: rate, channelCount: info.outputChannelCount,
                meter: RecorderMeter(channelCount: info.outputChannelCount)))
    }

    deinit {
        // Finalise the file; no notification is sent (nobody is left to receive it).
        let (ending, last) = state.withLock { state in
            (state.phase == .stopped ? nil : Self.end(&state), state.lastWriter)
        }
        if let tapID = ending?.tapID { engine.removeTap(tapID) }
        ending?.writer?.finish()
        last?.waitUntilClosed()
    }

    // MARK: Properties

    /// True while audio is being taken into the file (not when prepared, paused or stopped).
    public var isRecording: Bool { state.withLock { $0.phase == .recording } }

    /// Seconds of audio in the current take (frames taken / sample rate), counted while prepared,
    /// recording or paused; 0 when stopped, as AVAudioRecorder's.
    public var currentTime: Double {
        state.withLock { $0.phase == .stopped ? 0 : Double($0.recordedFrames) / $0.sampleRate }
    }

    /// Frames taken into the current take, or into the last one once stopped (its file's length
    /// unless a write failed).
    public var recordedFrameCount: Int { state.withLock { $0.recordedFrames } }

    /// The engine's time in seconds (engine sample time / rate): always valid.
    public var deviceCurrentTime: Double {
        Double(engine.sampleTime) / engine.configuration.sampleRate
    }

    /// Frames per second of the file: the engine rate when the take was prepared.
    public var sampleRate: Double { state.withLock { $0.sampleRate } }

    /// Channels of the file: the node's output channel count when the take was prepared.
    public var channelCount: Int { state.withLock { $0.channelCount } }

    /// Receives `.finished` and `.error` events (see the thread contract above).
    public func setEventHandler(_ handler: (@Sendable (RecorderEvent) -> Void)?) {
        eventHandler.withLock { $0 = handler.map { Callback($0) } }
    }

    // MARK: Control

    /// Opens the file (see the type's comment: an existing file is not touched yet) and starts the
    /// disk thread, so that `record()` starts at once.
    /// Does nothing when a take is already open. `record()` calls it implicitly.
    ///
    /// - Throws: `.file` when the file cannot be created (directory missing, permission, a directory
    ///   in the way) or the format refuses the rate or channel count; `.engine` if the node is gone.
    public func prepareToRecord() throws(RecorderError) {
        try operations.withLock { _ throws(RecorderError) in try prepareLocked() }
    }

    /// Starts recording, or resumes after `pause()`. Does nothing while recording. After a stop it
    /// starts a new take, which replaces the file when it is complete. A limit set by
    /// `record(forDuration:)` still applies.
    ///
    /// - Throws: as `prepareToRecord()`; `.engine` when the tap cannot be installed (the take stays
    ///   prepared); `.notAllowed` when the node's channel count changed since the take was prepared.
    public func record() throws(RecorderError) {
        try operations.withLock { _ throws(RecorderError) in try startLocked(duration: nil) }
    }

    /// Records `duration` more seconds, then stops by itself (finished notification). The take ends
    /// after exactly `round(duration × sampleRate)` further frames; the last block is cut. Time spent
    /// paused does not count. Resumes a paused take; extends or shortens a running one.
    ///
    /// - Parameter duration: seconds, > 0.
    /// - Throws: `.invalidArgument` for a duration ≤ 0 or not finite, and `record()`'s errors.
    public func record(forDuration duration: Double) throws(RecorderError) {
        guard duration.isFinite, duration > 0 else {
            throw .invalidArgument(
                path: path, reason: "the duration must be a positive number of seconds, not \(duration)")
        }
        try operations.withLock { _ throws(RecorderError) in try startLocked(duration: duration) }
    }

    /// Stops taking audio but keeps the file open; blocks arriving while paused are dropped. `record()`
    /// resumes. Does nothing unless recording.
    public func pause() {
        operations.withLock { _ in
            state.withLock { state in
                guard state.phase == .recording else { return }
                state.phase = .paused
            }
        }
    }

    /// Ends the take: removes the tap, lets the disk thread write what is queued, finalise the header
    /// and close the file. When it returns the file is complete and the `.finished` notification has
    /// been delivered (unless `stop()` is called from a handler on the disk thread, which cannot wait
    /// for itself). Also waits for a take that ended by itself (duration, write error) to close.
    public func stop() {
        let last = operations.withLock { _ -> RecorderWriter? in
            let (ending, last) = state.withLock { state in
                (state.phase == .stopped ? nil : Self.end(&state), state.lastWriter)
            }
            if let ending { finish(ending) }
            last?.waitUntilClosed()
            return last
        }
        last?.waitUntilCompleted()
    }

    /// Deletes the file. Only when stopped (AVAudioRecorder's rule).
    ///
    /// - Throws: `.notAllowed` while a take is open, `.file(.fileNotFound)` when there is no file,
    ///   `.file(.permissionDenied)` or `.file(.writeFailed)` when it cannot be removed.
    public func deleteRecording() throws(RecorderError) {
        try operations.withLock { _ throws(RecorderError) in
            let (phase, last) = state.withLock { ($0.phase, $0.lastWriter) }
            guard phase == .stopped else {
                throw .notAllowed(path: path, reason: "it is still open; call stop() before deleteRecording()")
            }
            last?.waitUntilClosed()
            guard unlink(path) != 0 else { return }
            let code = errno
            switch code {
            case ENOENT: throw .file(.fileNotFound(path: path))
            case EACCES, EPERM, EROFS: throw .file(.permissionDenied(path: path))
            default:
                let reason = "cannot delete it: \(String(cString: strerror(code)))"
                throw .file(.writeFailed(path: path, reason: reason))
            }
        }
    }

    /// Forward the engine's events here (from the handler given to `Engine.setEventHandler`). A
    /// `tapOverflow` on the recorded node while recording becomes `.error(.framesLost(…, .tapOverflow))`;
    /// a `tapRemoved` of this take's tap (its node was freed) ends the take with `.error(.nodeFreed)`.
    /// Other events are ignored. If several taps watch the same node, an overflow of any of them is
    /// reported (the engine's event does not say which tap overflowed).
    public func handle(_ event: EngineEvent) {
        if case .tapRemoved(let freedNode, let tapID) = event {
            endBecauseTheNodeWasFreed(freedNode, tapID: tapID)
            return
        }
        guard case .tapOverflow(let overflowNode, let frames) = event, overflowNode == node,
            state.withLock({ $0.phase == .recording })
        else { return }
        emit([.error(.framesLost(path: path, frames: frames, cause: .tapOverflow))])
    }

    /// The take's tap went with its node: the take ends as at `stop()` (the file is finalised and
    /// `.finished` follows from the disk thread), after an `.error(.nodeFreed)` that says why.
    private func endBecauseTheNodeWasFreed(_ freedNode: String, tapID: Int) {
        let ending = state.withLock { state -> Ending? in
            guard state.tapID == tapID, state.phase != .stopped else { return nil }
            return Self.end(&state)
        }
        guard let ending else { return }
        emit([.error(.nodeFreed(path: path, node: freedNode))])
        finish(ending)
    }

    // MARK: Metering

    /// Turns metering on or off (off by default, as in AVAudioRecorder). Metering costs one pass over
    /// each block on the poll thread.
    public var isMeteringEnabled: Bool {
        get { state.withLock { $0.isMeteringEnabled } }
        set { state.withLock { $0.isMeteringEnabled = newValue } }
    }

    /// Refreshes the readings from the samples taken since the previous call: peak and RMS per
    /// channel. With no new samples the readings stay; when not recording they read −160.
    public func updateMeters() {
        state.withLock { state in
            if state.phase == .recording {
                state.meter.update()
            } else {
                state.meter.reset()
            }
        }
    }

    /// RMS level of `channel` (0-based) at the last `updateMeters()`, in dBFS (−160…0). −160 when
    /// metering is off or the channel does not exist.
    public func averagePower(forChannel channel: Int) -> Float {
        state.withLock { state in
            guard state.isMeteringEnabled, state.meter.averageDecibels.indices.contains(channel) else {
                return RecorderMeter.floorDecibels
            }
            return state.meter.averageDecibels[channel]
        }
    }

    /// Largest absolute sample of `channel` (0-based) at the last `updateMeters()`, in dBFS (−160…0).
    /// −160 when metering is off or the channel does not exist.
    public func peakPower(forChannel channel: Int) -> Float {
        state.withLock { state in
            guard state.isMeteringEnabled, state.meter.peakDecibels.indices.contains(channel) else {
                return RecorderMeter.floorDecibels
            }
            return state.meter.peakDecibels[channel]
        }
    }

    // MARK: Test hooks

    /// Holds or releases the disk thread of the open take (tests use it to fill the backlog).
    func holdWriterForTesting(_ held: Bool) {
        state.withLock { $0.writer }?.setHeld(held)
    }

    /// The open take's disk thread, for a test to release while the poll thread waits for it (with
    /// `waitsForWriter` the waiting tap handler holds the recorder's lock).
    var writerForTesting: RecorderWriter? { state.withLock { $0.writer } }

    // MARK: Take life cycle (callers hold `operations`)

    /// Opens a take if none is open.
    private func prepareLocked() throws(RecorderError) {
        let (isOpen, last) = state.withLock { ($0.phase != .stopped, $0.lastWriter) }
        if isOpen { return }
        // The previous take may still be closing on its disk thread: never open the file under it.
        last?.waitUntilClosed()
        let info = try Self.nodeInfo(engine: engine, node: node, bus: bus, path: path)
        let rate = engine.configuration.sampleRate
        let take = state.withLock { state in
            state.take += 1
            return state.take
        }
        let writer: RecorderWriter
        do {
            writer = try RecorderWriter(
                path: path, sampleRate: rate, channelCount: info.outputChannelCount, settings: settings
            ) { [weak self] outcome in
                self?.writerEnded(take: take, outcome: outcome)
            }
        } catch {
            throw .file(error)
        }
        writer.start()
        state.withLock { state in
            state.phase = .prepared
            state.writer = writer
            state.lastWriter = writer
            state.sampleRate = rate
            state.channelCount = info.outputChannelCount
            state.recordedFrames = 0
            state.frameLimit = nil
            state.meter = RecorderMeter(channelCount: info.outputChannelCount)
            state.unreportedDrops = 0
            state.dropReportStart = nil
        }
    }

    /// Prepares if needed, installs the tap on the first start, and sets the phase to recording.
    /// `duration` (seconds) sets the limit to that many frames beyond those already taken.
    private func startLocked(duration: Double?) throws(RecorderError) {
        try prepareLocked()
        let (needsTap, take, channelCount) = state.withLock { state in
            if let duration {
                state.frameLimit = state.recordedFrames + max(1, Int((duration * state.sampleRate).rounded()))
            }
            let needsTap = state.phase == .prepared
            return (needsTap, state.take, state.channelCount)
        }
        guard needsTap else {
            state.withLock { state in
                if state.phase == .paused { state.phase = .recording }
            }
            return
        }
        let info = try Self.nodeInfo(engine: engine, node: node, bus: bus, path: path)
        guard info.outputChannelCount == channelCount else {
            throw .notAllowed(
                path: path,
                reason: "'\(node)' now has \(info.outputChannelCount) channels but the file was prepared for "
                    + "\(channelCount); stop() and record again")
        }
        // Recording before the tap exists, so the first delivered block is taken.
        state.withLock { $0.phase = .recording }
        let id: Int
        do {
            id = try engine.installTap(on: node, bus: bus, frameCount: settings.tapFrameCount) { [weak self] block in
                self?.receive(block, take: take)
            }
        } catch {
            state.withLock { state in
                if state.take == take, state.phase == .recording, state.tapID == nil { state.phase = .prepared }
            }
            throw .engine(path: path, error)
        }
        // The take may have ended meanwhile (a short duration reached, a write error): then the tap is ours
        // to remove.
        let isOrphan = state.withLock { state in
            guard state.take == take, state.phase != .stopped else { return true }
            state.tapID = id
            return false
        }
        if isOrphan { engine.removeTap(id) }
    }

    /// Marks the take stopped and returns what must be torn down outside the lock.
    private static func end(_ state: inout State) -> Ending {
        let ending = Ending(writer: state.writer, tapID: state.tapID, unreportedDrops: state.unreportedDrops)
        state.phase = .stopped
        state.writer = nil
        state.tapID = nil
        state.frameLimit = nil
        state.unreportedDrops = 0
        state.dropReportStart = nil
        state.meter.reset()
        return ending
    }

    /// Removes the tap and asks the writer to finish; the disk thread reports pending drops, then the
    /// end. Emits nothing itself (callers may hold `operations`). Never waits.
    private func finish(_ ending: Ending) {
        if let tapID = ending.tapID { engine.removeTap(tapID) }
        ending.writer?.finish(reportingLostFrames: ending.unreportedDrops)
    }

    // MARK: Poll thread

    /// Tap handler: meters the block and hands it to the disk thread; cuts the last block of a
    /// duration and ends the take. Never touches the file.
    private func receive(_ block: TapBuffer, take: Int) {
        var events: [RecorderEvent] = []
        let rate = engine.configuration.sampleRate
        let ending = state.withLock { state -> Ending? in
            guard state.take == take, state.phase == .recording, let writer = state.writer,
                block.channels.count == state.channelCount
            else { return nil }
            // The file's rate is fixed: audio at another rate would play at the wrong speed and pitch.
            if rate != state.sampleRate {
                events.append(.error(.sampleRateChanged(path: path, from: state.sampleRate, to: rate)))
                return Self.end(&state)
            }
            var frames = block.frameCount
            if let limit = state.frameLimit { frames = min(frames, limit - state.recordedFrames) }
            guard frames > 0 else { return Self.end(&state) }
            let channels = frames == block.frameCount ? block.channels : block.channels.map { Array($0[0..<frames]) }
            if state.isMeteringEnabled { state.meter.accumulate(channels, frames: frames) }
            switch writer.enqueue(channels, frames: frames) {
            case .accepted:
                state.recordedFrames += frames
                if state.unreportedDrops > 0 {
                    events.append(.error(.framesLost(path: path, frames: state.unreportedDrops, cause: .writerBehind)))
                    state.unreportedDrops = 0
                }
                state.dropReportStart = nil
            case .full:
                // Report at the first drop, then at most once a second while the disk stays behind.
                state.unreportedDrops += frames
                let now = ContinuousClock.now
                if state.dropReportStart.map({ now - $0 >= .seconds(1) }) ?? true {
                    events.append(.error(.framesLost(path: path, frames: state.unreportedDrops, cause: .writerBehind)))
                    state.unreportedDrops = 0
                    state.dropReportStart = now
                }
            case .closed:
                // The disk thread failed; its end handler stops the take and reports.
                break
            }
            if let limit = state.frameLimit, state.recordedFrames >= limit { return Self.end(&state) }
            return nil
        }
        emit(events)
        if let ending { finish(ending) }
    }

    // MARK: Disk thread

    /// The take's file is closed: reports what was lost at the end, a failure, then the end. A failure
    /// while the take was open ends it here.
    private func writerEnded(take: Int, outcome: RecorderWriter.Outcome) {
        let (ending, rate) = state.withLock { state -> (Ending?, Double) in
            // A cut take counts what its file holds, not what was handed to the disk thread.
            if outcome.failure != nil, state.take == take {
                state.recordedFrames = outcome.remains?.keptFrames ?? 0
            }
            guard state.take == take, state.phase != .stopped else { return (nil, state.sampleRate) }
            return (Self.end(&state), state.sampleRate)
        }
        if let tapID = ending?.tapID { engine.removeTap(tapID) }
        var events: [RecorderEvent] = []
        let lost = outcome.lostFrames + (ending?.unreportedDrops ?? 0)
        if lost > 0 { events.append(.error(.framesLost(path: path, frames: lost, cause: .writerBehind))) }
        if let failure = outcome.failure {
            events.append(.error(.takeFailed(failure, remains: outcome.remains ?? .unchanged, sampleRate: rate)))
        }
        events.append(.finished(successfully: outcome.failure == nil))
        emit(events)
    }

    // MARK: Helpers

    private func emit(_ events: [RecorderEvent]) {
        guard !events.isEmpty, let handler = eventHandler.withLock({ $0 })?.call else { return }
        for event in events { handler(event) }
    }

    private static func validate(_ settings: RecorderSettings, path: String) throws(RecorderError) {
        guard (1...65_536).contains(settings.tapFrameCount) else {
            throw .invalidArgument(
                path: path, reason: "tapFrameCount must lie in 1…65536, not \(settings.tapFrameCount)")
        }
        guard settings.maximumBacklog.isFinite, settings.maximumBacklog > 0 else {
            throw .invalidArgument(path: path, reason: "maximumBacklog must be a positive number of seconds")
        }
        guard settings.headerUpdateInterval.isFinite, settings.headerUpdateInterval > 0,
            settings.headerUpdateInterval <= 1
        else {
            throw .invalidArgument(path: path, reason: "headerUpdateInterval must lie in (0, 1] seconds")
        }
    }
}

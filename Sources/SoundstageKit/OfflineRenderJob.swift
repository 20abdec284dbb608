// Control side. `soundstage render`: a patch rendered to a file faster than real time, no JACK, with
// the patch's recorders writing their files alongside.
import AudioFiles
import AudioGraph
import Locking

/// Renders a loaded patch to an audio file.
public enum OfflineRenderJob {
    /// How the output file is encoded.
    public struct Output: Sendable {
        /// Destination, under `OutputDestination`'s rule.
        public var path: String
        /// Container and codec; nil chooses it from the extension.
        public var format: AudioFileFormat?
        /// PCM or ALAC encoding; nil = the format's default.
        public var encoding: AudioSampleEncoding?
        /// 0 … 1 for the lossy formats.
        public var quality: Double
        /// AAC bits per second; nil derives it from `quality`.
        public var bitRate: Int?
        /// Channels of the file; nil = the engine's outputs. The engine's outputs are mixed to it by
        /// `AudioData.mix(_:to:)`'s rules (N → 1 averages, 1 → N copies).
        public var channelCount: Int?

        public init(
            path: String, format: AudioFileFormat? = nil, encoding: AudioSampleEncoding? = nil,
            quality: Double = AudioFileWriter.defaultQuality, bitRate: Int? = nil, channelCount: Int? = nil
        ) {
            self.path = path
            self.format = format
            self.encoding = encoding
            self.quality = quality
            self.bitRate = bitRate
            self.channelCount = channelCount
        }
    }

    /// What a render made.
    public struct Result: Sendable {
        /// Frames written to the output.
        public var frames: Int
        /// Channels written to the output.
        public var channelCount: Int
        /// Each recorder of the patch that recorded, in name order.
        public var recordings: [Recording]
        /// One message per recorder that could not start or lost its file; empty when all went well.
        public var recorderProblems: [String]
    }

    /// A recorder's take during a render.
    public struct Recording: Sendable {
        /// The recorder's name in the patch.
        public var name: String
        /// Its file.
        public var path: String
        /// Frames it took into the file.
        public var frames: Int
    }

    /// Renders `duration` seconds of `patch` in host blocks of `blockFrames` and writes them to
    /// `output` under `OutputDestination`'s rule: the file is put in place only when complete. The
    /// patch's recorders marked `record` write their files too, each frame the render produces for
    /// their node (a recorder's `duration` cuts its take short); the render waits for their disk
    /// threads rather than drop anything. `onOpen` sees the writer before the first block (the CLI
    /// registers its temporary file for removal on a signal); `onProgress` gets the frames rendered
    /// so far, about a hundred times per render. On failure the output is not put in place. `inputs`
    /// feed the capture channels (`in_1..N`) and `ports` the exposed nodes' input ports by short name,
    /// as JACK would; both end in silence when shorter than the render. `onBlock` sees each block as
    /// it was written (interleaved, the output's channels, and the frame count), e.g. to draw it.
    public static func run(
        _ patch: LoadedPatch, to output: Output, duration: Double, blockFrames: Int,
        inputs: [[Float]]? = nil, ports: [String: [Float]] = [:],
        onOpen: (AudioFileWriter) -> Void = { _ in }, onProgress: (Int) -> Void = { _ in },
        onBlock: (UnsafeBufferPointer<Float>, Int) -> Void = { _, _ in }
    ) throws(AudioFileError) -> Result {
        let engine = patch.engine
        let config = engine.configuration
        let frames = Int((duration * config.sampleRate).rounded())
        let sourceChannels = config.outputChannelCount
        let channelCount = output.channelCount ?? sourceChannels
        if let problem = AudioData.channelMixProblem(from: sourceChannels, to: channelCount) {
            throw .invalidArgument(path: output.path, reason: problem)
        }
        let writer = try AudioFileWriter(
            path: output.path, format: output.format, sampleRate: config.sampleRate, channelCount: channelCount,
            encoding: output.encoding, quality: output.quality, bitRate: output.bitRate)
        onOpen(writer)
        let problems = Locked<[String]>([])
        // Takes cut by a write failure that left no file of theirs (removed, or the old file kept).
        let emptyTakes = Locked<Set<String>>([])
        let (recorders, startProblems) = patch.startRecorders(waitsForWriters: true) { name, event in
            guard case .error(let error) = event else { return }
            if case .takeFailed(_, let remains, _) = error, remains.keptFrames == 0 {
                emptyTakes.withLock { _ = $0.insert(name) }
            }
            problems.withLock { $0.append("recorder '\(name)': \(error)") }
        }
        // Those marked `record: false` stay prepared-only and write nothing.
        let recording = recorders.filter { $0.value.isRecording }
        var interleaved = [Float](repeating: 0, count: max(1, blockFrames) * channelCount)
        var failure: AudioFileError?
        var done = 0
        var nextReport = 0
        var reported = -1
        OfflineRenderer(engine: engine).render(
            frameCount: frames, hostBlockFrames: blockFrames, inputs: inputs, ports: ports
        ) { channels in
            guard failure == nil else { return }
            let n = channels.first?.count ?? 0
            let mixed = channelCount == sourceChannels ? nil : AudioData.mix(channels.map(Array.init), to: channelCount)
            for c in 0..<channelCount {
                if let mixed {
                    for f in 0..<n { interleaved[f * channelCount + c] = mixed[c][f] }
                } else {
                    for f in 0..<n { interleaved[f * channelCount + c] = channels[c][f] }
                }
            }
            do {
                try interleaved.withUnsafeBufferPointer { try writer.write(interleaved: $0, frames: n) }
                interleaved.withUnsafeBufferPointer { onBlock($0, n) }
            } catch {
                failure = error as? AudioFileError
            }
            done += n
            if done >= nextReport {
                onProgress(done)
                reported = done
                nextReport = done + max(1, frames / 100)
            }
        }
        if reported != done { onProgress(done) }
        // The recorders get the frames still short of a whole tap block, then close their files.
        engine.flushTaps()
        var recordings: [Recording] = []
        for recorder in recorders.values { recorder.stop() }
        let empty = emptyTakes.withLock { $0 }
        for (name, recorder) in recording.sorted(by: { $0.key < $1.key }) where !empty.contains(name) {
            recordings.append(Recording(name: name, path: recorder.path, frames: recorder.recordedFrameCount))
        }
        if let failure {
            writer.discard()
            throw failure
        }
        try writer.close()
        return Result(
            frames: frames, channelCount: channelCount, recordings: recordings,
            recorderProblems: startProblems + problems.withLock { $0 })
    }
}

// Control side. `soundstage render`: a patch rendered to a file faster than real time, no JACK.
import AudioFiles
import AudioGraph

/// Renders a loaded patch to an audio file.
public enum OfflineRenderJob {
    /// Renders `duration` seconds of `patch` in host blocks of `blockFrames` and writes them to `path`
    /// (`format`, or from the extension; WAV/CAF/AIFF as 32-bit float) under `OutputDestination`'s
    /// rule: the file is put in place only when complete. `onOpen` sees the writer before the first
    /// block (the CLI registers its temporary file for removal on a signal). Returns the frames
    /// written. On failure nothing is put in place.
    @discardableResult
    public static func run(
        _ patch: LoadedPatch, to path: String, format: AudioFileFormat? = nil, duration: Double, blockFrames: Int,
        onOpen: (AudioFileWriter) -> Void = { _ in }
    ) throws(AudioFileError) -> Int {
        let engine = patch.engine
        let config = engine.configuration
        let frames = Int((duration * config.sampleRate).rounded())
        let writer = try AudioFileWriter(
            path: path, format: format, sampleRate: config.sampleRate, channelCount: config.outputChannelCount)
        onOpen(writer)
        var interleaved = [Float](repeating: 0, count: max(1, blockFrames) * config.outputChannelCount)
        var failure: AudioFileError?
        OfflineRenderer(engine: engine).render(frameCount: frames, hostBlockFrames: blockFrames) { channels in
            guard failure == nil else { return }
            let n = channels.first?.count ?? 0
            let count = channels.count
            for f in 0..<n { for c in 0..<count { interleaved[f * count + c] = channels[c][f] } }
            do {
                try interleaved.withUnsafeBufferPointer { try writer.write(interleaved: $0, frames: n) }
            } catch {
                failure = error as? AudioFileError
            }
        }
        if let failure {
            writer.discard()
            throw failure
        }
        try writer.close()
        return frames
    }
}

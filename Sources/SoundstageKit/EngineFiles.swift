// Control side. The one way a remote client (OSC) reaches files: paths confined to the file roots,
// files decoded into buffers or scheduled on players, patches applied and saved. Everything but
// `resolve` blocks on the disk: call it from a worker, never from a thread that answers requests.
import AudioFiles
import AudioGraph
import Foundation
import Patches

/// Files for one engine, inside one set of roots.
public struct EngineFiles: Sendable {
    public let engine: Engine
    public let policy: FileAccessPolicy

    public init(engine: Engine, policy: FileAccessPolicy) {
        self.engine = engine
        self.policy = policy
    }

    /// The absolute, resolved form of a client's path, if it lies inside a root (cheap: no decoding).
    public func resolve(_ path: String) throws(FileAccessError) -> String { try policy.resolve(path) }

    /// A file's region (its own frames) decoded at the engine rate into a buffer named `name` (not yet
    /// added to the engine).
    public func decodeBuffer(named name: String, path: String, startFrame: Int = 0, frameCount: Int? = nil)
        throws(AudioFileError) -> SampleBuffer
    {
        try SampleBuffer.decoding(
            name: name, path: path, startFrame: startFrame, frameCount: frameCount,
            rate: engine.configuration.sampleRate)
    }

    /// Makes a file the player's material, from its start or a segment of it (`startFrame`/`frameCount`
    /// in the file's own frames, as AVAudioPlayerNode's segments), not looping. Returns the frames the
    /// segment holds at the engine rate and the file's channels.
    public func scheduleFile(on node: String, path: String, startFrame: Int? = nil, frameCount: Int? = nil)
        throws(EngineError) -> (frames: Int, channels: Int)
    {
        let rate = engine.configuration.sampleRate
        let info = try? AudioFileReader.info(path: path)
        let fileRate = info?.sampleRate ?? rate
        func engineFrames(_ fileFrames: Int) -> Int { Int((Double(fileFrames) * rate / fileRate).rounded()) }
        try engine.set(node, "start", to: .int(0))
        try engine.set(node, "frames", to: .int(0))
        try engine.set(node, "loop", to: .bool(false))
        try engine.set(node, "file", to: .string(path))
        if startFrame != nil || frameCount != nil {
            try engine.batch { () throws(EngineError) in
                try engine.set(node, "start", to: .int(engineFrames(startFrame ?? 0)))
                try engine.set(node, "frames", to: .int(frameCount.map(engineFrames) ?? 0))
            }
        }
        let channels = (try? engine.get(node, "channels"))?.intValue ?? 0
        let total = info.map { engineFrames($0.frameCount) } ?? 0
        return (frameCount.map(engineFrames) ?? max(0, total - engineFrames(startFrame ?? 0)), channels)
    }

    /// Replaces the running graph with the patch at `path` (`PatchLoader.apply`); returns the warnings.
    public func applyPatch(path: String) throws(PatchLoadError) -> [PatchDiagnostic] {
        try PatchLoader.apply(path: path, to: engine)
    }

    /// Brings the running graph to the patch at `path` by a diff (`PatchLoader.reload`, no baseline: every
    /// written parameter that differs from the live value is set); returns the warnings.
    public func reloadPatch(path: String) throws(PatchLoadError) -> [PatchDiagnostic] {
        try PatchLoader.reload(path: path, into: engine, baseline: nil).summary.warnings
    }

    /// Writes the running graph as a patch to `path` under `OutputDestination`'s rule, with `jack` as its
    /// `jack:` section (the host's connections, `PatchSnapshot.jackSettings`).
    public func savePatch(to path: String, jack: PatchJackSettings = PatchJackSettings()) throws(AudioFileError) {
        try OutputDestination.write(Data(PatchSnapshot.yaml(of: engine, jack: jack).utf8), to: path)
    }
}

extension NodeKind {
    /// Whether `parameter` of this kind names a file the engine reads (`ParameterSpec.isFilePath`).
    public func isFilePathParameter(_ parameter: String) -> Bool {
        parameters.contains { $0.isFilePath && $0.name == parameter }
    }
}

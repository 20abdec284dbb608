// Control side. Builds an engine from a patch file: parse, configure, load buffers, attach, connect.
// Everything is validated before any host starts, and every error carries its line and column.
import AudioFiles
import AudioGraph
import Foundation
import Patches

/// Loads and checks patch files.
public enum PatchLoader {
    /// Options that override the patch's `engine:` section.
    public struct Overrides: Sendable {
        public var sampleRate: Double?
        public var blockFrames: Int?
        /// Load the rest of the patch when audio files (buffer files, a player's `file`, an
        /// environment's `hrtf`) are missing or unreadable: each such problem becomes a warning in
        /// `LoadedPatch.warnings` and what needed the file goes without it. `check` keeps them errors.
        public var toleratesFileProblems: Bool
        public init(sampleRate: Double? = nil, blockFrames: Int? = nil, toleratesFileProblems: Bool = false) {
            self.sampleRate = sampleRate
            self.blockFrames = blockFrames
            self.toleratesFileProblems = toleratesFileProblems
        }
    }

    /// Parses and builds the patch at `path`. On any error nothing is returned and every problem found
    /// is reported.
    public static func load(path: String, overrides: Overrides = Overrides()) throws(PatchLoadError) -> LoadedPatch {
        let document: PatchDocument
        do {
            document = try PatchParser.parse(contentsOf: path, names: .engine)
        } catch {
            let found = engineDiagnostics(after: error, overrides: overrides)
            throw PatchLoadError(diagnostics: PatchParser.ordered(error.diagnostics + found))
        }
        return try build(document, overrides: overrides)
    }

    /// After schema errors, the engine's checks of the rest of the patch (the entries left out are
    /// not there, and what it says of them is left out too), so that one `check` reports as much as
    /// it can. Empty after a syntax error.
    static func engineDiagnostics(after error: PatchParseError, overrides: Overrides) -> [PatchDiagnostic] {
        guard let document = error.partialDocument else { return [] }
        var build = PatchBuild(document: document, overrides: overrides)
        build.loadBuffers()
        build.attachNodes()
        build.connectNodes()
        build.checkTaps()
        build.checkRecorders()
        let quoted = error.leftOutNames.map { "'\($0)'" }
        let found = build.diagnostics.filter { diagnostic in
            !error.diagnostics.contains(diagnostic) && !quoted.contains { diagnostic.message.contains($0) }
        }
        return found
    }

    /// `check`'s errors, or, for a patch that loads, its warnings (severity `.warning`).
    public static func diagnose(path: String) -> [PatchDiagnostic] {
        do {
            return try load(path: path).warnings
        } catch {
            return error.diagnostics
        }
    }

    /// Every problem in the patch at `path` (empty when it is valid). Loads its files to check them.
    public static func check(path: String) -> [PatchDiagnostic] {
        do {
            _ = try load(path: path)
            return []
        } catch {
            return error.diagnostics
        }
    }

    /// Parses the patch at `path` once (a pipe can be read only once) and checks it: the document, or
    /// every problem found.
    public static func parseAndCheck(path: String) -> Result<PatchDocument, PatchLoadError> {
        let document: PatchDocument
        do {
            document = try PatchParser.parse(contentsOf: path, names: .engine)
        } catch {
            let found = engineDiagnostics(after: error, overrides: Overrides())
            return .failure(PatchLoadError(diagnostics: PatchParser.ordered(error.diagnostics + found)))
        }
        do {
            _ = try build(document)
            return .success(document)
        } catch {
            return .failure(error)
        }
    }

    /// Builds an engine from a parsed document, in `PatchBuild`'s phases: configure, buffers, nodes,
    /// connections, taps, recorders.
    public static func build(_ document: PatchDocument, overrides: Overrides = Overrides()) throws(PatchLoadError)
        -> LoadedPatch
    {
        var build = PatchBuild(document: document, overrides: overrides)
        build.loadBuffers()
        build.attachNodes()
        build.connectNodes()
        build.checkVoiceReferences()
        build.checkTaps()
        build.checkRecorders()
        return try build.finish()
    }

    /// A patch buffer at `rate`: a `file` buffer's region (`start`/`frames` count the file's own frames)
    /// decoded and converted, or a `generate` buffer rendered. The Nyquist check of generators is the
    /// caller's (it reports at the field).
    static func makeBuffer(_ buffer: PatchBuffer, of document: PatchDocument, rate: Double) throws(AudioFileError)
        -> SampleBuffer
    {
        switch buffer.source {
        case .file(let file):
            return try SampleBuffer.decoding(
                name: buffer.name, path: document.resolvedPath(forFile: file),
                startFrame: buffer.start ?? 0, frameCount: buffer.frames, rate: rate)
        case .generate(let g):
            return SampleBuffer(
                name: buffer.name, channels: BufferSynthesizer.render(g, sampleRate: rate), sampleRate: rate,
                origin: .generated(
                    waveform: g.waveform.rawValue, frequency: g.frequency, duration: g.duration,
                    amplitude: g.amplitude, channelCount: g.channelCount))
        }
    }

    static func parameterValue(_ value: PatchValue) -> ParameterValue? {
        switch value {
        case .bool(let b): return .bool(b)
        case .int(let i): return .int(i)
        case .double(let d): return .float(d)
        case .string(let s): return .string(s)
        case .list: return nil
        }
    }

    /// Opens files for streaming (`scheduleFile` of long files) with `AudioFileStreamReader`, read by a
    /// `DiskStreamer` thread: relative paths resolve against the patch's folder.
    public static func streamOpener(relativeTo document: PatchDocument?) -> StreamOpener {
        let base = document?.path.map { URL(fileURLWithPath: $0).deletingLastPathComponent().path }
        return StreamOpener(
            open: { path, rate in
                let resolved =
                    path.hasPrefix("/") || base == nil
                    ? path : URL(fileURLWithPath: base!).appendingPathComponent(path).path
                do {
                    return try AudioFileStreamReader(path: resolved, targetSampleRate: rate)
                } catch {
                    throw EngineError(.fileError, "\(error)")
                }
            }, makeDiskThread: { DiskStreamer() })
    }

    /// Loads files for the player's `file` parameter: relative paths resolve against the patch's folder.
    static func fileLoader(relativeTo document: PatchDocument) -> @Sendable (String, Double) throws -> SampleBuffer {
        let base = document.path.map { URL(fileURLWithPath: $0).deletingLastPathComponent().path }
        return { path, rate in
            let resolved =
                path.hasPrefix("/") || base == nil
                ? path : URL(fileURLWithPath: base!).appendingPathComponent(path).path
            do {
                let name =
                    "file."
                    + (URL(fileURLWithPath: resolved).lastPathComponent.filter {
                        $0.isLetter || $0.isNumber || $0 == "." || $0 == "_" || $0 == "-"
                    })
                return try SampleBuffer.decoding(
                    name: name.isEmpty ? "file" : String(name.prefix(64)), path: resolved, rate: rate)
            } catch {
                throw EngineError(.fileError, "\(error)")
            }
        }
    }
}

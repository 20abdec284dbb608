// Control side. What a `Recorder` refuses when it is made, rather than when it starts recording: an
// unknown node or bus, an encoding its format cannot store or would ignore, a file name the file
// system cannot take, a rate or channel count the encoder refuses. Patch checks use the same rules.
import AudioFiles
import AudioGraph
import Foundation

extension Recorder {
    /// The file a recording of `path` writes in the end (links followed, relative paths made absolute):
    /// two recorders with the same destination would replace each other's takes.
    public static func destination(of path: String) -> String {
        OutputDestination.resolvedTarget(of: path)
    }

    /// The node's description, when it exists and has output bus `bus`.
    static func nodeInfo(engine: Engine, node: String, bus: Int, path: String) throws(RecorderError) -> NodeInfo {
        guard let info = engine.nodes().first(where: { $0.name == node }) else {
            throw .engine(path: path, EngineError(.unknownNode, "there is no node named '\(node)'"))
        }
        let count = info.kind.outputBusCount
        guard bus >= 0, bus < count else {
            let message =
                count == 0
                ? "'\(node)' (\(info.kind.rawValue)) has no output bus to record"
                : "'\(node)' has no output bus \(bus): it has \(busCount(count))"
            throw .engine(path: path, EngineError(.invalidBus, message))
        }
        return info
    }

    /// "1 output bus (bus 0)", "2 output buses (0 and 1)", "4 output buses (0…3)".
    static func busCount(_ count: Int) -> String {
        switch count {
        case 1: "1 output bus (bus 0)"
        case 2: "2 output buses (0 and 1)"
        default: "\(count) output buses (0…\(count - 1))"
        }
    }

    /// Refuses an encoding the format cannot store (float in FLAC or ALAC) or has none of (the lossy
    /// formats, which would ignore it).
    static func checkEncoding(
        _ encoding: AudioSampleEncoding?, format: AudioFileFormat, path: String
    ) throws(RecorderError) {
        guard let encoding, let reason = format.encodingRefusal(encoding) else { return }
        throw .invalidArgument(path: path, reason: reason)
    }

    /// Refuses a file name longer than the folder's file system takes (`NAME_MAX`, 255 bytes on Linux
    /// file systems) and a path longer than `PATH_MAX`.
    static func checkFileName(_ path: String) throws(RecorderError) {
        if let reason = fileNameProblem(path) { throw .file(.writeFailed(path: path, reason: reason)) }
    }

    /// Why `path` cannot name a file here, or nil.
    static func fileNameProblem(_ path: String) -> String? {
        let name = path.split(separator: "/", omittingEmptySubsequences: false).last.map(String.init) ?? path
        let folder = URL(fileURLWithPath: path).deletingLastPathComponent().path
        let limit = pathconf(folder, Int32(_PC_NAME_MAX))
        let maximum = limit > 0 ? limit : 255
        if name.utf8.count > maximum {
            return "its file name is \(name.utf8.count) bytes long; a file name here can have at most \(maximum) bytes"
        }
        let full = URL(fileURLWithPath: path).path.utf8.count
        if full >= Int(PATH_MAX) {
            return "the path is \(full) bytes long; a path can have at most \(Int(PATH_MAX) - 1) bytes"
        }
        return nil
    }

    /// Refuses what the writer would refuse when the take opens: a rate or channel count the format
    /// cannot store, a combination the library cannot write.
    static func checkWriter(
        format: AudioFileFormat, sampleRate: Double, channelCount: Int, settings: RecorderSettings, path: String
    ) throws(RecorderError) {
        do throws(AudioFileError) {
            try AudioFileWriter.check(
                path: path, format: format, sampleRate: sampleRate, channelCount: channelCount,
                encoding: settings.encoding, quality: settings.quality)
        } catch {
            throw .file(error)
        }
    }
}

// Control side; blocks on the disk. A session folder (NSM's per-client path): the running state saved as
// `patch.yaml` beside copies of every file it reads, so the folder alone plays the same again.
import AudioFiles
import AudioGraph
import Foundation
import Patches

/// A folder that holds one Soundstage session: `patch.yaml` and the files it reads.
public struct SessionFolder: Sendable, Equatable {
    /// The patch file's name inside the folder.
    public static let patchFileName = "patch.yaml"

    /// Absolute, standardized folder path.
    public let path: String

    public init(path: String) {
        self.path = URL(fileURLWithPath: path).standardizedFileURL.path
    }

    /// `path/patch.yaml`.
    public var patchPath: String { path + "/" + Self.patchFileName }

    /// Whether a saved session exists.
    public var hasPatch: Bool { FileManager.default.fileExists(atPath: patchPath) }

    /// Creates the folder (and its parents) when missing.
    public func create() throws(SessionFolderError) {
        do {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        } catch {
            throw SessionFolderError("cannot create the session folder '\(path)': \(error.localizedDescription)")
        }
    }

    /// The running state as a patch: `PatchSnapshot` (nodes with their current parameter values, buffers,
    /// connections) plus `jackConnections` (`PatchSnapshot.jackSettings`) and what `carrying` says beyond
    /// the graph (its `session:` section, and its recorders whose node still exists). File references are
    /// as the engine holds them.
    public static func document(
        of engine: Engine, jackConnections: [(source: String, destination: String)], clientName: String?,
        carrying previous: PatchDocument?
    ) -> PatchDocument {
        let jack = PatchSnapshot.jackSettings(connections: jackConnections, clientName: clientName)
        var document = PatchSnapshot.document(of: engine, jack: jack).document
        if let previous {
            let names = Set(document.nodes.map { (node: PatchNode) in node.name }).union(["main", "output"])
            document.recorders = previous.recorders.filter { names.contains($0.node) }.map { $0.withoutLocations() }
            document.session = previous.session.withoutLocations()
        }
        return document
    }

    /// What a save did with the files the patch reads.
    public struct SaveReport: Sendable, Equatable {
        /// Names of the files copied into the folder.
        public var copied: [String] = []
        /// Files outside the folder that do not exist (kept as absolute references, not copied).
        public var missing: [String] = []
    }

    /// Writes `document` as `patch.yaml`: every file it reads (buffer files and file parameters such as a
    /// player's `file` or an HRTF set) that lies outside the folder is copied in and referred to by its
    /// name in the folder; files inside are referred to relative to it; a file that does not exist keeps
    /// its absolute path (the save still happens). Relative references are taken relative to `base`: the
    /// folder of the patch the engine was loaded from (an engine keeps a player's `file` as the patch
    /// wrote it), or the working directory when nil. The patch file is replaced only when complete.
    @discardableResult
    public func save(_ document: PatchDocument, base: String? = nil) throws(SessionFolderError) -> SaveReport {
        try create()
        var document = document
        var report = SaveReport()
        var byOrigin: [String: String] = [:]
        func adopt(_ reference: String) throws(SessionFolderError) -> String {
            guard !reference.isEmpty else { return reference }
            let absolute =
                reference.hasPrefix("/")
                ? reference
                : URL(fileURLWithPath: reference, relativeTo: base.map { URL(fileURLWithPath: $0, isDirectory: true) })
                    .path
            let source = URL(fileURLWithPath: absolute).standardizedFileURL.path
            if source.hasPrefix(path + "/") {
                // Inside: referred to by its place in the folder, and named when it is gone.
                if !FileManager.default.fileExists(atPath: source), !report.missing.contains(source) {
                    report.missing.append(source)
                }
                return String(source.dropFirst(path.count + 1))
            }
            if let known = byOrigin[source] { return known }
            guard FileManager.default.fileExists(atPath: source) else {
                if !report.missing.contains(source) { report.missing.append(source) }
                return source
            }
            let name = try copyIn(source)
            byOrigin[source] = name
            report.copied.append(name)
            return name
        }
        for index in document.buffers.indices {
            if case .file(let file) = document.buffers[index].source {
                document.buffers[index].source = .file(path: try adopt(file))
            }
        }
        for n in document.nodes.indices {
            guard let kind = NodeKind(rawValue: document.nodes[n].kind) else { continue }
            for p in document.nodes[n].params.indices {
                let parameter = document.nodes[n].params[p]
                guard kind.isFilePathParameter(parameter.key), case .string(let file) = parameter.value else {
                    continue
                }
                document.nodes[n].params[p].value = .string(try adopt(file))
            }
        }
        // A recorder writing into a subfolder of the session (`takes/take1.wav`) finds it there.
        for recorder in document.recorders where !recorder.path.hasPrefix("/") {
            let folder = URL(fileURLWithPath: path + "/" + recorder.path).standardizedFileURL
                .deletingLastPathComponent().path
            guard folder.hasPrefix(path + "/") else { continue }
            do {
                try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            } catch {
                throw SessionFolderError("cannot make the recordings folder '\(folder)': \(error.localizedDescription)")
            }
        }
        document.path = patchPath
        do {
            try OutputDestination.write(Data(PatchWriter.yaml(document).utf8), to: patchPath)
        } catch {
            throw SessionFolderError("cannot write '\(patchPath)': \(error)")
        }
        return report
    }

    /// Copies `source` into the folder under its own name, or a numbered variant when another file has
    /// that name; a file with the same name and the same bytes is used as it is. Returns the name.
    private func copyIn(_ source: String) throws(SessionFolderError) -> String {
        let manager = FileManager.default
        let url = URL(fileURLWithPath: source)
        let stem = url.deletingPathExtension().lastPathComponent
        let ext = url.pathExtension
        for attempt in 1...1000 {
            let name = attempt == 1 ? url.lastPathComponent : "\(stem)-\(attempt)" + (ext.isEmpty ? "" : ".\(ext)")
            let destination = path + "/" + name
            if manager.fileExists(atPath: destination) {
                if manager.contentsEqual(atPath: source, andPath: destination) { return name }
                continue
            }
            do {
                try manager.copyItem(atPath: source, toPath: destination)
            } catch {
                throw SessionFolderError("cannot copy '\(source)' into the session: \(error.localizedDescription)")
            }
            return name
        }
        throw SessionFolderError("no free name for a copy of '\(source)' in the session")
    }
}

/// A session folder could not be created or written.
public struct SessionFolderError: Error, Sendable, Equatable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

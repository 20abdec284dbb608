// Control side. A whole patch file as a located document model (syntax and schema checked only).

/// A parsed patch: what the file says, with where it says it.
///
/// A document from ``PatchParser`` has passed syntax and schema checks only. Semantic checks
/// against the engine (unknown kinds or parameters, missing nodes or buses, cycles, missing files)
/// come later and use the locations kept here to report errors.
///
/// Equality compares locations too; use ``withoutLocations()`` on both sides to compare content.
public struct PatchDocument: Sendable, Equatable {
    /// The only format version this module reads and writes.
    public static let currentVersion = 1

    /// Format version; always ``currentVersion`` for a parsed document.
    public var version: Int
    /// The `engine` section (all fields `nil` when absent).
    public var engine: PatchEngineSettings
    /// Buffers in file order; names are unique.
    public var buffers: [PatchBuffer]
    /// Nodes in file order; names are unique.
    public var nodes: [PatchNode]
    /// Connections in file order.
    public var connections: [PatchConnection]
    /// Taps in file order (reserved).
    public var taps: [PatchTap]
    /// Recorders in file order; names are unique.
    public var recorders: [PatchRecorder]
    /// The `jack` section (empty when absent).
    public var jack: PatchJackSettings
    /// The `session` section (empty when absent).
    public var session: PatchSessionSettings
    /// The file the document was read from, as given to the parser; `nil` for text or code.
    public var path: String?

    /// Creates a document; everything defaults to empty.
    public init(
        version: Int = PatchDocument.currentVersion, engine: PatchEngineSettings = PatchEngineSettings(),
        buffers: [PatchBuffer] = [], nodes: [PatchNode] = [], connections: [PatchConnection] = [],
        taps: [PatchTap] = [], recorders: [PatchRecorder] = [], jack: PatchJackSettings = PatchJackSettings(),
        session: PatchSessionSettings = PatchSessionSettings(), path: String? = nil
    ) {
        self.session = session
        self.version = version
        self.engine = engine
        self.buffers = buffers
        self.nodes = nodes
        self.connections = connections
        self.taps = taps
        self.recorders = recorders
        self.jack = jack
        self.path = path
    }

    /// The node with this name, if the document declares it.
    public func node(named name: String) -> PatchNode? {
        nodes.first { $0.name == name }
    }

    /// The buffer with this name, if the document declares it.
    public func buffer(named name: String) -> PatchBuffer? {
        buffers.first { $0.name == name }
    }

    /// `file` resolved against the folder of ``path``: absolute paths are returned as they are,
    /// and so is everything when ``path`` is `nil`. No file system access.
    public func resolvedPath(forFile file: String) -> String {
        guard !file.hasPrefix("/"), let path, let slash = path.lastIndex(of: "/") else { return file }
        let folder = path[..<slash]
        return folder.isEmpty ? "/" + file : folder + "/" + file
    }

    /// A copy with every location removed (``path`` is kept), for comparing content only.
    public func withoutLocations() -> PatchDocument {
        PatchDocument(
            version: version, engine: engine.withoutLocations(), buffers: buffers.map { $0.withoutLocations() },
            nodes: nodes.map { $0.withoutLocations() }, connections: connections.map { $0.withoutLocations() },
            taps: taps.map { $0.withoutLocations() }, recorders: recorders.map { $0.withoutLocations() },
            jack: jack.withoutLocations(), session: session.withoutLocations(), path: path
        )
    }
}

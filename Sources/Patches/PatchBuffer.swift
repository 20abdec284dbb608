// Control side. A named audio buffer from a patch: a file region or a synthetic signal.

/// A buffer declared in a patch's `buffers` list. Nodes refer to it by `name` (for example a
/// player's `buffer` parameter).
public struct PatchBuffer: Sendable, Equatable {
    /// Where the buffer's audio comes from.
    public enum Source: Sendable, Equatable {
        /// An audio file. `path` is as written: relative to the patch file's folder, or absolute
        /// (see ``PatchDocument/resolvedPath(forFile:)``).
        case file(path: String)
        /// A synthetic signal.
        case generate(PatchGenerator)
    }

    /// Unique among buffers; the same ``PatchNameRule`` as node names.
    public var name: String
    /// The file or generator.
    public var source: Source
    /// First frame to use from the file, ≥ 0 (`nil`: from the start). Only for `.file` sources.
    public var start: Int?
    /// Number of frames to use, > 0 (`nil`: to the end). Only for `.file` sources.
    public var frames: Int?
    /// Where the buffer's mapping starts; `nil` for a buffer built in code.
    public var location: SourceLocation?
    /// Where the value of `name` starts.
    public var nameLocation: SourceLocation?
    /// Where the value of `file` or `generate` starts.
    public var sourceLocation: SourceLocation?
    /// Where each written value starts, keyed by its YAML key (`name`, `file`, `start`, `frames`, …).
    public var fieldLocations: [String: SourceLocation]

    /// Creates a buffer; locations default to `nil` (built in code, not read from a file).
    public init(
        name: String, source: Source, start: Int? = nil, frames: Int? = nil,
        location: SourceLocation? = nil, nameLocation: SourceLocation? = nil,
        sourceLocation: SourceLocation? = nil, fieldLocations: [String: SourceLocation] = [:]
    ) {
        self.name = name
        self.source = source
        self.start = start
        self.frames = frames
        self.location = location
        self.nameLocation = nameLocation
        self.sourceLocation = sourceLocation
        self.fieldLocations = fieldLocations
    }

    /// A copy with every location removed, for comparisons that ignore where things were written.
    public func withoutLocations() -> PatchBuffer {
        let bareSource: Source =
            switch source {
            case .file(let path): .file(path: path)
            case .generate(let generator): .generate(generator.withoutLocations())
            }
        return PatchBuffer(name: name, source: bareSource, start: start, frames: frames)
    }
}

// Control side. A recorder declared in a patch (`recorders:`): which node to record, to which file, and
// whether the take starts when the patch runs.

/// A recording of one node's output to a file (AVAudioRecorder), started by the embedding layer.
public struct PatchRecorder: Sendable, Equatable {
    /// Unique among the patch's recorders (same rules as node names).
    public var name: String
    /// The node whose output is recorded.
    public var node: String
    /// The file, relative to the patch's folder unless absolute; the format follows its extension
    /// unless `format` is given.
    public var path: String
    /// `wav`, `aiff`, `caf`, `flac`, `ogg`, `opus`, `mp3`, `m4a` or `aac` (nil: from the extension).
    public var format: String?
    /// `int16`, `int24` or `float32` for PCM files (nil: the format's default).
    public var encoding: String?
    /// Seconds to record, then stop by itself (nil: until the program stops).
    public var duration: Double?
    /// Start recording when the patch runs (default true); false only prepares the recorder.
    public var record: Bool
    public var location: SourceLocation?
    public var nodeLocation: SourceLocation?
    public var pathLocation: SourceLocation?
    public var formatLocation: SourceLocation?
    public var encodingLocation: SourceLocation?

    public init(
        name: String, node: String, path: String, format: String? = nil, encoding: String? = nil,
        duration: Double? = nil, record: Bool = true, location: SourceLocation? = nil,
        nodeLocation: SourceLocation? = nil, pathLocation: SourceLocation? = nil,
        formatLocation: SourceLocation? = nil, encodingLocation: SourceLocation? = nil
    ) {
        self.name = name
        self.node = node
        self.path = path
        self.format = format
        self.encoding = encoding
        self.duration = duration
        self.record = record
        self.location = location
        self.nodeLocation = nodeLocation
        self.pathLocation = pathLocation
        self.formatLocation = formatLocation
        self.encodingLocation = encodingLocation
    }

    /// A copy with every location set to `nil`.
    public func withoutLocations() -> PatchRecorder {
        PatchRecorder(
            name: name, node: node, path: path, format: format, encoding: encoding, duration: duration,
            record: record)
    }
}

// Control side (HostInsert, HostInsertLayout) and render side (HostInsertIO, InsertSlot). Effect nodes
// exposed to the host as ports of their own, so other programs can route audio through them.

/// One node exposed as host ports. An effect has `<node>_in_N` / `<node>_out_N` (N = 1…channelCount):
/// what arrives on the input ports is added to the effect's input, and its output also goes to the output
/// ports. A voice processor has `<node>_mic_N` and `<node>_ref_N` in, `<node>_out_N` out.
public struct HostInsert: Sendable, Equatable {
    /// Which ports a node has.
    public enum Ports: Sendable, Equatable {
        /// `in_N` and `out_N`, one pair per channel.
        case effect
        /// `mic_1…M` and `ref_1…R` in (insert channels base…base+M−1, then the next R), `out_1…M` out
        /// (the first M channels).
        case voice(micChannels: Int, referenceChannels: Int)
    }

    /// The node's name (the port name prefix).
    public var node: String
    /// Insert channels the node takes: its input ports.
    public var channelCount: Int
    public var ports: Ports
    /// The node's first channel in the host's insert channel space (`0 ..< channelCapacity`).
    public var base: Int
    /// Frames by which the output lags the input (reported through JACK's latency API).
    public var latencyFrames: Int

    /// The short names of the input ports (by insert channel from `base`) and of the output ports (from
    /// `base` too), without the client's name.
    public var portNames: (inputs: [String], outputs: [String]) {
        switch ports {
        case .effect:
            return (
                (1...max(1, channelCount)).map { "\(node)_in_\($0)" },
                (1...max(1, channelCount)).map { "\(node)_out_\($0)" }
            )
        case .voice(let mic, let reference):
            return (
                (1...mic).map { "\(node)_mic_\($0)" } + (1...reference).map { "\(node)_ref_\($0)" },
                (1...mic).map { "\(node)_out_\($0)" }
            )
        }
    }

    /// Insert channels an engine can expose in all.
    public static let channelCapacity = 256

    public init(node: String, channelCount: Int, base: Int, latencyFrames: Int, ports: Ports = .effect) {
        self.node = node
        self.channelCount = channelCount
        self.ports = ports
        self.base = base
        self.latencyFrames = latencyFrames
    }
}

/// Every exposed insert, with a version that grows with each change, so a host applying layouts from
/// several threads can ignore an older one that arrives late.
public struct HostInsertLayout: Sendable, Equatable {
    public var version: Int
    /// Sorted by `base`.
    public var inserts: [HostInsert]

    public init(version: Int, inserts: [HostInsert]) {
        self.version = version
        self.inserts = inserts
    }

    /// One past the highest channel in use (the size a host's per-channel tables need).
    public var channelSpan: Int { inserts.map { $0.base + $0.channelCount }.max() ?? 0 }
}

/// Render side. The host's insert buffers for one period, indexed by insert channel: `inputs[i]` and
/// `outputs[i]` hold at least the period's frames, or are nil (no port there).
public struct HostInsertIO: BitwiseCopyable {
    public var inputs: UnsafePointer<UnsafePointer<Float>?>?
    public var outputs: UnsafePointer<UnsafeMutablePointer<Float>?>?
    public var channelCount: Int

    @inlinable
    public init(
        inputs: UnsafePointer<UnsafePointer<Float>?>?, outputs: UnsafePointer<UnsafeMutablePointer<Float>?>?,
        channelCount: Int
    ) {
        self.inputs = inputs
        self.outputs = outputs
        self.channelCount = channelCount
    }

    /// No inserts (offline rendering, hosts without them).
    @inlinable
    public static var none: HostInsertIO { HostInsertIO(inputs: nil, outputs: nil, channelCount: 0) }
}

/// Render side. Where an effect step meets the host's insert channels; `base < 0` when not exposed.
public struct InsertSlot: BitwiseCopyable {
    public var base: Int
    public var channelCount: Int

    @inlinable
    public init(base: Int, channelCount: Int) {
        self.base = base
        self.channelCount = channelCount
    }

    @inlinable
    public static var none: InsertSlot { InsertSlot(base: -1, channelCount: 0) }
}

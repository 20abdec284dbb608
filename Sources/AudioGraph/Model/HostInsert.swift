// Control side (HostInsert, HostInsertLayout) and render side (HostInsertIO, InsertSlot). Effect nodes
// exposed to the host as ports of their own, so other programs can route audio through them.

/// One effect node exposed as host ports `<node>_in_N` / `<node>_out_N` (N = 1…channelCount). What
/// arrives on the input ports is added to the effect's input; its output also goes to the output ports.
public struct HostInsert: Sendable, Equatable {
    /// The effect node's name (the port name prefix).
    public var node: String
    public var channelCount: Int
    /// The node's first channel in the host's insert channel space (`0 ..< channelCapacity`).
    public var base: Int
    /// Frames by which the output lags the input (reported through JACK's latency API).
    public var latencyFrames: Int

    /// Insert channels an engine can expose in all.
    public static let channelCapacity = 256

    public init(node: String, channelCount: Int, base: Int, latencyFrames: Int) {
        self.node = node
        self.channelCount = channelCount
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

// Control side. A node's bus, as written "node" or "node:bus" in patches and OSC.

/// One bus of one node. `bus == nil` means "the default": bus 0, or a mixer's next free input.
public struct BusPoint: Sendable, Hashable, CustomStringConvertible {
    public var node: String
    public var bus: Int?

    public init(node: String, bus: Int? = nil) {
        self.node = node
        self.bus = bus
    }

    /// Parses "node" or "node:bus" (bus a non-negative integer).
    public init(parsing text: String) throws(EngineError) {
        let parts = text.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
        guard let first = parts.first, !first.isEmpty else {
            throw EngineError(.invalidBus, "'\(text)' is not a bus: write \"node\" or \"node:bus\"")
        }
        node = String(first)
        if parts.count == 2 {
            guard let bus = Int(parts[1]), bus >= 0 else {
                throw EngineError(.invalidBus, "'\(text)': bus must be a whole number ≥ 0")
            }
            self.bus = bus
        } else {
            bus = nil
        }
    }

    public var description: String { bus.map { "\(node):\($0)" } ?? node }
}

/// A directed edge from a node's output bus to another node's input bus.
public struct Connection: Sendable, Hashable, CustomStringConvertible {
    public var source: String
    public var sourceBus: Int
    public var destination: String
    public var destinationBus: Int

    public init(source: String, sourceBus: Int = 0, destination: String, destinationBus: Int) {
        self.source = source
        self.sourceBus = sourceBus
        self.destination = destination
        self.destinationBus = destinationBus
    }

    public var description: String { "\(source):\(sourceBus) → \(destination):\(destinationBus)" }
}

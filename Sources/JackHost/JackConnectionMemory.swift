// Control side (the host's event thread and its reconnect thread). The connections of our ports as the
// server last showed them, kept so that they can be made again after the server is lost and back.
import CJack

/// One connection, by full port names, output first.
public struct JackEdge: Sendable, Hashable, CustomStringConvertible {
    public var source: String
    public var destination: String

    public init(source: String, destination: String) {
        self.source = source
        self.destination = destination
    }

    public var description: String { "\(source) -> \(destination)" }

    /// The edge with our client's name `old` replaced by `new` on whichever end is ours.
    func renamingClient(_ old: String, to new: String) -> JackEdge {
        guard old != new else { return self }
        func rename(_ port: String) -> String {
            port.hasPrefix(old + ":") ? new + ":" + port.dropFirst(old.count + 1) : port
        }
        return JackEdge(source: rename(source), destination: rename(destination))
    }
}

/// Every connection of our ports, made by us or by anyone else (`jack_connect`, a patchbay, the peer
/// itself), as of the last graph change the server announced while it was alive; plus the connections
/// still to restore after a return, waiting for their ports. A connection that goes while the server
/// lives (asked away, or its other client quit) is forgotten, as every JACK client forgets it: a
/// recorder that connects itself again must find the port free. Only those gone in the `lossGrace`
/// seconds before a loss (jackd tearing down may disconnect before it announces the shutdown) are
/// restored with the rest.
/// Guarded by `JackHostCore.connectionMemory`.
struct JackConnectionMemory: Sendable {
    /// The connections the server showed last (replaced whole by each snapshot).
    var observed: Set<JackEdge> = []
    /// Connections to make again once both ports exist (after a server return).
    var pending: Set<JackEdge> = []
    /// Connections gone from the snapshots lately, with when (monotonic seconds): jackd, stopping, may
    /// disconnect ports before it announces the shutdown.
    var recentlyRemoved: [JackEdge: Double] = [:]

    /// Connections removed this long before a loss are restored with the others. At 1 s, a loss on a
    /// loaded machine (a sanitized run three times slower than usual) once forgot a peer's connection,
    /// most likely because more than a second passed between jackd removing the peer and announcing
    /// its shutdown. The cost: a connection a user removed in the 3 s before the server died comes back.
    static let lossGrace = 3.0

    /// The event thread's new snapshot.
    mutating func observe(_ edges: Set<JackEdge>, now: Double) {
        for edge in observed.subtracting(edges) { recentlyRemoved[edge] = now }
        recentlyRemoved = recentlyRemoved.filter { now - $0.value <= Self.lossGrace && !edges.contains($0.key) }
        observed = edges
        pending.subtract(edges)
    }

    /// We made `edges` again (after a return): they no longer wait, and they count as shown until a
    /// snapshot says otherwise. PipeWire's libjack may list a connection only some time after
    /// `jack_connect` returned, and a snapshot taken before that (or none at all before the next loss)
    /// must not lose it.
    mutating func made(_ edges: Set<JackEdge>) {
        pending.subtract(edges)
        observed.formUnion(edges)
    }

    /// At a loss: everything our ports had (and lost in the last `lossGrace` seconds) waits to be made again.
    mutating func serverLost(now: Double) {
        pending.formUnion(observed)
        pending.formUnion(recentlyRemoved.filter { now - $0.value <= Self.lossGrace }.keys)
        observed = []
        recentlyRemoved = [:]
        trimPending()
    }

    /// At most this many connections wait for their ports (the oldest are not kept in order; any beyond
    /// go), so a rig whose peers come and go for weeks keeps a bounded list.
    static let pendingLimit = 1024

    mutating func trimPending() {
        while pending.count > Self.pendingLimit { pending.removeFirst() }
    }

    /// The connections of `ports` (ours) on `client`, output first. Control side (jack_port_* calls
    /// allocate and read the client's graph); never inside a notification callback.
    static func snapshot(client: OpaquePointer, ports: [OpaquePointer]) -> Set<JackEdge> {
        var edges: Set<JackEdge> = []
        let output = UInt32(JackPortIsOutput.rawValue)
        for port in ports {
            guard let name = JackPorts.name(of: port) else { continue }
            let isOutput = UInt32(bitPattern: jack_port_flags(port)) & output != 0
            for other in JackPorts.connections(client: client, port: name) {
                edges.insert(
                    isOutput
                        ? JackEdge(source: name, destination: other) : JackEdge(source: other, destination: name))
            }
        }
        return edges
    }
}

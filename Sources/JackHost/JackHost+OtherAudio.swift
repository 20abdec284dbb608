// Control side (the port lock held; the event thread follows the graph) and one read per cycle in the
// process callback. Listening to the other audio the JACK way: an input port of ours, `other_audio`,
// connected to every other client's output that feeds a physical playback port. The process callback
// only keeps the port's peak; nothing it hears reaches the graph or our outputs, so it cannot feed back.
import CJack
import Glibc

extension JackHost {
    /// The monitor port's short name.
    public static let otherAudioPortName = "other_audio"

    /// Control side; blocks for the IPC with jackd. Registers (or unregisters) `other_audio` and keeps
    /// it connected to the other clients' outputs that reach physical playback ports. Kept for later
    /// starts. Returns a problem, or nil.
    @discardableResult
    public func setOtherAudioMonitoring(_ on: Bool) -> String? {
        core.portWork.withLock { _ -> String? in
            let client: OpaquePointer? = core.state.withLock { state in
                state.monitorsOtherAudio = on
                guard let session = state.session, !session.isServerLost else { return nil }
                return session.client
            }
            guard let client else { return nil }
            if on {
                if core.monitorPort.load(ordering: .acquiring) != nil { return nil }
                guard let port = registerMonitorPort(client: client) else {
                    return "JACK refused the port '\(Self.otherAudioPortName)'"
                }
                _ = port
                core.followOtherAudio(client: client)
            } else {
                unregisterMonitorPort(client: client)
            }
            return nil
        }
    }

    /// Whether `other_audio` is registered.
    public var monitorsOtherAudio: Bool { core.monitorPort.load(ordering: .acquiring) != nil }

    /// Any thread. The largest absolute sample `other_audio` heard since the last call (0 when not
    /// monitoring).
    public func takeOtherAudioPeak() -> Float {
        // Relaxed: a statistic; the exchange makes each peak counted once.
        Float(bitPattern: core.otherAudioPeakBits.exchange(0, ordering: .relaxed))
    }

    /// Port lock held. Registers the port and publishes it to the process callback (release).
    func registerMonitorPort(client: OpaquePointer) -> OpaquePointer? {
        guard
            let (port, _) = JackPorts.register(
                client: client, shortName: Self.otherAudioPortName, flags: UInt(JackPortIsInput.rawValue))
        else { return nil }
        core.monitorPort.store(UnsafeMutableRawPointer(port), ordering: .releasing)
        return port
    }

    /// Port lock held. Withdraws the port from the process callback, waits until no cycle can hold it,
    /// then unregisters it.
    private func unregisterMonitorPort(client: OpaquePointer) {
        guard let raw = core.monitorPort.exchange(nil, ordering: .acquiringAndReleasing) else { return }
        // Withdrawn from the callback above; out of its connections here (`releaseConnections`), which
        // waits the cycles out for both.
        core.releaseConnections(of: [OpaquePointer(raw)], client: client, isActive: true)
        _ = JackRequests.serialized { jack_port_unregister(client, OpaquePointer(raw)) }
        core.otherAudioPeakBits.store(0, ordering: .relaxed)
    }
}

extension JackHostCore {
    /// Port lock held (the event thread after a graph change, or `setOtherAudioMonitoring`). Connects
    /// `other_audio` to every output of another client that feeds a physical playback port, and
    /// disconnects those that no longer do. A client our own ports feed is left out, so no cycle is made
    /// in JACK's graph.
    func followOtherAudio(client: OpaquePointer) {
        guard let raw = monitorPort.load(ordering: .acquiring), let monitor = JackPorts.name(of: OpaquePointer(raw)),
            let clientName = jack_get_client_name(client)
        else { return }
        let ours = String(cString: clientName) + ":"
        var fedByUs: Set<String> = []
        let outputs = JackPorts.ports(
            client: client, pattern: "^" + JackPortPattern.escape(ours), type: nil,
            flags: UInt(JackPortIsOutput.rawValue))
        for output in outputs {
            for other in JackPorts.connections(client: client, port: output) {
                fedByUs.insert(String(other.prefix { $0 != ":" }))
            }
        }
        var wanted: Set<String> = []
        for sink in JackPorts.physicalPorts(client: client, direction: .playback) {
            for source in JackPorts.connections(client: client, port: sink) where !source.hasPrefix(ours) {
                if !fedByUs.contains(String(source.prefix { $0 != ":" })) { wanted.insert(source) }
            }
        }
        let current = Set(JackPorts.connections(client: client, port: monitor))
        for source in wanted.subtracting(current).sorted() { _ = JackPorts.connect(client: client, source, monitor) }
        for source in current.subtracting(wanted).sorted() { _ = JackPorts.disconnect(client: client, source, monitor) }
    }
}

/// Escapes a client name for the regular expression `jack_get_ports` takes.
enum JackPortPattern {
    static func escape(_ text: String) -> String {
        var out = ""
        for c in text {
            if "\\^$.|?*+()[]{}".contains(c) { out.append("\\") }
            out.append(c)
        }
        return out
    }
}

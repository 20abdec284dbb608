// Control side (the port lock held) and the process callback's one atomic read. Which of the main port
// sets exist: the audio session's category decides (record: inputs only; the playback categories:
// outputs only; playAndRecord and multiRoute: both). A set switched off is unregistered, its
// connections kept aside; switched on again it is registered and they are made again.
import CJack
import Glibc

/// The main port sets that exist (`out_N`, `in_N`).
public struct JackMainPorts: Sendable, Equatable {
    public var outputs: Bool
    public var inputs: Bool

    public init(outputs: Bool, inputs: Bool) {
        self.outputs = outputs
        self.inputs = inputs
    }

    /// The process callback's view: bit 0 outputs, bit 1 inputs.
    var bits: UInt8 { (outputs ? 1 : 0) | (inputs ? 2 : 0) }

    init(bits: UInt8) {
        outputs = bits & 1 != 0
        inputs = bits & 2 != 0
    }
}

extension JackHost {
    /// The main port sets in force (or to be registered at the next start).
    public var mainPorts: JackMainPorts { JackMainPorts(bits: core.mainPortBits.load(ordering: .acquiring)) }

    /// Control side; blocks for the IPC with jackd. Registers or unregisters the main outputs and
    /// inputs so that those of `wanted` exist. A set unregistered keeps its connections aside and gets
    /// them back when registered again; a set registered for the first time gets the configured
    /// connections. Without a running client, only what the next start registers changes. Returns
    /// problems (a port JACK refused), empty when none.
    @discardableResult
    public func setMainPorts(_ wanted: JackMainPorts) -> [String] {
        core.portWork.withLock { _ -> [String] in
            let current = JackMainPorts(bits: core.mainPortBits.load(ordering: .acquiring))
            guard wanted != current else { return [] }
            let target = liveSession()
            guard let (client, context, session) = target else {
                // Release: read by the next open.
                core.mainPortBits.store(wanted.bits, ordering: .releasing)
                return []
            }
            var problems: [String] = []
            var bits = current.bits
            for (isOutput, on) in [(true, wanted.outputs), (false, wanted.inputs)] {
                let bit: UInt8 = isOutput ? 1 : 2
                if on == (bits & bit != 0) { continue }
                if on {
                    problems += registerMain(isOutput: isOutput, client: client, context: context)
                    bits |= bit
                    // Release: the slots are written before the process callback can read them.
                    core.mainPortBits.store(bits, ordering: .releasing)
                    restoreMain(isOutput: isOutput, client: client, session: session)
                } else {
                    bits &= ~bit
                    core.mainPortBits.store(bits, ordering: .releasing)
                    unregisterMain(isOutput: isOutput, client: client, context: context)
                }
            }
            updateMainPortViews(context: context)
            _ = JackRequests.serialized { jack_recompute_total_latencies(client) }
            // The change is the category's, announced by whoever asked for it, not a device arriving or going.
            takeRouteSilently(client: client, context: context)
            return problems
        }
    }

    /// Port lock held. The open client, its render context and session; nil when stopped or lost.
    func liveSession() -> (OpaquePointer, UnsafeMutablePointer<JackRenderContext>, JackSession)? {
        core.state.withLock { state in
            guard let session = state.session, let client = session.client, let context = session.context,
                !session.isServerLost
            else { return nil }
            return (client, context, session)
        }
    }

    /// Port lock held. The route watch takes the graph as it is now, so the event thread, seeing the same,
    /// announces no route change for what the caller did (the caller announces it itself).
    func takeRouteSilently(client: OpaquePointer, context: UnsafeMutablePointer<JackRenderContext>) {
        let view = core.state.withLock { state -> ([OpaquePointer], Set<String>, Set<String>)? in
            guard let session = state.session else { return nil }
            return (
                core.ownPorts(context: context, session: session), Set(session.outputPortNames),
                Set(session.inputPortNames)
            )
        }
        guard let (ports, outputs, inputs) = view else { return }
        let edges = JackConnectionMemory.snapshot(client: client, ports: ports)
        core.route.withLock { _ = $0.observe(edges: edges, mainOutputs: outputs, mainInputs: inputs) }
    }

    /// Registers `out_N` (or `in_N`) into the context's empty slots; the process callback does not read
    /// them until the bit is set.
    private func registerMain(isOutput: Bool, client: OpaquePointer, context: UnsafeMutablePointer<JackRenderContext>)
        -> [String]
    {
        let count = isOutput ? context.pointee.outputCount : context.pointee.inputCount
        let flags = UInt(isOutput ? JackPortIsOutput.rawValue : JackPortIsInput.rawValue)
        var problems: [String] = []
        for i in 0..<count {
            let short = (isOutput ? "out_" : "in_") + String(i + 1)
            guard let (port, _) = JackPorts.register(client: client, shortName: short, flags: flags) else {
                problems.append("JACK refused the port '\(short)'")
                continue
            }
            core.state.withLock { _ in
                if isOutput { context.pointee.outputPorts[i] = port } else { context.pointee.inputPorts[i] = port }
            }
        }
        return problems
    }

    /// Keeps the set's connections aside, waits until no cycle can still hold its ports, then
    /// unregisters them.
    private func unregisterMain(
        isOutput: Bool, client: OpaquePointer, context: UnsafeMutablePointer<JackRenderContext>
    ) {
        let count = isOutput ? context.pointee.outputCount : context.pointee.inputCount
        let slots = isOutput ? context.pointee.outputPorts : context.pointee.inputPorts
        let ports = (0..<count).compactMap { slots[$0] }
        let edges = JackConnectionMemory.snapshot(client: client, ports: ports)
        core.state.withLock { state in
            if isOutput { state.parkedOutputEdges = edges } else { state.parkedInputEdges = edges }
        }
        // A cycle that read the old bits counts itself after using the ports; two counts later none is
        // left. Out of their connections too (`releaseConnections`: three counts).
        core.releaseConnections(of: ports, client: client, isActive: true)
        for i in 0..<count {
            guard let port = slots[i] else { continue }
            core.state.withLock { _ in slots[i] = nil }
            _ = JackRequests.serialized { jack_port_unregister(client, port) }
        }
    }

    /// The connections the set had when it went, or the configured ones when it never existed.
    private func restoreMain(isOutput: Bool, client: OpaquePointer, session: JackSession) {
        let parked: Set<JackEdge> = core.state.withLock { state in
            defer { if isOutput { state.parkedOutputEdges = [] } else { state.parkedInputEdges = [] } }
            return isOutput ? state.parkedOutputEdges : state.parkedInputEdges
        }
        if parked.isEmpty {
            var refreshed = session
            refreshed.outputPortNames = portNames(isOutput: true, context: session.context)
            refreshed.inputPortNames = portNames(isOutput: false, context: session.context)
            _ = makeConnections(client: client, session: refreshed)
        } else {
            _ = Self.makePending(parked, client: client, clientName: session.actualClientName)
        }
    }

    private func portNames(isOutput: Bool, context: UnsafeMutablePointer<JackRenderContext>?) -> [String] {
        guard let context else { return [] }
        let count = isOutput ? context.pointee.outputCount : context.pointee.inputCount
        let slots = isOutput ? context.pointee.outputPorts : context.pointee.inputPorts
        return (0..<count).compactMap { slots[$0] }.compactMap { JackPorts.name(of: $0) }
    }

    /// The session's port names and the latency callback's table after a change.
    private func updateMainPortViews(context: UnsafeMutablePointer<JackRenderContext>) {
        let outputs = portNames(isOutput: true, context: context)
        let inputs = portNames(isOutput: false, context: context)
        core.state.withLock { state in
            state.session?.outputPortNames = outputs
            state.session?.inputPortNames = inputs
        }
        core.latency.modify { ports in
            ports.mainOutputs = (0..<context.pointee.outputCount).compactMap { context.pointee.outputPorts[$0] }
            ports.mainInputs = (0..<context.pointee.inputCount).compactMap { context.pointee.inputPorts[$0] }
        }
    }
}

extension JackHost {
    /// Control side; blocks for the IPC with jackd. The audio session's output override (iOS's
    /// `overrideOutputAudioPort`): with `destinations`, the main outputs play to those ports only
    /// (`out_i` → the i-th; a single output feeds them all), and what they were connected to is kept;
    /// with nil, those connections come back. Checked before anything changes: a port that does not
    /// exist is a problem and nothing moves. The route is updated without a route-change event; the
    /// session announces `override`. Returns the problems (empty when it worked).
    public func overrideMainOutputs(_ destinations: [String]?) -> [String] {
        core.portWork.withLock { _ -> [String] in
            let target = liveSession()
            guard let (client, context, session) = target else { return ["the JACK client is not running"] }
            let outputs = session.outputPortNames
            guard !outputs.isEmpty else { return ["this session has no outputs (its category has none)"] }
            let handles = (0..<context.pointee.outputCount).compactMap { context.pointee.outputPorts[$0] }
            let now = JackConnectionMemory.snapshot(client: client, ports: handles)
            var wanted: Set<JackEdge>
            if let destinations {
                let missing = destinations.filter { jack_port_by_name(client, $0) == nil }
                if !missing.isEmpty {
                    return missing.map { "no port named '\($0)' (jack_lsp lists the ports)" }
                }
                let pairs: [(String, String)] =
                    outputs.count == 1
                    ? destinations.map { (outputs[0], $0) } : zip(outputs, destinations).map { ($0, $1) }
                wanted = Set(pairs.map { JackEdge(source: $0.0, destination: $0.1) })
                core.state.withLock { state in
                    if state.overriddenOutputEdges == nil { state.overriddenOutputEdges = now }
                }
            } else {
                guard
                    let saved = core.state.withLock({ state -> Set<JackEdge>? in
                        defer { state.overriddenOutputEdges = nil }
                        return state.overriddenOutputEdges
                    })
                else { return [] }
                wanted = saved
            }
            // New ones first, so the outputs never play nowhere in between.
            var problems: [String] = []
            for edge in wanted.subtracting(now).sorted(by: { $0.description < $1.description }) {
                let result = JackPorts.connect(client: client, edge.source, edge.destination)
                if case .failed(let why) = result.outcome { problems.append("\(edge): \(why)") }
            }
            for edge in now.subtracting(wanted).sorted(by: { $0.description < $1.description }) {
                _ = JackPorts.disconnect(client: client, edge.source, edge.destination)
            }
            takeRouteSilently(client: client, context: context)
            return problems
        }
    }

    /// Whether the outputs are overridden (`overrideMainOutputs`).
    public var outputsAreOverridden: Bool { core.state.withLock { $0.overriddenOutputEdges != nil } }
}

// Control side (registration, publication, reclamation) and render side (the table the process
// callback reads). Effect nodes exposed as JACK ports `<node>_in_N` / `<node>_out_N`, voice processors as
// `<node>_mic_N`, `<node>_ref_N` and `<node>_out_N`.
import AudioGraph
import CJack
import Glibc
import Locking
import Synchronization

/// The insert ports by insert channel, plus the per-period buffer tables the process callback fills.
/// Published whole through `JackHostCore.insertTable`; never changed once published; freed on the
/// control side once the process thread has provably moved to a newer one.
struct JackInsertTable {
    let channelSpan: Int
    let inputPorts: UnsafeMutablePointer<OpaquePointer?>
    let outputPorts: UnsafeMutablePointer<OpaquePointer?>
    let inputBuffers: UnsafeMutablePointer<UnsafePointer<Float>?>
    let outputBuffers: UnsafeMutablePointer<UnsafeMutablePointer<Float>?>

    /// Control side. A table for `ports`.
    static func make(_ ports: [String: JackInsertPorts]) -> UnsafeMutablePointer<JackInsertTable> {
        let span = ports.values.map { $0.base + max($0.inputs.count, $0.outputs.count) }.max() ?? 0
        let capacity = max(1, span)
        let inputPorts = UnsafeMutablePointer<OpaquePointer?>.allocate(capacity: capacity)
        inputPorts.initialize(repeating: nil, count: capacity)
        let outputPorts = UnsafeMutablePointer<OpaquePointer?>.allocate(capacity: capacity)
        outputPorts.initialize(repeating: nil, count: capacity)
        let inputBuffers = UnsafeMutablePointer<UnsafePointer<Float>?>.allocate(capacity: capacity)
        inputBuffers.initialize(repeating: nil, count: capacity)
        let outputBuffers = UnsafeMutablePointer<UnsafeMutablePointer<Float>?>.allocate(capacity: capacity)
        outputBuffers.initialize(repeating: nil, count: capacity)
        for insert in ports.values {
            for c in 0..<insert.inputs.count { inputPorts[insert.base + c] = insert.inputs[c] }
            for c in 0..<insert.outputs.count { outputPorts[insert.base + c] = insert.outputs[c] }
        }
        let table = UnsafeMutablePointer<JackInsertTable>.allocate(capacity: 1)
        table.initialize(
            to: JackInsertTable(
                channelSpan: span, inputPorts: inputPorts, outputPorts: outputPorts,
                inputBuffers: inputBuffers, outputBuffers: outputBuffers))
        return table
    }

    /// Control side. Frees a table no thread reads any more.
    static func destroy(_ table: UnsafeMutablePointer<JackInsertTable>) {
        table.pointee.inputPorts.deallocate()
        table.pointee.outputPorts.deallocate()
        table.pointee.inputBuffers.deallocate()
        table.pointee.outputBuffers.deallocate()
        table.deinitialize(count: 1)
        table.deallocate()
    }

    /// RT thread. Fills the buffer tables for this period and clears the output ports (an insert the
    /// current program does not render stays silent rather than repeating old samples).
    func prepare(frames: jack_nframes_t) -> HostInsertIO {
        for i in 0..<channelSpan {
            if let port = inputPorts[i] {
                inputBuffers[i] = UnsafePointer(jack_port_get_buffer(port, frames)?.assumingMemoryBound(to: Float.self))
            } else {
                inputBuffers[i] = nil
            }
            if let port = outputPorts[i],
                let buffer = jack_port_get_buffer(port, frames)?.assumingMemoryBound(to: Float.self)
            {
                buffer.update(repeating: 0, count: Int(frames))
                outputBuffers[i] = buffer
            } else {
                outputBuffers[i] = nil
            }
        }
        return HostInsertIO(
            inputs: UnsafePointer(inputBuffers), outputs: UnsafePointer(outputBuffers),
            channelCount: channelSpan)
    }
}

/// One exposed effect's registered ports.
struct JackInsertPorts: @unchecked Sendable {
    // @unchecked: libjack port handles; jackd allows their use from the process and notification threads.
    var base: Int
    var latencyFrames: Int
    var inputs: [OpaquePointer]
    var outputs: [OpaquePointer]
    var inputNames: [String]
    var outputNames: [String]
}

extension JackHost {
    /// Control side. Makes the client's insert ports match `layout` (from `Engine.hostInsertLayout` or
    /// its observer) before returning: registers `<node>_in_N` / `<node>_out_N` for new inserts,
    /// unregisters those gone, and reports the latencies. A layout older than one already applied is
    /// ignored. Kept for later starts when the host is not running. Returns problems (a port JACK
    /// refused), empty when none. Blocks for the IPC with jackd, which can take many periods while the
    /// server reorders its graph: a thread that must stay responsive calls `requestInserts` instead.
    @discardableResult
    public func setInserts(_ layout: HostInsertLayout) -> [String] {
        let problems = applyLayout(layout)
        core.insertRequests.withLock { $0.applied = max($0.applied, layout.version) }
        return problems
    }

    /// Any thread; never waits for jackd. Hands `layout` to the host's port thread, which applies the
    /// newest layout requested (older ones still waiting are skipped) as `setInserts` does, and passes
    /// any problems to `onProblems` there. Calls that name our ports (`connect`, `disconnect`,
    /// `connections(of:)`, `insertPortNames`) first wait for the requests made before them.
    public func requestInserts(_ layout: HostInsertLayout, onProblems: (@Sendable ([String]) -> Void)? = nil) {
        let schedule = core.insertRequests.withLock { requests -> Bool in
            if let newest = requests.newest, newest.layout.version > layout.version { return false }
            requests.newest = (layout, onProblems.map { Callback($0) })
            requests.requested = max(requests.requested, layout.version)
            defer { requests.isDraining = true }
            return !requests.isDraining
        }
        guard schedule else { return }
        core.portQueue.async { [self] in drainInsertRequests() }
    }

    /// Port thread. Applies the newest waiting request until none waits.
    private func drainInsertRequests() {
        while true {
            let next = core.insertRequests.withLock { requests in
                defer { requests.newest = nil }
                if requests.newest == nil { requests.isDraining = false }
                return requests.newest
            }
            guard let (layout, onProblems) = next else { return }
            let problems = applyLayout(layout)
            core.insertRequests.withLock { requests in
                requests.applied = max(requests.applied, layout.version)
                requests.drainedCount += 1
            }
            if !problems.isEmpty { onProblems?.call(problems) }
        }
    }

    /// Any thread but the port thread. Returns once the insert requests made before the call are
    /// applied (at once when none waits).
    func awaitInsertRequests() {
        let pending = core.insertRequests.withLock { $0.requested > $0.applied || $0.isDraining }
        if pending { core.portQueue.sync {} }
    }

    /// Applies `layout` with the port lock held (so the client stays open) but not the state lock, so
    /// status reads and other requests never wait for the port work's IPC.
    private func applyLayout(_ layout: HostInsertLayout) -> [String] {
        core.portWork.withLock { _ in
            let target: (client: OpaquePointer, ports: [String: JackInsertPorts])? = core.state.withLock { state in
                if let current = state.insertLayout, current.version > layout.version { return nil }
                state.insertLayout = layout
                guard let session = state.session, let client = session.client else { return nil }
                return (client, session.insertPorts)
            }
            guard let target else { return [] }
            var ports = target.ports
            let problems = applyInserts(layout, client: target.client, ports: &ports, isActive: true)
            core.state.withLock { state in
                if state.session?.client == target.client { state.session?.insertPorts = ports }
            }
            return problems
        }
    }

    /// Full names of the exposed insert ports (inputs and outputs per node), empty when not running.
    public var insertPortNames: [String: (inputs: [String], outputs: [String])] {
        awaitInsertRequests()
        return core.state.withLock { state in
            var names: [String: (inputs: [String], outputs: [String])] = [:]
            for (node, ports) in state.session?.insertPorts ?? [:] {
                names[node] = (ports.inputNames, ports.outputNames)
            }
            return names
        }
    }

    /// Control side, port lock held (and the state lock too before activation). Registers and
    /// unregisters ports, publishes a new table, and frees the old one once the process thread has moved
    /// past it (`isActive`: cycles are running).
    func applyInserts(
        _ layout: HostInsertLayout, client: OpaquePointer, ports: inout [String: JackInsertPorts],
        isActive: Bool
    ) -> [String] {
        var problems: [String] = []
        var next: [String: JackInsertPorts] = [:]
        var removed: [JackInsertPorts] = []
        let wanted = Dictionary(layout.inserts.map { ($0.node, $0) }, uniquingKeysWith: { a, _ in a })
        for (node, existing) in ports {
            if let insert = wanted[node], insert.base == existing.base, insert.channelCount == existing.inputs.count {
                var kept = existing
                kept.latencyFrames = insert.latencyFrames
                next[node] = kept
            } else {
                removed.append(existing)
            }
        }
        // Removed (or changed) inserts leave the table before their ports go; a changed one is then
        // registered again under the same names.
        if !removed.isEmpty {
            // Their ports are unregistered next, so no cycle may still hold the table naming them, nor a
            // connection to them (`releaseConnections`).
            publish(next, client: client, isActive: isActive, waitsForCycles: true)
            core.releaseConnections(
                of: removed.flatMap { $0.inputs + $0.outputs }, client: client, isActive: isActive)
            for old in removed { unregister(old, client: client) }
        }
        for insert in layout.inserts where next[insert.node] == nil {
            switch register(insert, client: client) {
            case .success(let registered): next[insert.node] = registered
            case .failure(let problem): problems.append(problem.message)
            }
        }
        publish(next, client: client, isActive: isActive, waitsForCycles: false)
        ports = next
        if isActive { _ = JackRequests.serialized { jack_recompute_total_latencies(client) } }
        return problems
    }

    private struct Problem: Error { let message: String }

    private func register(_ insert: HostInsert, client: OpaquePointer) -> Result<JackInsertPorts, Problem> {
        var ports = JackInsertPorts(
            base: insert.base, latencyFrames: insert.latencyFrames, inputs: [], outputs: [],
            inputNames: [], outputNames: [])
        let names = insert.portNames
        for (isInput, short) in names.inputs.map({ (true, $0) }) + names.outputs.map({ (false, $0) }) {
            let flags = UInt(isInput ? JackPortIsInput.rawValue : JackPortIsOutput.rawValue)
            guard let (port, name) = JackPorts.register(client: client, shortName: short, flags: flags) else {
                unregister(ports, client: client)
                return .failure(Problem(message: "JACK refused the port '\(short)' for insert '\(insert.node)'"))
            }
            if isInput {
                ports.inputs.append(port)
                ports.inputNames.append(name)
            } else {
                ports.outputs.append(port)
                ports.outputNames.append(name)
            }
        }
        return .success(ports)
    }

    private func unregister(_ ports: JackInsertPorts, client: OpaquePointer) {
        for port in ports.inputs + ports.outputs { _ = JackRequests.serialized { jack_port_unregister(client, port) } }
    }

    /// Publishes a table for `ports` to the process callback and the latency callback. The previous
    /// table is freed once two more cycles have started (the callback loads the table after counting the
    /// cycle, so by then no cycle can still hold it): `waitsForCycles` waits for that here (the caller
    /// unregisters ports the old table names next); otherwise the old table joins the retired ones,
    /// freed by a later publish or when the client closes, and nothing waits. If cycles stall (a frozen
    /// server) for half a second while waiting, the old table is leaked rather than freed under a
    /// possible reader.
    private func publish(
        _ ports: [String: JackInsertPorts], client: OpaquePointer, isActive: Bool, waitsForCycles: Bool
    ) {
        let table = ports.isEmpty ? nil : JackInsertTable.make(ports)
        core.latency.modify { $0.inserts = Array(ports.values) }
        // Release: the table is fully written before the process thread can acquire it.
        let old = core.insertTable.exchange(table.map { UnsafeMutableRawPointer($0) }, ordering: .acquiringAndReleasing)
        core.freeRetiredInsertTables()
        guard let old else { return }
        if isActive && !waitsForCycles {
            core.retireInsertTable(old)
            return
        }
        if isActive && !core.waitForCycles(2) { return }
        JackInsertTable.destroy(old.assumingMemoryBound(to: JackInsertTable.self))
    }
}

// Control side (publishing) and the libjack notification thread (the latency callback). Our ports'
// latency relations, read by the callback without a lock: libjack cancels its notification thread
// asynchronously when a client closes (jack2's threads run with PTHREAD_CANCEL_ASYNCHRONOUS), so a
// lock taken inside a callback can stay taken forever.
import CJack
import Locking
import Synchronization

/// What the latency callback needs: our ports and how they are related (control side's description).
struct JackLatencyPorts: @unchecked Sendable {
    // @unchecked: libjack port handles, read under `JackLatencyPublisher.current`.
    var mainInputs: [OpaquePointer] = []
    var mainOutputs: [OpaquePointer] = []
    var inserts: [JackInsertPorts] = []
}

/// One insert's ports as raw memory: output N follows input N.
struct JackLatencyInsert {
    let inputs: UnsafeMutablePointer<OpaquePointer>
    let outputs: UnsafeMutablePointer<OpaquePointer>
    let pairCount: Int
    let latencyFrames: UInt32
}

/// `JackLatencyPorts` as raw memory (no ARC, nothing a cancelled thread could leave half done).
/// Published whole; never changed once published.
struct JackLatencyTable {
    let mainInputs: UnsafeMutableBufferPointer<OpaquePointer>
    let mainOutputs: UnsafeMutableBufferPointer<OpaquePointer>
    let inserts: UnsafeMutableBufferPointer<JackLatencyInsert>

    /// Control side.
    static func make(_ ports: JackLatencyPorts) -> UnsafeMutablePointer<JackLatencyTable> {
        func copy(_ array: [OpaquePointer]) -> UnsafeMutableBufferPointer<OpaquePointer> {
            let buffer = UnsafeMutableBufferPointer<OpaquePointer>.allocate(capacity: array.count)
            _ = buffer.initialize(from: array)
            return buffer
        }
        let inserts = UnsafeMutableBufferPointer<JackLatencyInsert>.allocate(capacity: ports.inserts.count)
        for (i, insert) in ports.inserts.enumerated() {
            let pairs = min(insert.inputs.count, insert.outputs.count)
            let inputs = UnsafeMutablePointer<OpaquePointer>.allocate(capacity: max(1, pairs))
            let outputs = UnsafeMutablePointer<OpaquePointer>.allocate(capacity: max(1, pairs))
            for c in 0..<pairs {
                (inputs + c).initialize(to: insert.inputs[c])
                (outputs + c).initialize(to: insert.outputs[c])
            }
            (inserts.baseAddress! + i).initialize(
                to: JackLatencyInsert(
                    inputs: inputs, outputs: outputs, pairCount: pairs,
                    latencyFrames: UInt32(clamping: insert.latencyFrames)))
        }
        let table = UnsafeMutablePointer<JackLatencyTable>.allocate(capacity: 1)
        table.initialize(
            to: JackLatencyTable(
                mainInputs: copy(ports.mainInputs), mainOutputs: copy(ports.mainOutputs), inserts: inserts))
        return table
    }

    /// Control side, once no callback can read `table`.
    static func destroy(_ table: UnsafeMutablePointer<JackLatencyTable>) {
        for insert in table.pointee.inserts {
            insert.inputs.deallocate()
            insert.outputs.deallocate()
        }
        table.pointee.inserts.deallocate()
        table.pointee.mainInputs.deallocate()
        table.pointee.mainOutputs.deallocate()
        table.deinitialize(count: 1)
        table.deallocate()
    }

    /// Notification thread. Each output's latency is its input's plus the processing latency: the main
    /// outputs take the largest range of the main inputs (JACK's default rule), an insert's `out_N` takes
    /// its `in_N` plus the effect's latency; the playback direction mirrors that. Returns the main
    /// ports' combined range in `mode`'s direction (in the playback direction: how long the main
    /// outputs' audio takes to be heard).
    func update(mode: jack_latency_callback_mode_t) -> jack_latency_range_t {
        let capture = mode == JackCaptureLatency
        let sources = capture ? mainInputs : mainOutputs
        let sinks = capture ? mainOutputs : mainInputs
        var combined = jack_latency_range_t(min: 0, max: 0)
        for i in 0..<sources.count {
            var range = jack_latency_range_t()
            jack_port_get_latency_range(sources[i], mode, &range)
            combined =
                i == 0
                ? range
                : jack_latency_range_t(min: Swift.min(combined.min, range.min), max: Swift.max(combined.max, range.max))
        }
        for i in 0..<sinks.count { jack_port_set_latency_range(sinks[i], mode, &combined) }
        for insert in inserts {
            for c in 0..<insert.pairCount {
                let (from, to) = capture ? (insert.inputs[c], insert.outputs[c]) : (insert.outputs[c], insert.inputs[c])
                var range = jack_latency_range_t()
                jack_port_get_latency_range(from, mode, &range)
                range.min &+= insert.latencyFrames
                range.max &+= insert.latencyFrames
                jack_port_set_latency_range(to, mode, &range)
            }
        }
        return combined
    }
}

/// Publishes `JackLatencyTable`s to the latency callback and frees replaced ones once no callback can
/// hold them: the callback counts itself in `readers` before it loads the table (both sequentially
/// consistent), so a replaced table with no reader counted after the swap is free. One a reader may
/// hold waits for a later swap with no reader, or for the client's close.
final class JackLatencyPublisher: Sendable {
    private let current = Locked<JackLatencyPorts>(JackLatencyPorts())
    private nonisolated(unsafe) let table = Atomic<UnsafeMutableRawPointer?>(nil)
    private let readers = Atomic<Int>(0)
    private let retired = Locked<[UnsafeMutableRawPointer]>([])

    /// Control side: changes the description and publishes a new table.
    func modify(_ body: (inout JackLatencyPorts) -> Void) {
        current.withLock { ports in
            body(&ports)
            let next = UnsafeMutableRawPointer(JackLatencyTable.make(ports))
            let old = table.exchange(next, ordering: .sequentiallyConsistent)
            retired.withLock { list in
                if let old { list.append(old) }
                guard readers.load(ordering: .sequentiallyConsistent) == 0 else { return }
                for entry in list { JackLatencyTable.destroy(entry.assumingMemoryBound(to: JackLatencyTable.self)) }
                list = []
            }
        }
    }

    /// Control side, with the client closed (no callback runs): empties the description and frees every
    /// table. A reader cancelled inside the callback is forgotten.
    func reset() {
        current.withLock { ports in
            ports = JackLatencyPorts()
            let old = table.exchange(nil, ordering: .sequentiallyConsistent)
            retired.withLock { list in
                if let old { list.append(old) }
                for entry in list { JackLatencyTable.destroy(entry.assumingMemoryBound(to: JackLatencyTable.self)) }
                list = []
            }
            readers.store(0, ordering: .sequentiallyConsistent)
        }
    }

    /// Notification thread. Updates our ports' latencies from the newest table; returns the main ports'
    /// combined range (zero before any table).
    func update(mode: jack_latency_callback_mode_t) -> jack_latency_range_t {
        readers.wrappingAdd(1, ordering: .sequentiallyConsistent)
        defer { readers.wrappingSubtract(1, ordering: .sequentiallyConsistent) }
        guard let raw = table.load(ordering: .sequentiallyConsistent) else {
            return jack_latency_range_t(min: 0, max: 0)
        }
        return raw.assumingMemoryBound(to: JackLatencyTable.self).pointee.update(mode: mode)
    }
}

/// Notification thread: JACK asks for our ports' latencies (after graph or latency changes).
///
/// jackd2's libjack: set here, as jack.h asks. PipeWire's libjack (0.3.65) calls this with its loop's
/// lock released, yet a latency set on its loop thread is sent to the server at once, unlocked: it
/// races whatever request another thread makes under that lock (a connection, a property) in the one
/// message buffer they share, seen as a crash in PipeWire's protocol code while connections were
/// restored after a server return. There the callback only records the mode and wakes the event
/// thread, whose latency calls libjack queues onto its loop, where they run under the lock.
let jackLatencyCallback: JackLatencyCallback = { mode, arg in
    guard let arg else { return }
    let context = arg.assumingMemoryBound(to: JackRenderContext.self)
    let deferred = context.pointee.core._withUnsafeGuaranteedRef { core -> Bool in
        if core.defersLatency {
            // Relaxed: the pipe byte written next orders it for the event thread.
            core.latencyRequests.bitwiseOr(mode == JackCaptureLatency ? 1 : 2, ordering: .relaxed)
            return true
        }
        let combined = core.latency.update(mode: mode)
        // Relaxed: a figure read by the control loop, which follows its changes.
        if mode == JackPlaybackLatency { core.playbackLatencyValue.store(Int(combined.max), ordering: .relaxed) }
        return false
    }
    if deferred { JackRenderContext.wake(context, .latency) }
}

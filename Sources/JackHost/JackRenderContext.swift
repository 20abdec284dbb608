// Render side and libjack threads. The raw context handed to libjack as the callbacks' `void *arg`, and
// the C callbacks themselves. The process callback runs on JACK's RT thread: it touches only
// preallocated memory, atomics and jack_port_get_buffer. The notification callbacks run on libjack's
// notification thread and behave like signal handlers: they store atomics and write one byte to a
// non-blocking pipe; the host's event thread does the rest.
import AudioGraph
import CJack
import Glibc
import Synchronization

/// Everything the callbacks need, in one allocation whose address never changes while the client is
/// open. Every field is trivial (no ARC): class instances are held as `Unmanaged` and used through
/// `_withUnsafeGuaranteedRef`. Created and destroyed on the control side (`make` / `destroy`).
struct JackRenderContext {
    /// Retained by `make`, released by `destroy`.
    let engine: Unmanaged<RenderEngine>
    /// Retained by `make`, released by `destroy`.
    let core: Unmanaged<JackHostCore>
    let client: OpaquePointer
    let outputPorts: UnsafeMutablePointer<OpaquePointer?>
    let outputBuffers: UnsafeMutablePointer<UnsafeMutablePointer<Float>?>
    let outputCount: Int
    let inputPorts: UnsafeMutablePointer<OpaquePointer?>
    let inputBuffers: UnsafeMutablePointer<UnsafePointer<Float>?>
    let inputCount: Int
    /// Write end of the event pipe (non-blocking).
    let wakeFD: Int32
    /// Copy of the shutdown reason, NUL-terminated; written only by the info-shutdown callback.
    let reason: UnsafeMutablePointer<CChar>
    /// Test hook run once on the process thread (see `JackHost.setRenderThreadStartHook`).
    let startHook: (@convention(c) () -> Void)?

    static let reasonCapacity = 256
    /// The reason given when the server's libjack does not give one (jackd2's words).
    static let defaultShutdownReason = "JACK server has been closed"

    /// Control side. Allocates a context for `outputCount` / `inputCount` ports (filled in later).
    static func make(
        engine: RenderEngine, core: JackHostCore, client: OpaquePointer, outputCount: Int,
        inputCount: Int, wakeFD: Int32, startHook: (@convention(c) () -> Void)?
    )
        -> UnsafeMutablePointer<JackRenderContext>
    {
        let outputPorts = UnsafeMutablePointer<OpaquePointer?>.allocate(capacity: max(1, outputCount))
        outputPorts.initialize(repeating: nil, count: max(1, outputCount))
        let outputBuffers = UnsafeMutablePointer<UnsafeMutablePointer<Float>?>.allocate(capacity: max(1, outputCount))
        outputBuffers.initialize(repeating: nil, count: max(1, outputCount))
        let inputPorts = UnsafeMutablePointer<OpaquePointer?>.allocate(capacity: max(1, inputCount))
        inputPorts.initialize(repeating: nil, count: max(1, inputCount))
        let inputBuffers = UnsafeMutablePointer<UnsafePointer<Float>?>.allocate(capacity: max(1, inputCount))
        inputBuffers.initialize(repeating: nil, count: max(1, inputCount))
        let reason = UnsafeMutablePointer<CChar>.allocate(capacity: reasonCapacity)
        reason.initialize(repeating: 0, count: reasonCapacity)
        for (i, byte) in defaultShutdownReason.utf8.prefix(reasonCapacity - 1).enumerated() {
            reason[i] = CChar(bitPattern: byte)
        }
        let context = UnsafeMutablePointer<JackRenderContext>.allocate(capacity: 1)
        context.initialize(
            to: JackRenderContext(
                engine: .passRetained(engine), core: .passRetained(core), client: client,
                outputPorts: outputPorts, outputBuffers: outputBuffers, outputCount: outputCount,
                inputPorts: inputPorts, inputBuffers: inputBuffers, inputCount: inputCount,
                wakeFD: wakeFD, reason: reason, startHook: startHook))
        return context
    }

    /// Control side. Frees a context. The client it was given to must be closed (no callback may run).
    static func destroy(_ context: UnsafeMutablePointer<JackRenderContext>) {
        let c = context.pointee
        c.outputPorts.deallocate()
        c.outputBuffers.deallocate()
        c.inputPorts.deallocate()
        c.inputBuffers.deallocate()
        c.reason.deallocate()
        c.engine.release()
        c.core.release()
        context.deinitialize(count: 1)
        context.deallocate()
    }

    /// Any thread except the RT thread in a hot loop. Writes one byte to the event pipe; drops it if
    /// the pipe is full (the state it announces is in atomics anyway). Async-signal-safe.
    static func wake(_ context: UnsafeMutablePointer<JackRenderContext>, _ byte: JackWakeByte) {
        var value = byte.rawValue
        _ = write(context.pointee.wakeFD, &value, 1)
    }
}

/// What a byte on the event pipe announces.
enum JackWakeByte: UInt8 {
    case xrun = 1
    case bufferSize = 2
    case sampleRate = 3
    case shutdown = 4
    /// A connection of some port changed (ours are snapshotted for restoring after a server loss).
    case graph = 5
    /// A port appeared (a connection waiting for it may now be made).
    case portRegistered = 6
    /// Metadata changed on some subject, or a client came or went (other sessions' state).
    case peers = 7
    /// The latency callback asked for our ports' latencies to be set (PipeWire's libjack only).
    case latency = 8
}

// MARK: - Callbacks (non-capturing closures, so they convert to C function pointers)

/// RT thread, every period. Exactly: port buffers → render → return 0 (STYLE C3). Flush-to-zero is set
/// by `RenderEngine.render`. Not annotated `@_noLocks`: the checker rejects every call into C
/// (jack_port_get_buffer) and into non-inlinable code of other modules; the allocation-counter test
/// checks this path at runtime instead.
let jackProcessCallback: JackProcessCallback = { frames, arg in
    guard let arg else { return 0 }
    let context = arg.assumingMemoryBound(to: JackRenderContext.self)
    let outputCount = context.pointee.outputCount
    let inputCount = context.pointee.inputCount
    let outputs = context.pointee.outputBuffers
    let inputs = context.pointee.inputBuffers
    // Acquire: pairs with `setMainPorts`' release (a set's slots are written before its bit is set).
    let main = context.pointee.core._withUnsafeGuaranteedRef { $0.mainPortBits.load(ordering: .acquiring) }
    for i in 0..<outputCount {
        if main & 1 != 0, let port = context.pointee.outputPorts[i] {
            outputs[i] = jack_port_get_buffer(port, frames)?.assumingMemoryBound(to: Float.self)
        } else {
            outputs[i] = nil
        }
    }
    for i in 0..<inputCount {
        if main & 2 != 0, let port = context.pointee.inputPorts[i] {
            inputs[i] = UnsafePointer(jack_port_get_buffer(port, frames)?.assumingMemoryBound(to: Float.self))
        } else {
            inputs[i] = nil
        }
    }
    // Relaxed: paired with the releasing store at the end (the event thread waits for `false`).
    context.pointee.core._withUnsafeGuaranteedRef { $0.processRunning.store(true, ordering: .relaxed) }
    // The other-audio monitor: only its peak is kept; it never reaches the graph.
    context.pointee.core._withUnsafeGuaranteedRef { core in
        // Acquire: pairs with the registering store (the port is registered before it is published).
        guard let raw = core.monitorPort.load(ordering: .acquiring),
            let samples = jack_port_get_buffer(OpaquePointer(raw), frames)?.assumingMemoryBound(to: Float.self)
        else { return }
        var peak: Float = 0
        for i in 0..<Int(frames) { peak = max(peak, abs(samples[i])) }
        // Relaxed: a statistic; a peak lost to the control side's exchange is the next cycle's anyway.
        if peak > Float(bitPattern: core.otherAudioPeakBits.load(ordering: .relaxed)) {
            core.otherAudioPeakBits.store(peak.bitPattern, ordering: .relaxed)
        }
    }
    let inserts = context.pointee.core._withUnsafeGuaranteedRef { core -> HostInsertIO in
        // Relaxed: the flag only gates a one-shot test hook; the exchange makes it run once.
        if core.startHookPending.load(ordering: .relaxed),
            core.startHookPending.exchange(false, ordering: .relaxed)
        {
            context.pointee.startHook?()
        }
        // Release: counted before the insert table is loaded, so the control side, seeing two more
        // cycles, knows no cycle still holds a table it replaced (see `JackHost.publish`).
        core.cycleCounter.wrappingAdd(1, ordering: .releasing)
        // Acquire: pairs with the publishing exchange (the table's contents are visible).
        guard let raw = core.insertTable.load(ordering: .acquiring) else { return .none }
        return raw.assumingMemoryBound(to: JackInsertTable.self).pointee.prepare(frames: frames)
    }
    // Relaxed: a mode and rates set by the control side and the rate callback, read once per cycle. An
    // engine built for another rate than the server's (back at a new one, not yet rebuilt) would play at
    // the wrong speed and pitch, and record that into files of its own rate: it waits, as suspended.
    let suspendMode = context.pointee.core._withUnsafeGuaranteedRef { core -> Int in
        let engineRate = core.engineSampleRate.load(ordering: .relaxed)
        if engineRate != 0 && engineRate != core.sampleRateValue.load(ordering: .relaxed) { return 1 }
        return core.suspendMode.load(ordering: .relaxed)
    }
    context.pointee.engine._withUnsafeGuaranteedRef { engine in
        engine.render(
            frameCount: suspendMode == 1 ? 0 : Int(frames), inputs: inputCount > 0 ? UnsafePointer(inputs) : nil,
            inputCount: inputCount, outputs: UnsafePointer(outputs), outputCount: outputCount,
            inserts: inserts)
    }
    if suspendMode != 0 {
        // Suspended: silence out, rendered anyway or not.
        for i in 0..<outputCount { outputs[i]?.update(repeating: 0, count: Int(frames)) }
        for i in 0..<inserts.channelCount { inserts.outputs?[i]?.update(repeating: 0, count: Int(frames)) }
    }
    // Release: the render's writes are done before the event thread, seeing `false`, closes the client.
    context.pointee.core._withUnsafeGuaranteedRef { $0.processRunning.store(false, ordering: .releasing) }
    return 0
}

/// Once at `jack_activate` on the RT thread (cycle suspended), later on the notification thread. Only
/// records the size: nothing depends on it, because the render engine sub-blocks any period.
let jackBufferSizeCallback: JackBufferSizeCallback = { frames, arg in
    guard let arg else { return 0 }
    let context = arg.assumingMemoryBound(to: JackRenderContext.self)
    let changed = context.pointee.core._withUnsafeGuaranteedRef { core in
        // Relaxed: a value the control side reads; the pipe byte (a syscall) orders the announcement.
        core.bufferSizeValue.exchange(Int(frames), ordering: .relaxed) != Int(frames)
    }
    if changed { JackRenderContext.wake(context, .bufferSize) }
    return 0
}

/// Synchronously inside `jack_set_sample_rate_callback`, later on the notification thread.
let jackSampleRateCallback: JackSampleRateCallback = { rate, arg in
    guard let arg else { return 0 }
    let context = arg.assumingMemoryBound(to: JackRenderContext.self)
    let changed = context.pointee.core._withUnsafeGuaranteedRef { core in
        // Relaxed: as for the buffer size.
        core.sampleRateValue.exchange(Int(rate), ordering: .relaxed) != Int(rate)
    }
    if changed { JackRenderContext.wake(context, .sampleRate) }
    return 0
}

/// Notification thread.
let jackXRunCallback: JackXRunCallback = { arg in
    guard let arg else { return 0 }
    let context = arg.assumingMemoryBound(to: JackRenderContext.self)
    JackRenderContext.noteNotificationThread(context)
    let delay = jack_get_xrun_delayed_usecs(context.pointee.client)
    context.pointee.core._withUnsafeGuaranteedRef { core in
        // Relaxed: statistics.
        core.xrunDelayBits.store(delay.bitPattern, ordering: .relaxed)
        core.xrunCounter.wrappingAdd(1, ordering: .relaxed)
    }
    JackRenderContext.wake(context, .xrun)
    return 0
}

/// Notification thread, when the server goes away. Like a signal handler (jack.h): copies the reason
/// into preallocated memory, sets a flag and writes a byte. The event thread closes the client.
let jackInfoShutdownCallback: JackInfoShutdownCallback = { code, reason, arg in
    guard let arg else { return }
    JackRenderContext.recordShutdown(
        arg.assumingMemoryBound(to: JackRenderContext.self), code: code.rawValue, reason: reason,
        byInfoCallback: true)
}

/// Notification thread, when the server goes away, for libjacks that call only the plain shutdown
/// callback: PipeWire's calls `jack_on_shutdown` and never `jack_on_info_shutdown`. jackd2 calls only the
/// info callback when both are set (jack.h).
let jackShutdownCallback: JackShutdownCallback = { arg in
    guard let arg else { return }
    JackRenderContext.recordShutdown(
        arg.assumingMemoryBound(to: JackRenderContext.self), code: JackFailure.rawValue | JackServerError.rawValue,
        reason: nil, byInfoCallback: false)
}

/// Notification thread, for every connection made or broken between any two ports.
let jackPortConnectCallback: JackPortConnectCallback = { _, _, _, arg in
    guard let arg else { return }
    JackRenderContext.noteNotificationThread(arg.assumingMemoryBound(to: JackRenderContext.self))
    JackRenderContext.wake(arg.assumingMemoryBound(to: JackRenderContext.self), .graph)
}

/// Notification thread, for every port registered or unregistered.
let jackPortRegistrationCallback: JackPortRegistrationCallback = { _, registered, arg in
    guard let arg else { return }
    JackRenderContext.noteNotificationThread(arg.assumingMemoryBound(to: JackRenderContext.self))
    guard registered != 0 else { return }
    JackRenderContext.wake(arg.assumingMemoryBound(to: JackRenderContext.self), .portRegistered)
}

/// Notification thread, for every metadata property set, changed or removed on any subject.
let jackPropertyChangeCallback: JackPropertyChangeCallback = { _, _, _, arg in
    guard let arg else { return }
    JackRenderContext.noteNotificationThread(arg.assumingMemoryBound(to: JackRenderContext.self))
    arg.assumingMemoryBound(to: JackRenderContext.self).pointee.core._withUnsafeGuaranteedRef {
        // Relaxed: a count that only tells the control side to read the store again.
        _ = $0.propertyChanges.add(1, ordering: .relaxed)
    }
    JackRenderContext.wake(arg.assumingMemoryBound(to: JackRenderContext.self), .peers)
}

/// Notification thread, for every client that opens or closes (a session that vanished). Not for
/// `jack_property`'s clients ("jack-property…"): the host runs that tool to read the metadata store
/// (`JackMetadataStore`), and its own client would wake the reading again.
let jackClientRegistrationCallback: JackClientRegistrationCallback = { name, _, arg in
    guard let arg else { return }
    if let name, strncmp(name, "jack-property", 13) == 0 { return }
    JackRenderContext.noteNotificationThread(arg.assumingMemoryBound(to: JackRenderContext.self))
    JackRenderContext.wake(arg.assumingMemoryBound(to: JackRenderContext.self), .peers)
}

extension JackRenderContext {
    /// Either shutdown callback. Like a signal handler (jack.h): copies the reason into preallocated
    /// memory, sets a flag and writes a byte; the event thread closes the client. The first call wins.
    static func recordShutdown(
        _ context: UnsafeMutablePointer<JackRenderContext>, code: UInt32, reason: UnsafePointer<CChar>?,
        byInfoCallback: Bool
    ) {
        let first = context.pointee.core._withUnsafeGuaranteedRef { core in
            // Relaxed: only one caller may write the reason; the releasing store below publishes it.
            !core.shutdownRecorded.exchange(true, ordering: .relaxed)
        }
        guard first else { return }
        // Without a reason (the plain callback) the buffer keeps the words jackd2 uses, written by `make`.
        if let reason {
            let buffer = context.pointee.reason
            var length = 0
            while length < JackRenderContext.reasonCapacity - 1 && reason[length] != 0 {
                buffer[length] = reason[length]
                length += 1
            }
            buffer[length] = 0
        }
        context.pointee.core._withUnsafeGuaranteedRef { core in
            // Relaxed: published together with the flag below.
            core.shutdownStatus.store(code, ordering: .relaxed)
            core.shutdownByInfoCallback.store(byInfoCallback, ordering: .relaxed)
            // Release: the reason bytes and status are visible to whoever acquires the flag.
            core.serverLostFlag.store(true, ordering: .releasing)
        }
        wake(context, .shutdown)
    }

    /// libjack's notification thread, in each of its callbacks: records the thread's kernel id, so that
    /// a lost client is closed only once that thread has ended (`waitForNotificationThreadToEnd`).
    static func noteNotificationThread(_ context: UnsafeMutablePointer<JackRenderContext>) {
        let thread = jackshim_thread_id()
        context.pointee.core._withUnsafeGuaranteedRef { core in
            // Relaxed: read by the event thread after it acquired the loss flag.
            core.notificationThreadID.store(thread, ordering: .relaxed)
        }
    }

}

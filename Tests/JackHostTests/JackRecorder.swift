// Test helper. A minimal second JACK client with one input port that records into a preallocated
// buffer on its process thread, so tests can capture what the host plays.
import CJack
import DSPTestSupport
import Foundation
import JackHost
import Synchronization

/// Shared between the recorder's process callback and the test thread.
private final class RecorderState: Sendable {
    let count = Atomic<Int>(0)
    let isArmed = Atomic<Bool>(false)
    nonisolated(unsafe) let samples: UnsafeMutablePointer<Float>
    let capacity: Int
    nonisolated(unsafe) var port: OpaquePointer?

    init(capacity: Int) {
        self.capacity = capacity
        samples = .allocate(capacity: capacity)
        samples.initialize(repeating: 0, count: capacity)
    }

    deinit { samples.deallocate() }
}

/// RT thread: while armed, appends the input port's samples until the buffer is full.
private let recorderProcess: JackProcessCallback = { frames, arg in
    guard let arg else { return 0 }
    Unmanaged<RecorderState>.fromOpaque(arg)._withUnsafeGuaranteedRef { state in
        // Acquire: pairs with `record`'s release after resetting the count.
        guard state.isArmed.load(ordering: .acquiring), let port = state.port,
            let input = jack_port_get_buffer(port, frames)?.assumingMemoryBound(to: Float.self)
        else { return }
        let have = state.count.load(ordering: .relaxed)
        let n = min(Int(frames), state.capacity - have)
        if n <= 0 { return }
        (state.samples + have).update(from: input, count: n)
        // Release: the samples are written before the test thread sees the count. A compare-exchange, so
        // a reset by `record` in the meantime wins.
        _ = state.count.compareExchange(expected: have, desired: have + n, ordering: .releasing)
    }
    return 0
}

/// A JACK client `ss_rec` with input port `in`.
final class JackRecorder {
    let client: OpaquePointer
    let portName: String
    private let state: RecorderState
    private let unmanaged: Unmanaged<RecorderState>

    /// Opens and activates the recorder on `server`, able to hold `capacity` samples.
    init(server: String, capacity: Int) throws {
        let state = RecorderState(capacity: capacity)
        self.state = state
        unmanaged = Unmanaged.passRetained(state)
        let port: OpaquePointer
        do {
            (client, port) = try openJackTestClient(
                name: "ss_rec", server: server, port: "in", flags: JackPortIsInput, what: "recorder",
                process: recorderProcess, context: unmanaged.toOpaque()
            ) { state.port = $0 }
        } catch {
            unmanaged.release()
            throw error
        }
        portName = String(cString: jack_port_name(port))
    }

    deinit {
        close()
    }

    private var isClosed = false

    func close() {
        if isClosed { return }
        isClosed = true
        _ = jack_deactivate(client)
        _ = jack_client_close(client)
        unmanaged.release()
    }

    /// Connects `source` (a full output port name) to the recorder's input.
    func connect(from source: String) -> JackConnectionResult {
        JackPorts.connect(client: client, source, portName)
    }

    /// Records `frames` samples (at most the capacity); waits up to `timeout` seconds. Returns what
    /// was captured (fewer samples on timeout).
    func record(frames: Int, timeout: Double = 10) -> [Float] {
        let wanted = min(frames, state.capacity)
        state.isArmed.store(false, ordering: .relaxed)
        usleep(20_000)
        // Relaxed then release: the count is zero before the callback can see the armed flag.
        state.count.store(state.capacity - wanted, ordering: .relaxed)
        state.isArmed.store(true, ordering: .releasing)
        let deadline = Date().addingTimeInterval(timeout)
        while state.count.load(ordering: .acquiring) < state.capacity && Date() < deadline { usleep(10_000) }
        state.isArmed.store(false, ordering: .relaxed)
        let end = state.count.load(ordering: .acquiring)
        let start = state.capacity - wanted
        return Array(UnsafeBufferPointer(start: state.samples + start, count: max(0, end - start)))
    }
}

extension JackRecorder {
    /// The amplitude of the steady `frequency` sine reaching the recorder, with how each capture went.
    /// Captures `frames` samples and measures the windows after the first 0.1 s
    /// (`Goertzel.steadyAmplitude`, `window` samples each); a loaded machine's xruns put steps in some
    /// windows, so while the captures so far hold fewer steady windows than half of one capture, another
    /// is taken, up to three (ten under a sanitizer: with every sanitized suite running beside it, ten
    /// captures in a row once had 5–31 steady windows of 80 each, most of them at the expected amplitude).
    /// Nil when no capture had enough steady windows.
    func steadyToneAmplitude(frequency: Double, window: Int = 240, frames: Int = 24_000)
        -> (amplitude: Double?, captures: [String])
    {
        Goertzel.steadyAmplitude(
            frequency: frequency, sampleRate: 48_000, window: window, attempts: AllocationProbe.isSanitized ? 10 : 3
        ) {
            let samples = record(frames: frames)
            guard samples.count == frames else {
                return .failure(Goertzel.CaptureShortfall("captured \(samples.count) of \(frames) samples"))
            }
            return .success(samples[4_800...])
        }
    }
}

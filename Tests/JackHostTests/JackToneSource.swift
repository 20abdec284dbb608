// Test helper. A second JACK client with one output port playing a steady sine, so tests can send audio
// into the engine's ports from a program we did not write the engine side of.
import CJack
import Foundation
import JackHost
import Synchronization

/// Shared between the tone's process callback and the test thread.
private final class ToneState: Sendable {
    let phaseIncrement: Double
    let amplitude: Float
    let busyMicroseconds: UInt32
    nonisolated(unsafe) var phase = 0.0
    nonisolated(unsafe) var port: OpaquePointer?

    init(frequency: Double, sampleRate: Double, amplitude: Float, busyMicroseconds: UInt32) {
        phaseIncrement = 2 * Double.pi * frequency / sampleRate
        self.amplitude = amplitude
        self.busyMicroseconds = busyMicroseconds
    }
}

/// RT thread: writes the next period of the sine (phase kept across periods).
private let toneProcess: JackProcessCallback = { frames, arg in
    guard let arg else { return 0 }
    Unmanaged<ToneState>.fromOpaque(arg)._withUnsafeGuaranteedRef { state in
        guard let port = state.port,
            let out = jack_port_get_buffer(port, frames)?.assumingMemoryBound(to: Float.self)
        else { return }
        var phase = state.phase
        for i in 0..<Int(frames) {
            out[i] = state.amplitude * Float(sin(phase))
            phase += state.phaseIncrement
            if phase > 2 * Double.pi { phase -= 2 * Double.pi }
        }
        state.phase = phase
        // A client that takes most of a period: clients it feeds run late in every cycle.
        if state.busyMicroseconds > 0 { usleep(state.busyMicroseconds) }
    }
    return 0
}

/// A JACK client `ss_tone` with output port `out`; with `busyMicroseconds`, its process callback also
/// takes that long every period (sleeping), so a client it feeds reads its ports late in each cycle.
final class JackToneSource {
    let client: OpaquePointer
    let portName: String
    private let unmanaged: Unmanaged<ToneState>
    private var isClosed = false

    init(
        server: String, frequency: Double, amplitude: Float, sampleRate: Double = 48_000, busyMicroseconds: UInt32 = 0
    ) throws {
        let state = ToneState(
            frequency: frequency, sampleRate: sampleRate, amplitude: amplitude, busyMicroseconds: busyMicroseconds)
        unmanaged = Unmanaged.passRetained(state)
        let port: OpaquePointer
        do {
            (client, port) = try openJackTestClient(
                name: "ss_tone", server: server, port: "out", flags: JackPortIsOutput, what: "tone source",
                process: toneProcess, context: unmanaged.toOpaque()
            ) { state.port = $0 }
        } catch {
            unmanaged.release()
            throw error
        }
        portName = String(cString: jack_port_name(port))
    }

    deinit { close() }

    func close() {
        if isClosed { return }
        isClosed = true
        _ = jack_deactivate(client)
        _ = jack_client_close(client)
        unmanaged.release()
    }

    /// Connects the tone's output to `destination` (a full input port name).
    func connect(to destination: String) -> JackConnectionResult {
        JackPorts.connect(client: client, portName, destination)
    }

    /// The latency range JACK reports for any port (by full name) in `mode`; nil if there is no such port.
    func latency(of port: String, capture: Bool) -> (min: UInt32, max: UInt32)? {
        guard let handle = jack_port_by_name(client, port) else { return nil }
        var range = jack_latency_range_t()
        jack_port_get_latency_range(handle, capture ? JackCaptureLatency : JackPlaybackLatency, &range)
        return (range.min, range.max)
    }

    /// True when a port with this full name exists on the server.
    func portExists(_ port: String) -> Bool { jack_port_by_name(client, port) != nil }
}

// Test helper. A JACK client whose process callback takes most of a period (it sleeps), so that a client
// fed by it runs late in every cycle: what the control side does early in a cycle happens before that
// client's callback reads its ports.
import CJack
import Foundation
import JackHost

/// Shared between the callback and the test thread.
private final class SlowState: Sendable {
    let busyMicroseconds: UInt32
    nonisolated(unsafe) var port: OpaquePointer?

    init(busyMicroseconds: UInt32) { self.busyMicroseconds = busyMicroseconds }
}

/// RT thread of a test client (never the engine's): silence out, then sleep.
private let slowProcess: JackProcessCallback = { frames, arg in
    guard let arg else { return 0 }
    Unmanaged<SlowState>.fromOpaque(arg)._withUnsafeGuaranteedRef { state in
        if let port = state.port, let out = jack_port_get_buffer(port, frames)?.assumingMemoryBound(to: Float.self) {
            out.update(repeating: 0, count: Int(frames))
        }
        usleep(state.busyMicroseconds)
    }
    return 0
}

/// A JACK client `ss_slow` with output port `out`, busy for `busyMicroseconds` every period.
final class JackSlowSource {
    let client: OpaquePointer
    let portName: String
    private let unmanaged: Unmanaged<SlowState>
    private var isClosed = false

    init(server: String, busyMicroseconds: UInt32) throws {
        let state = SlowState(busyMicroseconds: busyMicroseconds)
        unmanaged = Unmanaged.passRetained(state)
        let port: OpaquePointer
        do {
            (client, port) = try openJackTestClient(
                name: "ss_slow", server: server, port: "out", flags: JackPortIsOutput, what: "slow source",
                process: slowProcess, context: unmanaged.toOpaque()
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

    /// Connects the output to `destination` (a full input port name).
    func connect(to destination: String) -> JackConnectionResult {
        JackPorts.connect(client: client, portName, destination)
    }
}

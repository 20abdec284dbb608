// Test helper. A JACK client that plays a room: what arrives on `speaker` comes back on `mic` after a
// bulk delay and a few reflections, plus a near-end talker, as a loudspeaker and a microphone in one room
// would give a voice processor. A program we did not write, in its own process callback.
import CJack
import Foundation
import JackHost

/// Shared between the room's process callback and the test thread.
private final class RoomState: Sendable {
    /// Reflections: (delay in samples after the bulk delay, gain).
    let taps: [(Int, Float)]
    let bulkDelay: Int
    let historyLength = 1 << 16
    nonisolated(unsafe) let history: UnsafeMutablePointer<Float>
    nonisolated(unsafe) var written = 0
    nonisolated(unsafe) let near: UnsafeMutablePointer<Float>
    let nearCount: Int
    nonisolated(unsafe) var nearPosition = 0
    nonisolated(unsafe) var speaker: OpaquePointer?
    nonisolated(unsafe) var mic: OpaquePointer?

    init(bulkDelay: Int, taps: [(Int, Float)], near: [Float]) {
        self.bulkDelay = bulkDelay
        self.taps = taps
        history = .allocate(capacity: historyLength)
        history.initialize(repeating: 0, count: historyLength)
        nearCount = near.count
        self.near = .allocate(capacity: max(1, near.count))
        self.near.initialize(repeating: 0, count: max(1, near.count))
        near.withUnsafeBufferPointer { self.near.update(from: $0.baseAddress!, count: near.count) }
    }

    deinit {
        history.deallocate()
        near.deallocate()
    }
}

/// RT thread: mic = Σ gain · speaker[n − bulk − delay] + near[n].
private let roomProcess: JackProcessCallback = { frames, arg in
    guard let arg else { return 0 }
    Unmanaged<RoomState>.fromOpaque(arg)._withUnsafeGuaranteedRef { room in
        guard let speakerPort = room.speaker, let micPort = room.mic,
            let input = jack_port_get_buffer(speakerPort, frames)?.assumingMemoryBound(to: Float.self),
            let output = jack_port_get_buffer(micPort, frames)?.assumingMemoryBound(to: Float.self)
        else { return }
        let mask = room.historyLength - 1
        for i in 0..<Int(frames) {
            let now = room.written + i
            room.history[now & mask] = input[i]
            var sample: Float = 0
            for (delay, gain) in room.taps {
                let at = now - room.bulkDelay - delay
                if at >= 0 { sample += gain * room.history[at & mask] }
            }
            if room.nearPosition < room.nearCount {
                sample += room.near[room.nearPosition]
                room.nearPosition += 1
            }
            output[i] = sample
        }
        room.written += Int(frames)
    }
    return 0
}

/// A JACK client `ss_room` with input port `speaker` and output port `mic`.
final class JackRoomSimulator {
    let client: OpaquePointer
    let speakerPort: String
    let micPort: String
    private let unmanaged: Unmanaged<RoomState>
    private var isClosed = false

    init(server: String, bulkDelay: Int, taps: [(Int, Float)], near: [Float] = []) throws {
        let state = RoomState(bulkDelay: bulkDelay, taps: taps, near: near)
        unmanaged = Unmanaged.passRetained(state)
        var status = jack_status_t(rawValue: 0)
        guard
            let client = jackshim_client_open(
                "ss_room", jack_options_t(rawValue: JackNoStartServer.rawValue), &status, server)
        else {
            unmanaged.release()
            throw FixtureError("the room could not open on '\(server)': status \(status.rawValue)")
        }
        self.client = client
        guard
            let speaker = jack_port_register(
                client, "speaker", JACK_DEFAULT_AUDIO_TYPE, UInt(JackPortIsInput.rawValue), 0),
            let mic = jack_port_register(client, "mic", JACK_DEFAULT_AUDIO_TYPE, UInt(JackPortIsOutput.rawValue), 0)
        else {
            _ = jack_client_close(client)
            unmanaged.release()
            throw FixtureError("the room could not register its ports")
        }
        state.speaker = speaker
        state.mic = mic
        speakerPort = String(cString: jack_port_name(speaker))
        micPort = String(cString: jack_port_name(mic))
        _ = jack_set_process_callback(client, roomProcess, unmanaged.toOpaque())
        guard jack_activate(client) == 0 else {
            _ = jack_client_close(client)
            unmanaged.release()
            throw FixtureError("the room could not activate")
        }
    }

    deinit { close() }

    func close() {
        if isClosed { return }
        isClosed = true
        _ = jack_deactivate(client)
        _ = jack_client_close(client)
        unmanaged.release()
    }

    /// Connects two ports by full name (either may be the room's).
    func connect(_ source: String, to destination: String) -> JackConnectionResult {
        JackPorts.connect(client: client, source, destination)
    }
}

// Remote control end to end: `soundstage run` with a patch whose session names a now-playing
// audioplayer; JACK transport, moved by `jack_transport` as a DAW would, starts, locates and stops it.
import Foundation
@testable import OSCControl
import Testing

extension OSCExternalSerialSuites {
    @Suite struct RemoteControlRunTests {}
}

extension OSCExternalSerialSuites.RemoteControlRunTests {
    private static let patch = """
        version: 1
        engine: { sampleRate: 48000, outputs: 2 }
        buffers:
          - name: song
            generate: { waveform: sine, frequency: 440, duration: 8.0, amplitude: 0.2 }
        nodes:
          - { name: deck, kind: audioplayer, params: { buffer: song } }
        connections:
          - { from: deck, to: main }
        session:
          nowPlaying: deck

        """

    /// Sends `commands` to jack_transport's prompt on `server`.
    private func transport(_ server: DummyJackServer, _ commands: String) {
        let result = ChildProcess.run(
            "/bin/sh", ["-c", "printf '\(commands)quit\\n' | /usr/bin/jack_transport"], environment: server.environment,
            timeout: 10)
        #expect(result.status == 0, "jack_transport: \(result.output)")
    }

    private func value(_ client: OSCTestClient, _ parameter: String) -> OSCArgument? {
        client.request("/node/deck/\(parameter)")?.arguments.first
    }

    @Test(.needsJackAndSoundstage, .timeLimit(.minutes(2)))
    func jackTransportDrivesTheNowPlayingPlayer() throws {
        let server = try DummyJackServer()
        let folder = NSTemporaryDirectory() + "osct-remote-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let patchPath = folder + "/deck.yaml"
        try Self.patch.write(toFile: patchPath, atomically: true, encoding: .utf8)
        let run = try SoundstageRun(patch: patchPath, server: server, clientName: "ss_remote")
        let client = OSCTestClient(port: run.port)
        #expect(client.request("/session/nowPlaying")?.arguments.first == .string("deck"))
        // The metadata itself is checked on the host (JackHostSessionTests), against jack_property.

        transport(server, "locate 96000\\nplay\\n")
        #expect(waitFor { value(client, "playing")?.boolValue == true }, "did not start")
        let started = value(client, "currentTime")?.doubleValue ?? 0
        #expect(started >= 2 && started < 3, "located to \(started) s")
        transport(server, "stop\\n")
        #expect(waitFor { value(client, "playing")?.boolValue == false }, "did not stop")
        #expect(client.command("/quit")?.address == "/done")
        #expect(run.child.waitForExit(timeout: 10) == 0, Comment(rawValue: run.child.output.suffix(2000).description))
    }

    private func waitFor(_ condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(3)
        while Date() < deadline {
            if condition() { return true }
            usleep(50_000)
        }
        return false
    }
}

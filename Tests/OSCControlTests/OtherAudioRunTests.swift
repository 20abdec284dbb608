// Other audio end to end: a game (`soundstage run` with monitorOtherAudio and its music marked
// secondary) hears a second engine start playing out through the physical ports, is told, and its music
// fades out; when that engine stops playing out, the music comes back. Levels are captured from the
// game's JACK port with jack_rec.
import DSPTestSupport
import Foundation
@testable import OSCControl
import Testing

extension OSCExternalSerialSuites {
    @Suite struct OtherAudioRunTests {}
}

extension OSCExternalSerialSuites.OtherAudioRunTests {
    private static func patch(session: String, secondary: Bool) -> String {
        """
        version: 1
        engine: { sampleRate: 48000, outputs: 1 }
        buffers:
          - name: tone
            generate: { waveform: sine, frequency: 1000, duration: 1.0, amplitude: 0.5, channels: 1 }
        nodes:
          - { name: p, kind: player, params: { buffer: tone, loop: true, playing: true, secondary: \(secondary) } }
        connections:
          - { from: p, to: main }
        session: { \(session) }

        """
    }

    /// The RMS level of the 1 kHz tone on `port`, over the windows of a 1 s capture that an xrun on a
    /// loaded machine left steady (a capture with too few is taken again, up to three times).
    private func level(_ server: DummyJackServer, _ port: String) throws -> Double {
        let steady = try Goertzel.steadyAmplitude(frequency: 1_000, sampleRate: 48_000, window: 240) {
            .success(try JackRecCapture(server: server, ports: [port], seconds: 1).finish()[0].dropFirst(480))
        }
        guard let amplitude = steady.amplitude else {
            Issue.record("no steady capture of \(port): \(steady.captures)")
            return .nan
        }
        return amplitude / 2.0.squareRoot()
    }

    private func jackConnect(_ server: DummyJackServer, _ tool: String, _ a: String, _ b: String) {
        let result = ChildProcess.run("/usr/bin/\(tool)", [a, b], environment: server.environment, timeout: 10)
        #expect(result.status == 0, "\(tool) \(a) \(b): \(result.output)")
    }

    @Test(.needsJackAndSoundstage, .timeLimit(.minutes(2)))
    func secondaryAudioMakesRoomForOtherAudio() throws {
        let server = try DummyJackServer()
        let folder = NSTemporaryDirectory() + "osct-other-audio-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try Self.patch(session: "category: ambient, monitorOtherAudio: true", secondary: true)
            .write(toFile: folder + "/game.yaml", atomically: true, encoding: .utf8)
        try Self.patch(session: "category: playback", secondary: false)
            .write(toFile: folder + "/radio.yaml", atomically: true, encoding: .utf8)
        let game = try SoundstageRun(patch: folder + "/game.yaml", server: server, clientName: "ss_game")
        let radio = try SoundstageRun(patch: folder + "/radio.yaml", server: server, clientName: "ss_radio")
        let client = OSCTestClient(port: game.port)
        #expect(client.command("/notify", [.int32(1)])?.address == "/done")
        // The game plays out itself: its own output is never other audio.
        jackConnect(server, "jack_connect", "ss_game:out_1", "system:playback_1")
        let full = 0.5 / 2.0.squareRoot()
        #expect(abs(try level(server, "ss_game:out_1") - full) < 0.01)
        #expect(client.request("/session/otherAudioPlaying")?.arguments == [.int32(0)])

        // The radio starts playing out: after 200 ms the game is told, and its music fades out.
        _ = client.takeAll()
        jackConnect(server, "jack_connect", "ss_radio:out_1", "system:playback_2")
        let began = client.receive(timeout: 3) { $0.address == "/session/silence_secondary_audio" }
        #expect(began.contains { $0.address == "/session/other_audio" && $0.arguments == [.int32(1)] }, "\(began)")
        #expect(began.contains { $0.arguments == [.string("begin")] }, "\(began)")
        #expect(client.request("/session/otherAudioPlaying")?.arguments == [.int32(1)])
        usleep(400_000)
        #expect(try level(server, "ss_game:out_1") < 1e-4, "the secondary music still plays")
        #expect(abs(try level(server, "ss_radio:out_1") - full) < 0.01, "the other audio itself changed")

        // The radio stops playing out: a second later the music comes back.
        _ = client.takeAll()
        jackConnect(server, "jack_disconnect", "ss_radio:out_1", "system:playback_2")
        let ended = client.receive(timeout: 4) { $0.address == "/session/silence_secondary_audio" }
        #expect(ended.contains { $0.address == "/session/other_audio" && $0.arguments == [.int32(0)] }, "\(ended)")
        #expect(ended.contains { $0.arguments == [.string("end")] }, "\(ended)")
        usleep(400_000)
        #expect(abs(try level(server, "ss_game:out_1") - full) < 0.01)

        // The output override (iOS's overrideOutputAudioPort): the game plays to playback_2 only, then back.
        _ = client.takeAll()
        #expect(client.command("/session/overrideOutputPort", [.string("system:playback_2")])?.address == "/done")
        let overridden = client.receive(timeout: 3) { $0.address == "/session/route_change" }
        #expect(
            overridden.contains {
                $0.arguments == [.string("override"), .string("system:playback_1"), .string("system:playback_2")]
            }, "\(overridden)")
        // jack_lsp, another client, sees a connection once the server's graph has taken it: asked until
        // it answers with the route (a cycle of the dummy backend can come late on a loaded machine).
        func routed(_ playing: String, not silent: String) -> Bool {
            ExternalLibloToolsTests.waitUntil(timeout: 3) {
                server.isConnected("ss_game:out_1", to: playing) && !server.isConnected("ss_game:out_1", to: silent)
            }
        }
        #expect(routed("system:playback_2", not: "system:playback_1"), Comment(rawValue: server.connections()))
        #expect(client.command("/session/overrideOutputPort", [.string("nowhere:at_all")])?.errorCode == 61)
        #expect(
            server.isConnected("ss_game:out_1", to: "system:playback_2"),
            Comment(rawValue: "a bad override moved the route\n" + server.connections()))
        #expect(client.command("/session/overrideOutputPort", [.string("none")])?.address == "/done")
        #expect(routed("system:playback_1", not: "system:playback_2"), Comment(rawValue: server.connections()))
        // Only the override's own route change was announced, not the connections it made on the way.
        let announced = client.receive(timeout: 1).filter { $0.address == "/session/route_change" }
        #expect(announced.allSatisfy { $0.arguments.first == .string("override") }, "\(announced)")

        // Monitoring off: the port goes.
        #expect(client.command("/session/monitorOtherAudio", [.int32(0)])?.address == "/done")
        let lsp = ChildProcess.run("/usr/bin/jack_lsp", [], environment: server.environment, timeout: 5).output
        #expect(!lsp.contains("ss_game:other_audio"), "\(lsp)")
        for (c, run) in [(client, game), (OSCTestClient(port: radio.port), radio)] {
            #expect(c.command("/quit")?.address == "/done")
            #expect(
                run.child.waitForExit(timeout: 10) == 0, Comment(rawValue: run.child.output.suffix(1500).description))
        }
    }
}

// Three `soundstage run` sessions on one private jackd share it the way apps share a phone's audio: a
// non-mixable activation interrupts the other active non-mixable session, which resumes when told; a
// ducking session lowers the others by its duck level; the rig's silent switch mutes the ambient one.
// What each engine plays is captured from its JACK ports with jack_rec.
import Foundation
import DSPTestSupport
@testable import OSCControl
import Testing

extension OSCExternalSerialSuites {
    @Suite struct SessionSharingRunTests {}
}

extension OSCExternalSerialSuites.SessionSharingRunTests {
    /// A looping 0.5-amplitude sine (RMS 0.3536) and the given session section.
    static func patch(session: String) -> String {
        """
        version: 1
        engine: { sampleRate: 48000, outputs: 1 }
        buffers:
          - name: tone
            generate: { waveform: sine, frequency: 1000, duration: 1.0, amplitude: 0.5, channels: 1 }
        nodes:
          - { name: p, kind: player, params: { buffer: tone, loop: true, playing: true } }
        connections:
          - { from: p, to: main }
        session: { \(session) }

        """
    }

    /// RMS of each engine's out_1 over `seconds`, captured together.
    private func levels(_ server: DummyJackServer, _ runs: [SoundstageRun], seconds: Double = 1) throws -> [Double] {
        let capture: JackRecCapture
        do {
            capture = try JackRecCapture(server: server, ports: runs.map { $0.outputPort(1) }, seconds: seconds)
        } catch {
            throw ExternalSetupError("\(error); engines said: \(runs.map { $0.child.output.suffix(800) })")
        }
        return try capture.finish().map { channel in
            // The first and last 10 ms are left out (jack_rec's start and stop).
            let body = channel.dropFirst(480).dropLast(480)
            return (body.reduce(0) { $0 + Double($1) * Double($1) } / Double(max(1, body.count))).squareRoot()
        }
    }

    private func decibels(_ level: Double, relativeTo reference: Double) -> Double { 20 * log10(level / reference) }

    /// How long a session's notification may take. Each wait ends when the message arrives. With the
    /// metadata store deleted, each session reads the others out of process (`jack_property -l`, a
    /// process per listing, and a change made meanwhile needs a second one): under the address
    /// sanitizer with the other suites running, an interruption's end once took more than 3 s.
    static let notificationWait = 10.0

    /// What each engine said last (its session journal), for a failure's message.
    static func journals(_ runs: [SoundstageRun]) -> String {
        runs.map { "\($0.clientName):\n\($0.child.output.suffix(1500))" }.joined(separator: "\n")
    }

    /// Renews each subscription (a lease lasts 10 s).
    private func renew(_ clients: [OSCTestClient]) {
        for client in clients { #expect(client.command("/renew")?.address == "/done") }
    }

    @Test(.needsJackAndSoundstage, .timeLimit(.minutes(3)))
    func sessionsInterruptDuckAndSilenceEachOther() throws {
        // The sessions see each other through JACK metadata, which any server exiting elsewhere would
        // delete (the test deletes it once itself).
        try JackServerStartLock.exclusively { try sessionsShareTheServer() }
    }

    private func sessionsShareTheServer() throws {
        let server = try DummyJackServer()
        let folder = NSTemporaryDirectory() + "osct-sessions-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let sessions = [
            ("ss_music", "category: playback, active: true"),
            ("ss_radio", "category: playback"),
            ("ss_nav", "category: ambient, duckOthers: true, duckLevel: -15")
        ]
        var runs: [SoundstageRun] = []
        for (name, session) in sessions {
            let path = "\(folder)/\(name).yaml"
            try Self.patch(session: session).write(toFile: path, atomically: true, encoding: .utf8)
            runs.append(try SoundstageRun(patch: path, server: server, clientName: name))
        }
        let clients = runs.map { OSCTestClient(port: $0.port) }
        let (music, radio, nav) = (clients[0], clients[1], clients[2])
        for client in clients { #expect(client.command("/notify", [.int32(1)])?.address == "/done") }
        let full = 0.5 / 2.0.squareRoot()
        let start = try levels(server, runs)
        for level in start { #expect(abs(decibels(level, relativeTo: full)) < 0.2, "levels at start: \(start)") }
        #expect(music.request("/session/state")?.arguments == [.string("active")])

        // Another server of the user exits cleanly and deletes the metadata store under all three
        // sessions: what follows works only if they publish to and read from the store that replaces it.
        try DummyJackServer().stop()
        usleep(1_500_000)  // each session's 0.5 s property check writes its state to the new store
        let relisted = ChildProcess.run("/usr/bin/jack_property", ["-l"], environment: server.environment, timeout: 5)
        #expect(
            relisted.output.components(separatedBy: "urn:soundstage:session:category").count - 1 == 3,
            "\(relisted.output.prefix(2000))")

        // A non-mixable activation interrupts the active non-mixable session: its player pauses.
        renew(clients)
        _ = music.takeAll()
        #expect(radio.command("/session/activate")?.address == "/done")
        let began = music.receive(timeout: Self.notificationWait) { $0.address == "/session/interruption" }
        #expect(
            began.contains { $0.address == "/session/interruption" && $0.arguments == [.string("began")] },
            "\(Self.journals(runs))")
        #expect(music.request("/node/p/playing")?.arguments.first?.boolValue == false)
        #expect(music.request("/session/state")?.arguments == [.string("interrupted")])
        let interrupted = try levels(server, runs)
        #expect(interrupted[0] < 1e-4, "the interrupted session still plays: \(interrupted)")
        #expect(abs(decibels(interrupted[1], relativeTo: full)) < 0.2, "\(interrupted)")

        renew(clients)
        // Deactivating with notifyOthers ends it with shouldResume 1: the player plays again.
        _ = music.takeAll()
        #expect(radio.command("/session/deactivate", [.int32(1)])?.address == "/done")
        let ended = music.receive(timeout: Self.notificationWait) { $0.address == "/session/interruption" }
        #expect(ended.contains { $0.arguments == [.string("ended"), .int32(1)] }, "\(ended)\n\(Self.journals(runs))")
        #expect(music.request("/node/p/playing")?.arguments.first?.boolValue == true)
        #expect(music.request("/session/state")?.arguments == [.string("active")])
        #expect(radio.request("/session/state")?.arguments == [.string("inactive")])

        // A ducking (mixable) session lowers the others by its duck level and interrupts nobody.
        #expect(nav.command("/session/activate")?.address == "/done")
        #expect(
            music.receive(timeout: Self.notificationWait) { $0.address == "/session/gain" }.contains {
                $0.address == "/session/gain"
            })
        usleep(400_000)  // the 0.25 s glide
        let ducked = try levels(server, runs)
        #expect(abs(decibels(ducked[0], relativeTo: full) + 15) < 0.3, "ducked: \(ducked)")
        #expect(abs(decibels(ducked[1], relativeTo: full) + 15) < 0.3, "ducked: \(ducked)")
        #expect(abs(decibels(ducked[2], relativeTo: full)) < 0.2, "the ducking session itself: \(ducked)")
        #expect(music.request("/node/p/playing")?.arguments.first?.boolValue == true)
        #expect(nav.command("/session/deactivate")?.address == "/done")
        usleep(600_000)
        let restored = try levels(server, runs)
        for level in restored { #expect(abs(decibels(level, relativeTo: full)) < 0.2, "after ducking: \(restored)") }

        renew(clients)
        // The silent switch, set on any session, mutes the ambient one only.
        _ = nav.takeAll()
        #expect(radio.command("/session/silentSwitch", [.int32(1)])?.address == "/done")
        let told = nav.receive(timeout: Self.notificationWait) { $0.address == "/session/silentSwitch" }
        #expect(told.contains { $0.arguments == [.int32(1)] }, "\(told)")
        usleep(300_000)
        let silenced = try levels(server, runs)
        #expect(silenced[2] < 1e-4, "the ambient session plays through the silent switch: \(silenced)")
        #expect(abs(decibels(silenced[0], relativeTo: full)) < 0.2, "\(silenced)")
        #expect(nav.request("/session/silentSwitch")?.arguments == [.int32(1)])
        #expect(music.command("/session/silentSwitch", [.int32(0)])?.address == "/done")
        usleep(300_000)
        let back = try levels(server, runs)
        #expect(abs(decibels(back[2], relativeTo: full)) < 0.2, "after the silent switch: \(back)")

        renew(clients)
        // The category decides which ports exist: record has no outputs; back to playback, out_1 returns
        // with its connection. The change is a route change with reason categoryChange.
        _ = music.takeAll()
        #expect(server.isConnected("ss_music:out_1", to: "system:playback_1") == false)
        #expect(music.command("/session/category", [.string("record")])?.address == "/done")
        let change = music.receive(timeout: Self.notificationWait) { $0.address == "/session/route_change" }
        #expect(change.contains { $0.arguments.first == .string("categoryChange") }, "\(change)")
        let lsp = ChildProcess.run("/usr/bin/jack_lsp", [], environment: server.environment, timeout: 5).output
        #expect(!lsp.contains("ss_music:out_1") && lsp.contains("ss_radio:out_1"), "\(lsp)")
        #expect(music.command("/session/category", [.string("playback")])?.address == "/done")
        let again = ChildProcess.run("/usr/bin/jack_lsp", [], environment: server.environment, timeout: 5).output
        #expect(again.contains("ss_music:out_1"), "\(again)")
        #expect(music.request("/status", reply: "/status.reply")?.arguments.first == .string("running"))

        // The state is JACK metadata on each client.
        let listed = ChildProcess.run("/usr/bin/jack_property", ["-l"], environment: server.environment, timeout: 5)
        #expect(listed.output.contains("urn:soundstage:session:category"), "\(listed.output.prefix(2000))")

        for (client, run) in zip(clients, runs) {
            #expect(client.command("/quit")?.address == "/done")
            #expect(
                run.child.waitForExit(timeout: 10) == 0, Comment(rawValue: run.child.output.suffix(1500).description))
        }
    }
}

// dataPlayedBack end to end: `soundstage run` on a private dummy jackd with its outputs wired to the
// backend's playback ports. Two players start together on one click each, one reporting dataRendered
// and one dataPlayedBack: the played-back completion must come exactly JACK's playback latency later.
import Foundation
@testable import OSCControl
import Testing

extension OSCExternalSerialSuites {
    @Suite struct ScenarioPlayedBackTests {}
}

extension OSCExternalSerialSuites.ScenarioPlayedBackTests {
    /// The backend's playback latency of `port` (the maximum of `jack_lsp -l`'s range).
    private func playbackLatency(_ server: DummyJackServer, _ port: String) -> Int? {
        let text = ChildProcess.run("/usr/bin/jack_lsp", ["-s", server.name, "-l", port], timeout: 10).output
        guard let range = text.range(of: #"playback latency = \[ \d+ (\d+) \]"#, options: .regularExpression) else {
            return nil
        }
        return Int(text[range].split(separator: " ").dropLast().last ?? "")
    }

    @Test(.needsJackAndSoundstage, .timeLimit(.minutes(2)))
    func dataPlayedBackComesJACKsPlaybackLatencyAfterDataRendered() throws {
        let server = try DummyJackServer(period: 256, sampleRate: 48_000)
        let folder = NSTemporaryDirectory() + "osct-playedback-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let patch = folder + "/two-players.yaml"
        try ExternalPatches.twoEmptyPlayers.write(toFile: patch, atomically: true, encoding: .utf8)
        let run = try SoundstageRun(
            patch: patch, server: server, clientName: "ss_playedback", extraArguments: ["--connect"])
        let latency = try #require(playbackLatency(server, "system:playback_1"))
        #expect(latency > 0, "the backend reports no playback latency")
        let client = OSCTestClient(port: run.port)
        #expect(client.command("/notify", [.int32(1)])?.address == "/done")
        // Give the host's latency callback time to run after --connect, then queue and start both.
        #expect(client.request("/sync", reply: "/synced") != nil)
        usleep(200_000)
        client.sendBundle(
            .immediate,
            [
                OSCMessage("/node/a/enqueue", [.string("click"), .string("dataRendered")]),
                OSCMessage("/node/b/enqueue", [.string("click"), .string("dataPlayedBack")]),
                OSCMessage("/node/a/play"), OSCMessage("/node/b/play")
            ])
        var completions: [OSCMessage] = []
        let deadline = Date().addingTimeInterval(5)
        while completions.count < 2 && Date() < deadline {
            client.receive(timeout: 0.2) { $0.address == "/player/completed" }
            completions += client.take("/player/completed")
        }
        func time(_ kind: String) -> Int64? {
            for message in completions where message.arguments.count == 5 && message.arguments[2] == .string(kind) {
                if case .int64(let t) = message.arguments[4] { return t }
            }
            return nil
        }
        let rendered = try #require(time("dataRendered"), "\(completions) \(client.takeErrors())")
        let playedBack = try #require(time("dataPlayedBack"), "\(completions)")
        #expect(
            playedBack - rendered == Int64(latency),
            "dataRendered at \(rendered), dataPlayedBack at \(playedBack); JACK's playback latency is \(latency)")
        #expect(client.command("/quit")?.address == "/done")
        #expect(run.child.waitForExit(timeout: 10) == 0, Comment(rawValue: run.child.output))
    }
}

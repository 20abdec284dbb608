// `/patch/load s:path s:diff`: the running graph brought to a patch by a diff (what stays keeps its
// timeline), the mode checked, and `/status/realtime` without a JACK host.
import AudioGraph
import Foundation
@testable import OSCControl
import Testing

@Suite struct OSCPatchDiffTests {
    static func patch(volume: Double, extra: String = "") -> String {
        """
        version: 1
        engine: { sampleRate: 48000, outputs: 2 }
        buffers:
          - name: low
            generate: { waveform: sine, frequency: 220, duration: 1.0, amplitude: 1.0 }
        nodes:
          - { name: tone, kind: player, params: { buffer: low, loop: true, playing: true, volume: \(volume) } }
        \(extra)
        connections:
          - { from: tone, to: main }

        """
    }

    @Test func diffModeKeepsWhatStaysPlayingAndReplaceRestartsIt() throws {
        let f = try OSCFixture()
        try Self.patch(volume: 0.25).write(toFile: f.directory + "/a.yaml", atomically: true, encoding: .utf8)
        try Self.patch(volume: 0.5, extra: "  - { name: pad, kind: mixer }").write(
            toFile: f.directory + "/b.yaml", atomically: true, encoding: .utf8)
        #expect(f.client.command("/patch/load", [.string("a.yaml")])?.address == "/done")
        Thread.sleep(forTimeInterval: 0.2)
        let start = try #require(playerOrigin(f))

        #expect(f.client.command("/patch/load", [.string("b.yaml"), .string("diff")])?.address == "/done")
        #expect(try f.engine.get("tone", "volume") == .float(0.5))
        #expect(f.engine.nodes().contains { $0.name == "pad" })
        #expect(playerOrigin(f) == start, "the diff restarted the player")

        // The whole-graph swap (the default) starts a new player.
        #expect(f.client.command("/patch/load", [.string("a.yaml"), .string("replace")])?.address == "/done")
        Thread.sleep(forTimeInterval: 0.1)
        #expect(playerOrigin(f) != start)
        #expect(!f.engine.nodes().contains { $0.name == "pad" })

        #expect(f.client.command("/patch/load", [.string("a.yaml"), .string("merge")])?.errorCode == 61)
    }

    @Test func realtimeStatusWithoutAHostSaysOffline() throws {
        let f = try OSCFixture(render: false)
        let reply = f.client.request("/status/realtime", reply: "/status/realtime.reply")
        #expect(reply?.arguments == [.string("offline"), .string("none"), .int32(0)])
    }

    /// Engine frame minus the player's timeline frame (changes only when the player starts again).
    private func playerOrigin(_ f: OSCFixture) -> Int64? {
        guard let reply = f.client.request("/node/tone/playerTime"), reply.arguments.count == 2,
            case .int64(let sample) = reply.arguments[0], case .int64(let player) = reply.arguments[1]
        else { return nil }
        return sample - player
    }
}

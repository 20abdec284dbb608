// Remote control and now playing over OSC: the now-playing node, its information published as client
// metadata, remote commands, and JACK transport driving it.
import AudioGraph
import Foundation
@testable import OSCControl
import Testing

@Suite struct OSCNowPlayingTests {
    private func fixture() throws -> (OSCFixture, MockHost) {
        let host = MockHost()
        let f = try OSCFixture(host: host)
        // Four seconds of a quiet tone.
        let tone = (0..<192_000).map { Float(sin(Double($0) * 2 * Double.pi / 48)) * 0.1 }
        try f.engine.addBuffer(SampleBuffer(name: "song", channels: [tone], sampleRate: 48_000))
        try f.engine.attach(.audioplayer, name: "deck", parameters: ["buffer": .string("song")])
        try f.engine.connect("deck", to: "main")
        try f.engine.attach(.mixer, name: "bus")
        return (f, host)
    }

    private func playing(_ f: OSCFixture) -> Bool { (try? f.engine.get("deck", "playing")) == .bool(true) }

    private func position(_ f: OSCFixture) -> Double { (try? f.engine.get("deck", "currentTime"))?.doubleValue ?? -1 }

    @Test func nowPlayingIsSetPublishedAndAnswered() throws {
        let (f, host) = try fixture()
        #expect(f.client.command("/session/remote", [.string("play")])?.errorCode == 14)
        #expect(f.client.command("/session/nowPlaying", [.string("ghost")])?.errorCode == 61)
        #expect(f.client.command("/session/nowPlaying", [.string("bus")])?.errorCode == 61)
        #expect(f.client.command("/session/nowPlaying", [.string("deck")])?.address == "/done")
        #expect(
            f.client.command(
                "/session/nowPlayingInfo", [.string("title"), .string("Song"), .string("artist"), .string("Band")])?
                .address == "/done")
        #expect(f.client.command("/session/nowPlayingInfo", [.string("colour"), .string("red")])?.errorCode == 61)
        #expect(f.client.command("/session/nowPlayingInfo", [.string("title")])?.errorCode == 61)
        let answer = try #require(f.client.request("/session/nowPlaying"))
        #expect(answer.arguments.prefix(4) == [.string("deck"), .string("Song"), .string("Band"), .string("")])
        #expect(answer.arguments[4] == .float(4), "the duration comes from the audioplayer")
        let published = host.published.withLock { $0 }
        #expect(published[OSCServiceCore.nowPlayingPropertyKey("title")] == "Song")
        #expect(published[OSCServiceCore.nowPlayingPropertyKey("node")] == "deck")
        #expect(f.client.command("/session/nowPlaying", [.string("")])?.address == "/done")
        // The now-playing keys go; the session's own state stays published.
        let after = host.published.withLock { $0 }
        #expect(!after.keys.contains { $0.hasPrefix("urn:soundstage:session:nowPlaying:") }, "\(after)")
        #expect(after["urn:soundstage:session:category"] == "soloAmbient")
    }

    @Test func remoteCommandsDriveTheNowPlayingNode() throws {
        let (f, _) = try fixture()
        _ = f.client.command("/notify", [.int32(1)])
        _ = f.client.command("/session/nowPlaying", [.string("deck")])
        #expect(f.client.command("/session/remote", [.string("play")])?.address == "/done")
        #expect(playing(f))
        #expect(f.client.command("/session/remote", [.string("togglePlayPause")])?.address == "/done")
        #expect(!playing(f))
        #expect(f.client.command("/session/remote", [.string("seek"), .float(2.5)])?.address == "/done")
        #expect(abs(position(f) - 2.5) < 0.01, "position \(position(f))")
        #expect(f.client.command("/session/remote", [.string("previousTrack")])?.address == "/done")
        #expect(position(f) < 0.01)
        #expect(f.client.command("/session/remote", [.string("seek")])?.errorCode == 61)
        #expect(f.client.command("/session/remote", [.string("seek"), .float(-1)])?.errorCode == 61)
        #expect(f.client.command("/session/remote", [.string("rewind")])?.errorCode == 61)
        f.client.receive(timeout: 1) {
            $0.address == "/session/remote_command" && $0.arguments.first == .string("previousTrack")
        }
        let commands = f.client.take("/session/remote_command").compactMap { $0.arguments.first?.stringValue }
        #expect(commands == ["play", "togglePlayPause", "seek", "previousTrack"])
    }

    @Test func jackTransportStartsStopsAndLocatesIt() throws {
        let (f, _) = try fixture()
        _ = f.client.command("/session/nowPlaying", [.string("deck")])
        f.service.post(.transport(rolling: true, locatedSeconds: nil))
        _ = f.client.request("/sync", reply: "/synced")
        #expect(playing(f))
        f.service.post(.transport(rolling: false, locatedSeconds: 3))
        _ = f.client.request("/sync", reply: "/synced")
        #expect(!playing(f))
        // At once, whether or not the render has applied the pause and the seek yet: a report of the
        // pause taken after the seek was sent is older than the seek, and does not move the position.
        #expect(abs(position(f) - 3) < 0.01, "position \(position(f))")
        let rendered = f.renderer.frameCount
        while f.renderer.frameCount < rendered + 2 * f.renderer.period { usleep(1_000) }
        _ = f.client.request("/sync", reply: "/synced")
        #expect(abs(position(f) - 3) < 0.01, "position once applied \(position(f))")
    }
}

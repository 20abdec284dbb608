// Player addresses: transport, scheduling buffers and files, finished notifications.
import AudioGraph
import Foundation
@testable import OSCControl
import Testing

@Suite struct OSCPlayerTests {
    @Test func scheduleBufferPlayPauseStop() throws {
        let f = try OSCFixture()
        try f.engine.addBuffer(
            SampleBuffer(name: "dc", channels: [Array(repeating: 0.5, count: 48_000)], sampleRate: 48_000))
        _ = f.client.command("/node/new", [.string("player"), .string("p")])
        #expect(
            f.client.command("/node/p/schedule/buffer", [.string("dc"), .string("loop")])?.arguments
                == [.string("/node/p/schedule/buffer"), .string("dc")])
        #expect(try f.engine.get("p", "loop") == .bool(true))
        #expect(try f.engine.get("p", "buffer") == .string("dc"))
        #expect(f.client.command("/node/p/play")?.address == "/done")
        #expect(try f.engine.get("p", "playing") == .bool(true))
        #expect(f.client.command("/node/p/pause")?.address == "/done")
        #expect(try f.engine.get("p", "playing") == .bool(false))
        #expect(f.client.command("/node/p/stop")?.address == "/done")
        #expect(f.client.command("/node/p/schedule/buffer", [.string("dc"), .string("sideways")])?.errorCode == 61)
        #expect(f.client.command("/node/main/play")?.errorCode == 14)
        #expect(f.client.command("/node/p/play", [.string("now")])?.errorCode == 61)
        // Pd and TouchOSC send numbers as floats: a whole one is a sample time, a fraction is refused.
        #expect(f.client.command("/node/p/play", [.float(0)])?.address == "/done")
        #expect(try f.engine.get("p", "playing") == .bool(true))
        #expect(f.client.command("/node/p/stop", [.float(1.5)])?.errorCode == 61)
        #expect(f.client.command("/node/p/stop", [.double(0)])?.address == "/done")
    }

    @Test func scheduleFileDecodesOnTheWorker() throws {
        let f = try OSCFixture()
        let path = try f.writeWAV("clip.wav", channels: [Array(repeating: 0.25, count: 9600)])
        _ = f.client.command("/node/new", [.string("player"), .string("p")])
        let done = f.client.command("/node/p/schedule/file", [.string("clip.wav"), .int64(100), .int64(1000)])
        #expect(done?.arguments == [.string("/node/p/schedule/file"), .string("clip.wav"), .int32(1000), .int32(1)])
        #expect(try f.engine.get("p", "file") == .string(path))
        #expect(try f.engine.get("p", "start") == .int(100))
        #expect(try f.engine.get("p", "frames") == .int(1000))
        #expect(f.client.command("/node/p/schedule/file", [.string("nothing.wav")])?.errorCode == 42)
    }

    /// lastRenderTime is the start of the last render cycle (frame and wall clock); playerTime maps an
    /// engine frame to the player's timeline while it plays, and is nil when it does not.
    @Test func lastRenderTimeAndPlayerTimeAnswerForAPlayer() throws {
        let f = try OSCFixture()
        try f.engine.addBuffer(
            SampleBuffer(name: "tone", channels: [Array(repeating: 0.1, count: 48_000)], sampleRate: 48_000))
        _ = f.client.command(
            "/node/new",
            [
                .string("player"), .string("p"), .string("buffer"), .string("tone"),
                .string("loop"), .int32(1)
            ])
        _ = f.client.command("/graph/connect", [.string("p"), .string("main")])
        let stopped = try #require(f.client.request("/node/p/playerTime"))
        #expect(stopped.typeTags == "hN", "not playing: no player time")
        #expect(f.client.command("/node/p/play")?.address == "/done")
        f.client.receive(timeout: 0.3)
        let last = try #require(f.client.request("/node/p/lastRenderTime"))
        #expect(last.typeTags == "ht")
        guard case .int64(let frame) = last.arguments[0], case .timetag(let tag) = last.arguments[1] else { return }
        #expect(frame > 0 && frame <= f.engine.sampleTime)
        // The cycle began within the last half second of wall-clock time.
        let age = OSCTimetag.now().seconds(since: tag)
        #expect(age >= -0.01 && age < 0.5, "lastRenderTime is \(age) s old")
        // Player time advances one for one with engine time while playing.
        let a = try #require(f.client.request("/node/p/playerTime", [.int64(frame)]))
        let b = try #require(f.client.request("/node/p/playerTime", [.int64(frame + 4_800)]))
        guard case .int64(let pa) = a.arguments[1], case .int64(let pb) = b.arguments[1] else {
            Issue.record("playerTime while playing: \(a.arguments) \(b.arguments)")
            return
        }
        #expect(a.arguments[0] == .int64(frame) && pb - pa == 4_800 && pa >= 0)
        #expect(f.client.command("/node/main/playerTime")?.errorCode == OSCErrorCode(.notAllowed).rawValue)
        #expect(
            f.client.command("/node/p/playerTime", [.string("soon")])?.errorCode
                == OSCErrorCode.Layer.badArguments.rawValue)
        #expect(f.client.command("/node/nobody/lastRenderTime")?.errorCode == OSCErrorCode(.unknownNode).rawValue)
    }

    @Test func finishedPlayersAreNotified() throws {
        let f = try OSCFixture()
        try f.engine.addBuffer(
            SampleBuffer(name: "short", channels: [Array(repeating: 0.5, count: 480)], sampleRate: 48_000))
        _ = f.client.command("/node/new", [.string("player"), .string("p"), .string("buffer"), .string("short")])
        _ = f.client.command("/graph/connect", [.string("p"), .string("main")])
        #expect(f.client.command("/notify", [.int32(1)])?.address == "/done")
        f.client.send("/node/p/play")
        f.client.receive(timeout: 3) { $0.address == "/buffer/consumed" }
        let finished = try #require(f.client.take("/player/finished").first)
        #expect(finished.arguments[0] == .string("p"))
        #expect(finished.arguments[1] == .int32(1))
        #expect(f.client.take("/buffer/consumed").first?.arguments[1] == .string("short"))
        // Stopping a playing player is not a finish (AVAudioPlayer sends none): /player/stopped instead.
        f.client.send("/node/p/schedule/buffer", [.string("short"), .string("loop")])
        f.client.send("/node/p/play")
        f.client.receive(timeout: 0.5)
        _ = f.client.takeAll()
        f.client.send("/node/p/stop")
        f.client.receive(timeout: 2) { $0.address == "/player/stopped" }
        let stopped = try #require(f.client.take("/player/stopped").first)
        #expect(stopped.arguments[0] == .string("p") && stopped.typeTags == "sh")
        #expect(f.client.take("/player/finished").isEmpty)
        // Freeing a playing player is a stop too.
        f.client.send("/node/p/play")
        f.client.receive(timeout: 0.3)
        _ = f.client.takeAll()
        #expect(f.client.command("/node/free", [.string("p")])?.address == "/done")
        f.client.receive(timeout: 2) { $0.address == "/player/stopped" }
        #expect(f.client.take("/player/stopped").first?.arguments[0] == .string("p"))
        #expect(f.client.take("/player/finished").isEmpty)
    }
}

/// The audioplayer kind over OSC: prepare, play, seek, fade, power, and its notifications.
@Suite struct OSCAudioPlayerTests {
    @Test func audioPlayerAddressesDriveAVAudioPlayerSemantics() throws {
        let f = try OSCFixture()
        let sine = (0..<9_600).map { 0.5 * Float(sin(2 * Double.pi * 1_000 * Double($0) / 48_000)) }
        _ = try f.writeWAV("tone.wav", channels: [sine, sine])
        #expect(
            f.client.command(
                "/node/new",
                [
                    .string("audioplayer"), .string("ap"), .string("meteringEnabled"), .int32(1),
                    .string("numberOfLoops"), .int32(1)
                ])?.address == "/done")
        _ = f.client.command("/graph/connect", [.string("ap"), .string("main")])
        #expect(
            f.client.command("/node/ap/prepare")?.arguments == [.string("/node/ap/prepare"), .int32(0)],
            "nothing to prepare before a file is set")
        f.client.send("/node/ap/file", [.string("tone.wav")])
        #expect(f.client.request("/sync", [.int32(7)], reply: "/synced")?.arguments == [.int32(7)])
        #expect(try f.engine.get("ap", "duration") == .float(0.2))
        #expect(try f.engine.get("ap", "channels") == .int(2))
        #expect(f.client.command("/node/ap/prepare")?.arguments == [.string("/node/ap/prepare"), .int32(1)])
        #expect(f.client.command("/notify", [.int32(1)])?.address == "/done")
        #expect(f.client.command("/node/ap/play")?.address == "/done")
        // Two passes of 0.2 s, then the finished notification with success.
        f.client.receive(timeout: 3) { $0.address == "/player/finished" }
        let finished = try #require(f.client.take("/player/finished").first)
        #expect(finished.arguments[0] == .string("ap") && finished.arguments[1] == .int32(1))
        let power = try #require(f.client.request("/node/ap/power"))
        #expect(power.address == "/node/ap/power" && power.arguments.count == 5)
        if case .float(let peak) = power.arguments[3] {
            #expect(abs(peak - Float(20 * log10(0.5))) < 0.1, "peak \(peak) dBFS")
        }
        #expect(
            f.client.command("/node/ap/fade", [.float(0.25), .float(1)])?.arguments
                == [.string("/node/ap/fade"), .float(0.25), .float(1)])
        #expect(try f.engine.get("ap", "volume") == .float(0.25))
        #expect(f.client.command("/node/ap/fade", [.float(2), .float(1)])?.errorCode == 22)
        f.client.send("/node/ap/currentTime", [.float(0.1)])
        #expect(f.client.request("/node/ap/currentTime")?.arguments == [.float(0.1)])
        #expect(f.client.command("/node/ap/rate", [.float(1.5)])?.errorCode == 14)
        // A file that is not audio: /error to the sender and /player/decode_error to subscribers.
        try Data("not audio".utf8).write(to: URL(fileURLWithPath: f.directory + "/bogus.wav"))
        f.client.send("/node/ap/file", [.string("bogus.wav")])
        f.client.receive(timeout: 3) { $0.address == "/player/decode_error" }
        #expect(f.client.take("/player/decode_error").first?.arguments.first == .string("ap"))
        #expect(f.client.take("/error").first != nil)
    }
}

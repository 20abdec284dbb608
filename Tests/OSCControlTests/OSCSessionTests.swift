// The audio session over OSC: a rig's own interruptions, the server's loss and return as one, route
// changes from the host, pauseOnRouteLoss, and the session state in /status.
import AudioGraph
import Foundation
@testable import OSCControl
import Patches
import Testing

@Suite struct OSCSessionTests {
    private func fixtureWithPlayers(host: MockHost = MockHost()) throws -> OSCFixture {
        let f = try OSCFixture(host: host)
        let tone = (0..<4_800).map { Float(sin(Double($0) * 2 * Double.pi / 48)) * 0.5 }
        try f.engine.addBuffer(SampleBuffer(name: "tone", channels: [tone], sampleRate: 48_000))
        for name in ["a", "b"] {
            try f.engine.attach(
                .player, name: name,
                parameters: ["buffer": .string("tone"), "loop": .bool(true), "playing": .bool(true)])
            try f.engine.connect(name, to: "main")
        }
        try f.engine.set("b", "resumeAfterInterruption", to: .bool(false))
        #expect(f.client.command("/notify", [.int32(1)])?.address == "/done")
        return f
    }

    private func playing(_ f: OSCFixture, _ node: String) -> Bool {
        (try? f.engine.get(node, "playing")) == .bool(true)
    }

    private func state(_ f: OSCFixture) -> OSCArgument? {
        f.client.request("/session/state")?.arguments.first
    }

    @Test func aRigsInterruptionPausesAndResumes() throws {
        let f = try fixtureWithPlayers()
        #expect(state(f) == .string("active"))
        #expect(f.client.command("/session/interrupt", [.string("begin")])?.address == "/done")
        f.client.receive(timeout: 2) { $0.address == "/session/interruption" }
        #expect(f.client.take("/session/interruption").first?.arguments == [.string("began")])
        #expect(!playing(f, "a") && !playing(f, "b"))
        #expect(state(f) == .string("interrupted"))
        #expect(f.client.request("/status", reply: "/status.reply")?.arguments.last == .string("interrupted"))

        #expect(f.client.command("/session/interrupt", [.string("end")])?.address == "/done")
        f.client.receive(timeout: 2) { $0.address == "/session/interruption" }
        #expect(f.client.take("/session/interruption").first?.arguments == [.string("ended"), .int32(1)])
        #expect(playing(f, "a"), "a resumes")
        #expect(!playing(f, "b"), "b has resumeAfterInterruption false")
        #expect(state(f) == .string("active"))

        // Ended without shouldResume: nobody plays again.
        _ = f.client.command("/session/interrupt", [.string("begin")])
        _ = f.client.command("/session/interrupt", [.string("end"), .int32(0)])
        #expect(!playing(f, "a"))
    }

    /// Between the server's death and the control loop posting it, the host already says `server-lost`:
    /// the session must not read `active` beside it.
    @Test func aLostServerInterruptsTheSessionBeforeItsEventIsPosted() throws {
        let host = MockHost()
        let f = try OSCFixture(host: host)
        #expect(state(f) == .string("active"))
        host.state.withLock { $0 = "server-lost" }
        let status = try #require(f.client.request("/status", reply: "/status.reply"))
        #expect(status.arguments.first == .string("server-lost"))
        #expect(status.arguments.last == .string("interrupted"))
        #expect(state(f) == .string("interrupted"))
        host.state.withLock { $0 = "running" }
        #expect(state(f) == .string("active"))
    }

    @Test func badInterruptRequestsGetErrors() throws {
        let f = try fixtureWithPlayers()
        #expect(f.client.command("/session/interrupt", [.string("end")])?.errorCode == 61)
        #expect(f.client.command("/session/interrupt", [.string("start")])?.errorCode == 61)
        #expect(f.client.command("/session/interrupt")?.errorCode == 61)
        #expect(f.client.command("/session/interrupt", [.string("begin"), .int32(1)])?.errorCode == 61)
        #expect(f.client.command("/session/pauseOnRouteLoss", [.string("yes")])?.errorCode == 61)
        // The mock host cannot suspend.
        #expect(f.client.command("/session/suspend")?.errorCode == 69)
        #expect(playing(f, "a"), "a bad request changed nothing")
    }

    @Test func theServersLossIsAnInterruptionThatOverlapsARigsOwn() throws {
        let f = try fixtureWithPlayers()
        f.service.post(.serverLost(reason: "JACK server has been closed"))
        f.client.receive(timeout: 2) { $0.address == "/session/interruption" }
        #expect(f.client.take("/session/interruption").map(\.arguments) == [[.string("began")]])
        #expect(!playing(f, "a"))
        // A rig's interruption while the server is away: no second "began"; the server's return does
        // not end it.
        _ = f.client.command("/session/interrupt", [.string("begin")])
        f.service.post(.servicesReset(clientName: "soundstage", sampleRate: 48_000, bufferSize: 256))
        f.client.receive(timeout: 0.5)
        #expect(f.client.take("/session/interruption").isEmpty)
        #expect(!playing(f, "a"))
        _ = f.client.command("/session/interrupt", [.string("end")])
        f.client.receive(timeout: 2) { $0.address == "/session/interruption" }
        #expect(f.client.take("/session/interruption").map(\.arguments) == [[.string("ended"), .int32(1)]])
        #expect(playing(f, "a"))
    }

    /// `/patch/save` during an interruption writes the session it will resume: `a` playing (it resumes),
    /// `b` not (its resumeAfterInterruption is false), and the JACK connections the host will restore.
    @Test func aSaveDuringAnInterruptionWritesWhatItWillResume() throws {
        let host = MockHost()
        let f = try fixtureWithPlayers(host: host)
        #expect(f.client.command("/session/interrupt", [.string("begin")])?.address == "/done")
        host.pending.withLock { $0 = [("soundstage:out_1", "system:playback_1")] }
        #expect(f.client.command("/patch/save", [.string("during.yaml")])?.address == "/done")
        let saved = try PatchParser.parse(contentsOf: f.directory + "/during.yaml", names: .engine)
        let playing = saved.nodes.filter { node in node.params.contains { $0.key == "playing" } }.map(\.name)
        #expect(playing == ["a"])
        #expect(saved.jack.connections.map { "\($0.from)>\($0.to)" } == ["out_1>system:playback_1"])
        #expect(!self.playing(f, "a"), "the save changes nothing")
    }

    @Test func routeChangesReachSubscribersAndPauseOnRouteLossPauses() throws {
        let f = try fixtureWithPlayers()
        #expect(f.client.request("/session/pauseOnRouteLoss")?.arguments == [.int32(0)])
        f.service.post(
            .routeChanged(
                reason: "oldDeviceUnavailable", previous: ["system:playback_1"], current: [],
                outputsLostLastConnection: true))
        f.client.receive(timeout: 2) { $0.address == "/session/route_change" }
        #expect(
            f.client.take("/session/route_change").first?.arguments
                == [.string("oldDeviceUnavailable"), .string("system:playback_1"), .string("")])
        #expect(playing(f, "a"), "pauseOnRouteLoss is off by default")

        #expect(f.client.command("/session/pauseOnRouteLoss", [.int32(1)])?.address == "/done")
        #expect(sessionParameter(f, "pauseOnRouteLoss") == .int32(1))
        f.service.post(
            .routeChanged(
                reason: "oldDeviceUnavailable", previous: ["a:in", "b:in"], current: ["b:in"],
                outputsLostLastConnection: false))
        f.client.receive(timeout: 1) { $0.address == "/session/route_change" }
        #expect(playing(f, "a"), "the outputs still play somewhere")
        f.service.post(
            .routeChanged(
                reason: "oldDeviceUnavailable", previous: ["b:in"], current: [], outputsLostLastConnection: true))
        f.client.receive(timeout: 2) { $0.address == "/session/route_change" }
        _ = f.client.request("/sync", reply: "/synced")
        #expect(!playing(f, "a") && !playing(f, "b"))
    }

    @Test func preferredPeriodAndRateAreAskedOfTheHostAndAMismatchIsNamed() throws {
        let host = MockHost()
        let f = try OSCFixture(host: host)
        // 5 ms at 48 kHz is 240 frames: the nearest power of two is 256.
        let done = f.client.command("/session/preferredIOBufferDuration", [.float(0.005)])
        #expect(done?.arguments == [.string("/session/preferredIOBufferDuration"), .float(Float(256.0 / 48_000))])
        #expect(host.requestedPeriods.withLock { $0 } == [256])
        #expect(
            f.client.request("/session/preferredIOBufferDuration")?.arguments == [.float(Float(256.0 / 48_000))])
        #expect(f.client.command("/session/preferredIOBufferDuration", [.float(0)])?.errorCode == 61)
        #expect(f.client.command("/session/preferredIOBufferDuration", [.float(2)])?.errorCode == 61)
        #expect(host.requestedPeriods.withLock { $0 } == [256])

        #expect(f.client.command("/session/preferredSampleRate", [.float(48_000)])?.address == "/done")
        let mismatch = f.client.command("/session/preferredSampleRate", [.float(44_100)])
        #expect(mismatch?.errorCode == 69)
        #expect(mismatch?.arguments.last.flatMap { $0.stringValue }?.contains("48000 Hz, not 44100 Hz") == true)
        #expect(f.client.request("/session/preferredSampleRate")?.arguments == [.float(48_000)])
        #expect(f.client.command("/session/preferredSampleRate", [.float(1)])?.errorCode == 61)
        #expect(sessionParameter(f, "preferredSampleRate") == .float(44_100))
    }

    @Test func sharingSettingsAreSetReadAndRefusedWhenWrong() throws {
        let f = try OSCFixture()
        #expect(f.client.request("/session/category")?.arguments == [.string("soloAmbient")])
        let bogus = f.client.command("/session/category", [.string("loud")])
        #expect(bogus?.errorCode == 61)
        #expect(bogus?.arguments.last?.stringValue?.contains("playAndRecord") == true)
        // soloAmbient takes no mixing option; playback does, and a category change clears it.
        #expect(f.client.command("/session/mixWithOthers", [.int32(1)])?.errorCode == 14)
        #expect(f.client.command("/session/category", [.string("playback")])?.address == "/done")
        #expect(f.client.command("/session/mixWithOthers", [.int32(1)])?.address == "/done")
        #expect(sessionParameter(f, "mixWithOthers") == .int32(1))
        #expect(f.client.command("/session/category", [.string("record")])?.address == "/done")
        #expect(f.client.request("/session/mixWithOthers")?.arguments == [.int32(0)])
        #expect(f.client.command("/session/duckOthers", [.int32(1)])?.errorCode == 14)
        #expect(f.client.command("/session/duckLevel", [.float(6)])?.errorCode == 61)
        #expect(f.client.command("/session/duckLevel", [.float(-24)])?.address == "/done")
        #expect(f.client.request("/session/duckLevel")?.arguments == [.float(-24)])
        #expect(f.client.command("/session/mode", [.string("karaoke")])?.errorCode == 61)
        // Activation and deactivation show in the state; a session never activated plays as before.
        #expect(f.client.request("/session/state")?.arguments == [.string("active")])
        #expect(f.client.command("/session/activate")?.address == "/done")
        #expect(sessionParameter(f, "isActive") == .int32(1))
        #expect(f.client.command("/session/deactivate", [.int32(1)])?.address == "/done")
        #expect(f.client.request("/session/state")?.arguments == [.string("inactive")])
        #expect(f.client.command("/session/deactivate", [.string("x")])?.errorCode == 61)
    }

    @Test func measurementModeBypassesVoiceProcessorsAndChatModesTurnThemOn() throws {
        let f = try OSCFixture()
        try f.engine.attach(.voiceprocessor, name: "vp")
        func bypass() -> Bool? { (try? f.engine.get("vp", "bypass"))?.boolValue }
        #expect(bypass() == false)
        #expect(f.client.command("/session/mode", [.string("measurement")])?.address == "/done")
        #expect(bypass() == true)
        #expect(f.client.command("/session/mode", [.string("moviePlayback")])?.address == "/done")
        #expect(bypass() == true, "other modes leave the processors as they are")
        #expect(f.client.command("/session/mode", [.string("voiceChat")])?.address == "/done")
        #expect(bypass() == false)
        #expect(f.client.request("/session/mode")?.arguments == [.string("voiceChat")])
    }

    @Test func chatModesTurnVoiceProcessingOnBehindAnInputThatHadNone() throws {
        let f = try OSCFixture(inputs: 1)
        try f.engine.attach(.input, name: "mic", parameters: ["volume": .float(0.5)])
        // The voice goes to a send (a mixer that does not reach main), as to a chat program.
        try f.engine.attach(.mixer, name: "send")
        try f.engine.connect("mic", to: "send")
        #expect(try f.engine.get("mic", "voiceProcessing") == .bool(false))
        #expect(f.client.command("/session/mode", [.string("videoChat")])?.address == "/done")
        #expect(try f.engine.get("mic", "voiceProcessing") == .bool(true))
        #expect(try f.engine.get("mic", "bypass") == .bool(false))
        #expect(try f.engine.get("mic", "volume") == .float(0.5), "its parameters were lost")
        #expect(f.engine.connections().contains { $0.source == "mic" && $0.destination == "send" })
        // Measurement bypasses it; a chat mode again un-bypasses it without making it again.
        #expect(f.client.command("/session/mode", [.string("measurement")])?.address == "/done")
        #expect(try f.engine.get("mic", "bypass") == .bool(true))
        #expect(f.client.command("/session/mode", [.string("gameChat")])?.address == "/done")
        #expect(try f.engine.get("mic", "bypass") == .bool(false))
    }

    /// An input whose voice reaches main is left without voice processing by a chat mode: its processor
    /// would take the engine's output, its own voice in it, for echo and cancel the voice.
    @Test func chatModesLeaveAnInputWhoseVoiceReachesMain() throws {
        let f = try OSCFixture(inputs: 1)
        try f.engine.attach(.input, name: "mic")
        try f.engine.attach(.voiceprocessor, name: "vp", parameters: ["ports": .bool(false)])
        try f.engine.connect("mic", to: "vp:0")
        try f.engine.connect("vp", to: "main")
        #expect(f.client.command("/session/mode", [.string("voiceChat")])?.address == "/done")
        #expect(try f.engine.get("mic", "voiceProcessing") == .bool(false))
        #expect(try f.engine.get("vp", "bypass") == .bool(false))
    }

    /// A parameter's value in `/session/params`.
    private func sessionParameter(_ f: OSCFixture, _ name: String) -> OSCArgument? {
        let params = f.client.request("/session/params")?.arguments ?? []
        guard let index = params.firstIndex(of: .string(name)), index + 1 < params.count else { return nil }
        return params[index + 1]
    }
}

// liblo-tools as outside clients: `oscsend` (a fresh socket per message, never listening) drives the
// service, and `oscdump` is the reply URL registered with /notify, so everything a subscriber or a routed
// requester receives is read from oscdump's printed lines. Against an in-process service and against
// `soundstage run` on a private JACK server.
import AudioGraph
import DSPTestSupport
import Foundation
@testable import OSCControl
import Testing

@Suite(
    .requiresTool(
        "liblo-tools", OSCSend.isAvailable && OSCDump.isAvailable,
        "liblo-tools (oscsend, oscdump) is not installed"))
struct ExternalLibloToolsTests {
    @Test func oscsendChangesAreNotifiedToAnOscdumpSubscriber() throws {
        let f = try OSCFixture()
        let dump = try OSCDump()
        #expect(OSCSend.send(port: f.port, "/notify", "is", ["1", dump.url]).status == 0)
        let done = try #require(dump.waitFor { $0.address == "/done" })
        #expect(done.types == "sif" && done.arguments == ["/notify", "1", "10.000000"], Comment(rawValue: "\(done)"))

        OSCSend.send(port: f.port, "/node/new", "sssf", ["mixer", "m1", "outputVolume", "0.5"])
        let added = dump.waitFor { $0.address == "/node/added" }
        #expect(added?.types == "ss" && added?.arguments == ["m1", "mixer"])
        OSCSend.send(port: f.port, "/graph/connect", "ss", ["m1", "main"])
        #expect(dump.waitFor { $0.address == "/graph/connected" }?.arguments == ["m1:0", "main:0"])
        #expect(try f.engine.get("m1", "outputVolume") == .float(0.5))

        // A pattern from oscsend sets every match.
        OSCSend.send(port: f.port, "/node/*/volume", "f", ["0.25"])
        let applied = Self.waitUntil { (try? f.engine.get("m1", "volume")) == .float(0.25) }
        #expect(applied)

        OSCSend.send(port: f.port, "/node/free", "s", ["m1"])
        #expect(dump.waitFor { $0.address == "/node/removed" }?.arguments == ["m1"])
        #expect(dump.waitFor { $0.address == "/graph/disconnected" }?.arguments == ["m1:0", "main:0"])

        // oscsend over TCP reaches the same address space.
        #expect(OSCSend.send(port: f.port, "/node/new", "ss", ["mixer", "viaTCP"], tcp: true).status == 0)
        #expect(dump.waitFor { $0.address == "/node/added" && $0.arguments.first == "viaTCP" } != nil)

        // Unsubscribed: no more notifications.
        OSCSend.send(port: f.port, "/notify", "is", ["0", dump.url])
        Thread.sleep(forTimeInterval: 0.2)
        OSCSend.send(port: f.port, "/node/new", "ss", ["mixer", "after"])
        Thread.sleep(forTimeInterval: 0.5)
        #expect(dump.lines.allSatisfy { $0.arguments.first != "after" }, Comment(rawValue: dump.child.output))
    }

    @Test func repliesRoutedToOscdump() throws {
        let f = try OSCFixture(host: MockHost())
        let dump = try OSCDump()
        // The liblo test client registers oscdump as its reply URL: its requests are answered there.
        f.client.send("/notify", [.int32(1), .string(dump.url)])
        #expect(dump.waitFor { $0.address == "/done" && $0.arguments.first == "/notify" } != nil)
        f.client.send("/ping", [.int32(5), .string("x")])
        let pong = dump.waitFor { $0.address == "/pong" }
        #expect(pong?.types == "is" && pong?.arguments == ["5", "x"])
        f.client.send("/status")
        let status = dump.waitFor { $0.address == "/status.reply" }
        #expect(status?.types == "siifiissis")
        #expect(status?.arguments[0] == "running" && status?.arguments[1] == "48000" && status?.arguments[6] == "mock")
        f.client.send("/version")
        #expect(dump.waitFor { $0.address == "/version.reply" }?.arguments.first == "soundstage")
        f.client.send("/node/list")
        let reply = dump.waitFor { $0.address == "/reply" }
        #expect(reply?.arguments == ["/node/list"])
        #expect(dump.lines("/node/info").map { $0.arguments[0] } == ["main", "output"])
        f.client.send("/node/nobody/volume", [.float(1)])
        let error = dump.waitFor { $0.address == "/error" }
        #expect(
            error?.types == "sis" && error?.arguments.prefix(2) == ["/node/nobody/volume", "10"],
            Comment(rawValue: "\(String(describing: error))"))
        // Nothing reached the test client's own socket.
        f.client.receive(timeout: 0.2)
        #expect(f.client.takeAll().isEmpty)
    }

    @Test func oscsendRenewalsKeepTheLeaseAlive() throws {
        let f = try OSCFixture(lease: 0.8)
        let dump = try OSCDump()
        OSCSend.send(port: f.port, "/notify", "is", ["1", dump.url])
        #expect(dump.waitFor { $0.address == "/done" } != nil)
        // Renewed by URL from fresh oscsend sockets for three leases.
        let start = Date()
        while Date().timeIntervalSince(start) < 2.4 {
            OSCSend.send(port: f.port, "/renew", "s", [dump.url])
            Thread.sleep(forTimeInterval: 0.25)
        }
        try f.engine.attach(.mixer, name: "renewed")
        #expect(dump.waitFor { $0.address == "/node/added" && $0.arguments.first == "renewed" } != nil)
        // Not renewed any more: after the lease nothing arrives.
        Thread.sleep(forTimeInterval: 1.3)
        try f.engine.attach(.mixer, name: "expired")
        Thread.sleep(forTimeInterval: 0.6)
        #expect(dump.lines.allSatisfy { $0.arguments.first != "expired" }, Comment(rawValue: dump.child.output))
    }

    @Test func metersArriveAtOscdump() throws {
        let f = try OSCFixture()
        let dc = [Array(repeating: Float(0.5), count: 4800)]
        try f.engine.addBuffer(SampleBuffer(name: "dc", channels: dc, sampleRate: 48_000))
        try f.engine.attach(
            .player, name: "p",
            parameters: [
                "buffer": .string("dc"), "loop": .bool(true),
                "playing": .bool(true), "pan": .float(-1)
            ])
        try f.engine.connect("p", to: "main")
        let dump = try OSCDump()
        OSCSend.send(port: f.port, "/notify", "is", ["1", dump.url])
        OSCSend.send(port: f.port, "/meters", "iss", ["50", dump.url, "p"])
        Thread.sleep(forTimeInterval: 0.6)
        OSCSend.send(port: f.port, "/meters", "is", ["0", dump.url])
        let meters = dump.lines("/meter")
        #expect(meters.count >= 5, Comment(rawValue: dump.child.output))
        // A mono player: one peak and one RMS, both 20·log10(0.5) = −6.02 dBFS once it runs.
        let last = try #require(meters.last)
        #expect(last.types == "siff" && last.arguments[0] == "p" && last.arguments[1] == "1")
        for value in last.arguments[2...] {
            #expect(abs((Double(value) ?? 0) + 6.0206) < 0.01, Comment(rawValue: "\(last)"))
        }
    }

    static func waitUntil(timeout: Double = 2, _ condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        repeat {
            if condition() { return true }
            usleep(20_000)
        } while Date() < deadline
        return false
    }
}

extension OSCExternalSerialSuites {
    /// The same tools against `soundstage run` on a private JACK server (serialized with the other JACK
    /// tests).
    @Suite(
        .requiresTool(
            "liblo-tools", OSCSend.isAvailable && OSCDump.isAvailable,
            "liblo-tools (oscsend, oscdump) is not installed"))
    struct ExternalLibloToolsRunTests {
        @Test(
            .needsJackAndSoundstage,
            .timeLimit(.minutes(1)))
        func oscsendDrivesSoundstageRun() throws {
            let server = try DummyJackServer()
            let folder = NSTemporaryDirectory() + "osct-oscsend-\(UUID().uuidString)"
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: folder) }
            let patch = folder + "/two-clicks.yaml"
            try ExternalPatches.twoClicks.write(toFile: patch, atomically: true, encoding: .utf8)
            let run = try SoundstageRun(patch: patch, server: server, clientName: "ss_oscsend")
            let dump = try OSCDump()
            OSCSend.send(port: run.port, "/notify", "is", ["1", dump.url])
            #expect(dump.waitFor { $0.address == "/done" } != nil, Comment(rawValue: run.child.output))

            // A player plays its click to the end: finished (completed 1) and consumed.
            OSCSend.send(port: run.port, "/node/a/play")
            let finished = dump.waitFor { $0.address == "/player/finished" }
            #expect(finished?.types == "sih" && finished?.arguments.prefix(2) == ["a", "1"])
            #expect(dump.waitFor { $0.address == "/buffer/consumed" }?.arguments.prefix(2) == ["a", "click"])

            // A JACK connection of our own port, made over OSC, is visible to jack_lsp.
            OSCSend.send(port: run.port, "/graph/connect", "ss", [run.outputPort(1), "system:playback_1"])
            let connected = ExternalLibloToolsTests.waitUntil(timeout: 3) {
                server.isConnected(run.outputPort(1), to: "system:playback_1")
            }
            #expect(connected, Comment(rawValue: server.connections()))

            // /quit from oscsend stops soundstage run cleanly.
            OSCSend.send(port: run.port, "/quit")
            #expect(run.child.waitForExit(timeout: 10) == 0, Comment(rawValue: run.child.output))
        }
    }
}

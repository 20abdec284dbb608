// /sched/list, /sched/cancel and /clearSched over real liblo sockets: what waits is listed in the order it
// will run, and a cancelled bundle's change never happens (checked on the parameter and on the sound).
import AudioGraph
import CLibLo
import Foundation
@testable import OSCControl
import Testing

@Suite struct OSCScheduleListTests {
    /// `/sched/list`'s `/sched/info` messages (and the `/reply` that ends them).
    private func list(_ client: OSCTestClient) -> [OSCMessage] {
        client.send("/sched/list")
        client.receive(timeout: 3) { $0.address == "/reply" && $0.arguments == [.string("/sched/list")] }
        #expect(client.take("/reply").last?.arguments == [.string("/sched/list")])
        return client.take("/sched/info")
    }

    private func key(_ client: OSCTestClient) -> String { "udp:127.0.0.1:\(lo_server_get_port(client.server))" }

    private func mixers(_ f: OSCFixture, _ names: [String]) {
        for name in names {
            #expect(f.client.command("/node/new", [.string("mixer"), .string(name)])?.address == "/done")
        }
    }

    @Test func waitingBundlesAreListedInTheOrderTheyWillRun() throws {
        let f = try OSCFixture()
        mixers(f, ["m1", "m2", "m3"])
        let other = OSCTestClient(port: f.port)
        let now = OSCTimetag.now()
        let late = now.adding(seconds: 30)
        let soon = now.adding(seconds: 20)
        f.client.sendBundle(late, [OSCMessage("/node/m1/outputVolume", [.float(0.25)])])
        Thread.sleep(forTimeInterval: 0.05)
        other.sendBundle(
            soon, [OSCMessage("/node/m2/outputVolume", [.float(0.5)])],
            nested: [(soon.adding(seconds: 1), [OSCMessage("/node/m3/outputVolume", [.float(0.5)])])])
        Thread.sleep(forTimeInterval: 0.05)
        // Same time tag as the first: runs after it (arrival order).
        f.client.sendBundle(late, [OSCMessage("/node/m2/outputVolume", [.float(0.75)])])
        let infos = list(f.client)
        #expect(infos.map(\.arguments.first) == [.int32(2), .int32(1), .int32(3)])
        let first = try #require(infos.first)
        #expect(Array(first.arguments[0...1]) == [.int32(2), .timetag(soon)])
        if case .float(let ahead) = first.arguments[2] { #expect(ahead > 19 && ahead <= 20, "\(ahead)") }
        #expect(
            Array(first.arguments[3...]) == [.int32(2), .string("/node/m2/outputVolume"), .string(key(other))])
        #expect(
            Array(infos[1].arguments[3...]) == [.int32(1), .string("/node/m1/outputVolume"), .string(key(f.client))])
        #expect(infos[2].arguments[1] == .timetag(late))
        // Anyone may cancel anyone's: this client cancels the other's.
        #expect(f.client.command("/sched/cancel", [.int32(2)])?.arguments == [.string("/sched/cancel"), .int32(2)])
        #expect(list(f.client).map(\.arguments.first) == [.int32(1), .int32(3)])
        #expect(other.command("/clearSched")?.arguments == [.string("/clearSched"), .int32(2)])
        #expect(list(other).isEmpty)
        #expect(f.client.takeErrors().isEmpty && other.takeErrors().isEmpty)
    }

    @Test func aCancelledBundleNeverApplies() throws {
        let f = try OSCFixture()
        mixers(f, ["kept", "dropped"])
        let t = OSCTimetag.now().adding(seconds: 0.5)
        f.client.sendBundle(t, [OSCMessage("/node/dropped/outputVolume", [.float(0.25)])])
        f.client.sendBundle(t, [OSCMessage("/node/kept/outputVolume", [.float(0.75)])])
        #expect(f.client.command("/sched/cancel", [.int32(1)])?.arguments == [.string("/sched/cancel"), .int32(1)])
        Thread.sleep(forTimeInterval: 0.8)
        #expect(try f.engine.get("kept", "outputVolume") == .float(0.75))
        #expect(try f.engine.get("dropped", "outputVolume") == .float(1))
        // Released to the engine now: no longer waiting, so it cannot be cancelled.
        let released = f.client.command("/sched/cancel", [.int32(2)])
        #expect(released?.errorCode == 72)
        if case .string(let message) = released?.arguments.last {
            #expect(message.contains("no longer waiting"), "\(message)")
        }
        #expect(f.client.takeErrors().isEmpty)
    }

    /// A player's time-tagged start, cleared with `/clearSched`, is never heard.
    @Test func clearSchedSilencesAScheduledStart() throws {
        let f = try OSCFixture()
        try f.engine.addBuffer(
            SampleBuffer(name: "b", channels: [Array(repeating: Float(1), count: 4800)], sampleRate: 48_000))
        for name in ["p", "q"] {
            #expect(
                f.client.command("/node/new", [.string("player"), .string(name), .string("buffer"), .string("b")])?
                    .address == "/done")
            #expect(f.client.command("/graph/connect", [.string(name), .string("main")])?.address == "/done")
        }
        Thread.sleep(forTimeInterval: 0.1)
        let from = f.renderer.frameCount
        let t = OSCTimetag.now().adding(seconds: 0.4)
        f.client.sendBundle(t, [OSCMessage("/node/p/play")])
        f.client.sendBundle(t.adding(seconds: 0.1), [OSCMessage("/node/q/play")])
        #expect(f.client.command("/clearSched")?.arguments == [.string("/clearSched"), .int32(2)])
        Thread.sleep(forTimeInterval: 0.8)
        #expect(f.renderer.frameCount - from > 24_000, "the render thread kept running")
        #expect(f.renderer.onset(channel: 0, from: from, threshold: 0.01) == nil)
        #expect(f.renderer.onset(channel: 1, from: from, threshold: 0.01) == nil)
        #expect(f.client.request("/node/p/playing")?.arguments == [.bool(false)])
        // The same bundle not cleared plays.
        f.client.sendBundle(OSCTimetag.now().adding(seconds: 0.2), [OSCMessage("/node/p/play")])
        Thread.sleep(forTimeInterval: 0.5)
        #expect(f.renderer.onset(channel: 0, from: from, threshold: 0.01) != nil)
        #expect(f.client.takeErrors().isEmpty)
    }

    /// Cancelling is all or nothing; ids must be waiting, given once, and 1 or more.
    @Test func badCancelsChangeNothing() throws {
        let f = try OSCFixture()
        mixers(f, ["m"])
        let t = OSCTimetag.now().adding(seconds: 20)
        f.client.sendBundle(t, [OSCMessage("/node/m/outputVolume", [.float(0.5)])])
        let cases: [([OSCArgument], Int32, String)] = [
            ([.int32(1), .int32(99)], 72, "never scheduled"),
            ([], 61, ""),
            ([.string("1")], 61, ""),
            ([.int32(0)], 61, "bundle ids are 1…"),
            ([.int32(1), .int32(1)], 61, "given twice"),
            ([.int64(1 << 40)], 61, "bundle ids are 1…")
        ]
        for (arguments, code, text) in cases {
            let outcome = f.client.command("/sched/cancel", arguments)
            #expect(outcome?.errorCode == code, "\(arguments): \(String(describing: outcome))")
            if !text.isEmpty, case .string(let message) = outcome?.arguments.last {
                #expect(message.contains(text), "\(message)")
            }
        }
        #expect(f.client.command("/clearSched", [.int32(1)])?.errorCode == 61)
        #expect(f.client.request("/sched/list", [.int32(1)], reply: "/error")?.errorCode == 61)
        #expect(list(f.client).map(\.arguments.first) == [.int32(1)])
        #expect(f.client.command("/sched/cancel", [.int64(1)])?.arguments == [.string("/sched/cancel"), .int32(1)])
    }

    /// Many waiting bundles come back complete, packed several to a datagram.
    @Test func aLongListArrivesWhole() throws {
        let f = try OSCFixture()
        mixers(f, ["m"])
        let count = 600
        let base = OSCTimetag.now().adding(seconds: 60)
        for i in 0..<count {
            // Sent latest first: the list comes back earliest first.
            f.client.sendBundle(
                base.adding(seconds: Double(count - i)), [OSCMessage("/node/m/outputVolume", [.float(0.5)])])
            if i % 50 == 49 { _ = f.client.request("/ping", [.int32(Int32(i))], reply: "/pong") }
        }
        f.client.send("/sched/list")
        f.client.receive(timeout: 5) { $0.address == "/reply" }
        let received = f.client.takeAll().filter { $0.message.address == "/sched/info" }
        #expect(received.map(\.message.arguments.first) == (1...count).reversed().map { .int32(Int32($0)) })
        #expect(received.allSatisfy { $0.isBundle && $0.datagramSize <= 4000 })
        #expect(f.client.command("/clearSched")?.arguments == [.string("/clearSched"), .int32(Int32(count))])
    }
}

/// `/node/kinds` and the ranges `/node/<name>/params` gives.
@Suite struct OSCNodeDiscoveryTests {
    @Test func nodeKindsListsWhatNodeNewMakes() throws {
        let f = try OSCFixture()
        let kinds = try #require(f.client.request("/node/kinds")).arguments
        #expect(kinds == NodeKind.creatableKinds.filter { $0 != .input }.map { .string($0.rawValue) })
        for case .string(let kind) in kinds {
            let done = f.client.command("/node/new", [.string(kind), .string("new_\(kind)")])
            #expect(done?.address == "/done", "\(kind): \(String(describing: done))")
        }
        // The kinds left out are the ones /node/new refuses here.
        #expect(f.client.command("/node/new", [.string("input"), .string("i")])?.errorCode == 14)
        #expect(f.client.command("/node/new", [.string("output"), .string("o")])?.errorCode == 14)
        #expect(f.client.request("/node/kinds", [.int32(1)], reply: "/error")?.errorCode == 61)
        let withCapture = try OSCFixture(inputs: 2)
        let all = try #require(withCapture.client.request("/node/kinds")).arguments
        #expect(all == NodeKind.creatableKinds.map { .string($0.rawValue) })
        #expect(withCapture.client.command("/node/new", [.string("input"), .string("i")])?.address == "/done")
    }

    @Test func aChoiceParameterGivesItsIndexRangeAndValues() throws {
        let f = try OSCFixture()
        #expect(f.client.command("/node/new", [.string("environment"), .string("env")])?.address == "/done")
        f.client.send("/node/env/params")
        f.client.receive(timeout: 3) { $0.address == "/reply" }
        let params = f.client.take("/node/env/param")
        let spec = try #require(NodeKind.environment.parameters.first { $0.name == "reverbPreset" })
        let preset = try #require(params.first { $0.arguments[0] == .string("reverbPreset") })
        let last = Int32(spec.choices.count - 1)
        #expect(Array(preset.arguments[1...4]) == [.string("string"), .string(""), .int32(0), .int32(last)])
        #expect(preset.arguments[7] == .string("choice"))
        #expect(Array(preset.arguments[8...]) == spec.choices.map { .string($0) })
        // The range is the one a set is checked against: the last index is taken, one more is refused.
        f.client.send("/node/env/reverbPreset", [.int32(last)])
        #expect(f.client.request("/node/env/reverbPreset")?.arguments == [.string(spec.choices.last!)])
        #expect(f.client.request("/node/env/reverbPreset", [.int32(last + 1)], reply: "/error")?.errorCode == 22)
        // An environment's layout is a choice given at creation.
        let layout = try #require(params.first { $0.arguments[0] == .string("layout") })
        #expect(layout.arguments[7] == .string("creation,choice"))
    }

    @Test func anIntParameterGivesItsTrueBounds() throws {
        let f = try OSCFixture()
        #expect(f.client.command("/node/new", [.string("audioplayer"), .string("a")])?.address == "/done")
        f.client.send("/node/a/params")
        f.client.receive(timeout: 3) { $0.address == "/reply" }
        let params = f.client.take("/node/a/param")
        let loops = try #require(params.first { $0.arguments[0] == .string("numberOfLoops") })
        #expect(Array(loops.arguments[1...4]) == [.string("int"), .string("loops"), .int32(.min), .int32(.max)])
        f.client.send("/node/a/numberOfLoops", [.int32(.min)])
        #expect(f.client.request("/node/a/numberOfLoops")?.arguments == [.int32(.min)])
        let file = try #require(params.first { $0.arguments[0] == .string("file") })
        #expect(file.arguments[7] == .string("file"))
        #expect(f.client.takeErrors().isEmpty)
    }
}

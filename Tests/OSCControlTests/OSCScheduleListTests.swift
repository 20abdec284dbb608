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
        client.receive(timeout: 3) { $0.address == "/reply" && $0.arguments.first == .string("/sched/list") }
        let infos = client.take("/sched/info")
        let count = Int32(infos.count)
        #expect(
            client.take("/reply").last?.arguments == [.string("/sched/list"), .int32(0), .int32(count), .int32(count)])
        return infos
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
        #expect(list(f.client).map(\.arguments.first) == [.int32(1)])
        #expect(f.client.command("/sched/cancel", [.int64(1)])?.arguments == [.string("/sched/cancel"), .int32(1)])
    }

    /// A TCP client's bundle is listed under its connection, and the list comes back on the connection.
    @Test func aTCPClientListsOnItsConnection() throws {
        let f = try OSCFixture()
        mixers(f, ["m"])
        let connection = try TCPConnection(port: f.port)
        let t = OSCTimetag.now().adding(seconds: 20)
        try connection.send(.bundle(t, [.message(OSCMessage("/node/m/outputVolume", [.float(0.5)]))]))
        try connection.send(.message(OSCMessage("/sched/list")))
        guard case .bundle(_, let elements) = try connection.receive(timeout: 3),
            case .message(let info) = elements.first
        else {
            Issue.record("no /sched/info bundle")
            return
        }
        #expect(Array(info.arguments[0...1]) == [.int32(1), .timetag(t)])
        if case .string(let sender) = info.arguments.last { #expect(sender.hasPrefix("tcp:127.0.0.1:"), "\(sender)") }
        #expect(
            try connection.receive(timeout: 3)
                == .message(OSCMessage("/reply", [.string("/sched/list"), .int32(0), .int32(1), .int32(1)])))
        try connection.send(.message(OSCMessage("/clearSched")))
        #expect(
            try connection.receive(timeout: 3) == .message(OSCMessage("/done", [.string("/clearSched"), .int32(1)])))
    }

    /// A full scheduler (4096 bundles) is listed whole, page by page, in time order; each page arrives
    /// complete, packed several to a datagram.
    @Test func aFullScheduleIsListedPageByPage() throws {
        let f = try OSCFixture()
        mixers(f, ["m"])
        let count = 4096
        let base = OSCTimetag.now().adding(seconds: 60)
        for i in 0..<count {
            // Sent latest first: the list comes back earliest first.
            f.client.sendBundle(
                base.adding(seconds: Double(count - i) / 10), [OSCMessage("/node/m/outputVolume", [.float(0.5)])])
            if i % 100 == 99 { _ = f.client.request("/ping", [.int32(Int32(i))], reply: "/pong") }
        }
        f.client.sendBundle(base, [OSCMessage("/node/m/outputVolume", [.float(0.5)])])
        f.client.receive(timeout: 3) { $0.address == "/error" }
        #expect(f.client.takeErrors().map(\.errorCode) == [71])
        var ids: [Int32] = []
        var pages = 0
        var slowest = 0.0
        while pages < 40 {
            let started = Date()
            f.client.send("/sched/list", [.int32(Int32(ids.count))])
            f.client.receive(timeout: 5) { $0.address == "/reply" }
            slowest = max(slowest, Date().timeIntervalSince(started))
            let records = f.client.takeAll()
            let infos = records.filter { $0.message.address == "/sched/info" }
            #expect(infos.allSatisfy { $0.isBundle && $0.datagramSize <= 4000 })
            let end = try #require(records.last { $0.message.address == "/reply" }).message
            #expect(
                end.arguments == [
                    .string("/sched/list"), .int32(Int32(ids.count)), .int32(Int32(infos.count)), .int32(Int32(count))
                ])
            pages += 1
            if infos.isEmpty { break }
            ids += infos.compactMap { if case .int32(let id) = $0.message.arguments[0] { id } else { nil } }
        }
        #expect(pages == count / OSCServiceCore.schedListPage + 1)
        #expect(ids.count == count && ids == (1...Int32(count)).reversed(), "\(ids.count) ids")
        print("/sched/list: \(pages) pages, the slowest answered in \(Int(slowest * 1000)) ms")
        // A client that reads fast may take more at once.
        f.client.send("/sched/list", [.int32(4000), .int32(4096)])
        f.client.receive(timeout: 5) { $0.address == "/reply" }
        #expect(f.client.take("/sched/info").count == 96)
        #expect(f.client.command("/clearSched")?.arguments == [.string("/clearSched"), .int32(Int32(count))])
    }

    @Test func badListArgumentsAreRefused() throws {
        let f = try OSCFixture()
        for arguments: [OSCArgument] in [
            [.int32(-1)], [.int32(0), .int32(0)], [.int32(0), .int32(4097)], [.string("a")]
        ] {
            let outcome = f.client.request("/sched/list", arguments, reply: "/error")
            #expect(outcome?.errorCode == 61, "\(arguments): \(String(describing: outcome))")
        }
        #expect(
            f.client.request("/sched/list", [.int32(5)], reply: "/reply")?.arguments == [
                .string("/sched/list"), .int32(5), .int32(0), .int32(0)
            ])
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

// /node/*: create, list, free, set and get with coercion, parameter listings, and engine error codes.
import AudioGraph
import Foundation
@testable import OSCControl
import Testing

@Suite struct OSCNodeTests {
    @Test func createListAndFree() throws {
        let f = try OSCFixture()
        let done = f.client.command(
            "/node/new", [.string("mixer"), .string("sub"), .string("outputVolume"), .float(0.5)])
        #expect(done?.arguments == [.string("/node/new"), .string("sub")])
        #expect(try f.engine.get("sub", "outputVolume") == .float(0.5))
        f.client.send("/node/list")
        f.client.receive(timeout: 3) { $0.address == "/reply" }
        let infos = f.client.take("/node/info")
        #expect(infos.map { $0.arguments[0] } == [.string("main"), .string("output"), .string("sub")])
        #expect(infos[2].arguments == [.string("sub"), .string("mixer"), .int32(2), .int32(0)])
        #expect(f.client.take("/reply").first?.arguments == [.string("/node/list")])
        #expect(f.client.command("/node/free", [.string("sub")])?.arguments == [.string("/node/free"), .string("sub")])
        #expect(!f.engine.nodes().contains { $0.name == "sub" })
    }

    /// Freeing several nodes is all or nothing: one bad name frees none of them and gets one /error.
    @Test func freeingSeveralNodesIsAllOrNothing() throws {
        let f = try OSCFixture()
        for name in ["rv1", "m1"] {
            _ = f.client.command("/node/new", [.string(name == "rv1" ? "reverb" : "mixer"), .string(name)])
        }
        func attempt(_ names: [String]) -> [OSCMessage] {
            f.client.send("/node/free", names.map { .string($0) })
            f.client.receive(timeout: 2) { $0.address == "/error" }
            return f.client.takeErrors()
        }
        #expect(attempt(["rv1", "ghost", "m1"]).map(\.errorCode) == [10])
        #expect(attempt(["rv1", "main"]).map(\.errorCode) == [14])
        #expect(attempt(["m1", "m1"]).map(\.errorCode) == [11])
        #expect(Set(f.engine.nodes().map(\.name)).isSuperset(of: ["rv1", "m1"]), "a failed /node/free removed nodes")
        f.client.send("/node/free", [.string("rv1"), .string("m1")])
        f.client.receive(timeout: 3) {
            $0.address == "/error" || $0.arguments == [.string("/node/free"), .string("m1")]
        }
        #expect(!f.engine.nodes().contains { $0.name == "rv1" || $0.name == "m1" })
        #expect(f.client.takeErrors().isEmpty)
    }

    @Test func setAndGetOnTheSameAddress() throws {
        let f = try OSCFixture()
        _ = f.client.command("/node/new", [.string("player"), .string("p1")])
        f.client.send("/node/p1/volume", [.float(0.25)])
        let reply = f.client.request("/node/p1/volume")
        #expect(reply?.arguments == [.float(0.25)])
        #expect(f.client.takeErrors().isEmpty)
    }

    @Test func numbersAndBooleansAreCoerced() throws {
        let f = try OSCFixture()
        _ = f.client.command("/node/new", [.string("player"), .string("p1")])
        f.client.send("/node/p1/volume", [.int32(0)])  // i → float parameter
        f.client.send("/node/p1/pan", [.double(-0.5)])  // d → float
        f.client.send("/node/p1/start", [.float(480)])  // whole f → int parameter
        f.client.send("/node/p1/frames", [.int64(960)])  // h → int
        f.client.send("/node/p1/loop", [.bool(true)])  // T
        #expect(f.client.request("/node/p1/loop")?.arguments == [.bool(true)])
        f.client.send("/node/p1/loop", [.int32(0)])  // 0 → false
        #expect(f.client.request("/node/p1/loop")?.arguments == [.bool(false)])
        f.client.send("/node/p1/loop", [.float(1)])  // 1.0 → true
        #expect(f.client.request("/node/p1/loop")?.arguments == [.bool(true)])
        #expect(f.client.request("/node/p1/volume")?.arguments == [.float(0)])
        #expect(f.client.request("/node/p1/pan")?.arguments == [.float(-0.5)])
        #expect(f.client.request("/node/p1/start")?.arguments == [.int32(480)])
        #expect(f.client.request("/node/p1/frames")?.arguments == [.int32(960)])
        #expect(f.client.takeErrors().isEmpty)
    }

    @Test func engineErrorsKeepTheirCodes() throws {
        let f = try OSCFixture()
        _ = f.client.command("/node/new", [.string("player"), .string("p1")])
        func code(_ address: String, _ arguments: [OSCArgument] = []) -> Int32? {
            f.client.send(address, arguments)
            f.client.receive(timeout: 2) { $0.address == "/error" }
            return f.client.takeErrors().first?.errorCode
        }
        #expect(code("/node/ghost/volume", [.float(0.5)]) == 10)
        #expect(code("/node/new", [.string("player"), .string("p1")]) == 11)
        #expect(code("/node/new", [.string("player"), .string("bad name")]) == 12)
        #expect(code("/node/new", [.string("theremin"), .string("x")]) == 13)
        #expect(code("/node/free", [.string("main")]) == 14)
        // The fixture's engine has no capture channels: an input node would hear nothing.
        #expect(f.engine.configuration.inputChannelCount == 0)
        #expect(code("/node/new", [.string("input"), .string("mic")]) == 14)
        // An audioplayer plays its own file or buffer: items queued on it would never play.
        try f.engine.addBuffer(SampleBuffer(name: "b", channels: [[0.1, 0.2]], sampleRate: 48_000))
        _ = f.client.command("/node/new", [.string("audioplayer"), .string("ap")])
        #expect(code("/node/ap/enqueue", [.string("b")]) == 14)
        #expect(code("/node/p1/color", [.float(1)]) == 20)
        #expect(code("/node/p1/volume", [.string("loud")]) == 21)
        #expect(code("/node/p1/start", [.float(1.5)]) == 21)
        #expect(code("/node/p1/loop", [.int32(2)]) == 21)
        #expect(code("/node/p1/volume", [.float(1.5)]) == 22)
        #expect(code("/node/p1/channels", [.int32(1)]) == 23)
        #expect(code("/node/p1/volume", [.blob([1])]) == 21)
        #expect(code("/node/p1/volume", [.float(1), .float(1)]) == 61)
        #expect(try f.engine.get("p1", "volume") == .float(1))
    }

    @Test func paramsListsEveryParameter() throws {
        let f = try OSCFixture()
        _ = f.client.command("/node/new", [.string("player"), .string("p1"), .string("volume"), .float(0.5)])
        f.client.send("/node/p1/params")
        f.client.receive(timeout: 3) { $0.address == "/reply" }
        let params = f.client.take("/node/p1/param")
        #expect(params.map { $0.arguments[0] } == NodeKind.player.parameters.map { .string($0.name) })
        let volume = try #require(params.first)
        #expect(
            volume.arguments == [
                .string("volume"), .string("float"), .string("linear"), .float(0), .float(1),
                .float(1), .float(0.5), .string("smoothed")
            ])
        let channels = try #require(params.last)
        #expect(channels.arguments.last == .string("readonly"))
        // An int's bounds come as ints (2147483647, not the float 2147483648.0).
        let start = try #require(params.first { $0.arguments[0] == .string("start") })
        #expect(Array(start.arguments[3...4]) == [.int32(0), .int32(Int32.max)])
        // A choice parameter lists its values after the flags; its range is the indexes a set takes.
        let algorithm = try #require(params.first { $0.arguments[0] == .string("renderingAlgorithm") })
        let spec = try #require(NodeKind.player.parameters.first { $0.name == "renderingAlgorithm" })
        #expect(!spec.choices.isEmpty)
        #expect(Array(algorithm.arguments[3...4]) == [.int32(0), .int32(Int32(spec.choices.count - 1))])
        #expect(Array(algorithm.arguments[8...]) == spec.choices.map { .string($0) })
        #expect(f.client.take("/reply").first?.arguments == [.string("/node/p1/params")])
    }

    @Test func nodeNewWithFileDecodesOffTheOSCThread() throws {
        let f = try OSCFixture()
        let path = try f.writeWAV(
            "a.wav", channels: [Array(repeating: 0.1, count: 480), Array(repeating: 0.2, count: 480)])
        let done = f.client.command("/node/new", [.string("player"), .string("p"), .string("file"), .string(path)])
        #expect(done?.address == "/done")
        #expect(try f.engine.get("p", "channels") == .int(2))
        #expect(
            f.client.command("/node/new", [.string("player"), .string("q"), .string("file"), .string("/etc/passwd")])?
                .errorCode == 64)
    }
}

/// Time effects over OSC: created, listed with their parameters, and refused where they cannot run.
@Suite struct OSCTimeEffectTests {
    @Test func timeEffectsAreCreatedSetAndRefusedWithReasons() throws {
        let f = try OSCFixture()
        #expect(
            f.client.command("/node/new", [.string("timepitch"), .string("tp"), .string("pitch"), .float(700)])?.address
                == "/done")
        #expect(f.client.command("/node/new", [.string("varispeed"), .string("vs")])?.address == "/done")
        f.client.send("/node/vs/rate", [.float(1.5)])
        #expect(f.client.request("/node/vs/rate")?.arguments == [.float(1.5)])
        #expect(f.client.request("/node/tp/pitch")?.arguments == [.float(700)])
        let outOfRange = f.client.request("/node/vs/rate", [.float(8)], reply: "/error")
        #expect(outOfRange?.errorCode == 22, "\(String(describing: outOfRange))")
        _ = f.client.command("/node/new", [.string("player"), .string("p")])
        #expect(f.client.command("/graph/connect", [.string("p"), .string("tp")])?.address == "/done")
        let shared = f.client.command("/graph/connect", [.string("p"), .string("main")])
        #expect(shared?.errorCode == 14, "\(String(describing: shared))")
        #expect(
            f.client.command("/graph/connect", [.string("tp"), .string("vs")])?.address == "/done",
            "a time effect may feed another")
        #expect(f.client.command("/graph/connect", [.string("vs"), .string("main")])?.address == "/done")
        #expect(f.client.command("/node/tp/reset")?.address == "/done")
        // overlap: only AVAudioUnitTimePitch's default is accepted (Rubber Band has no overlap setting).
        f.client.send("/node/tp/overlap", [.float(8)])
        #expect(f.client.request("/node/tp/overlap")?.arguments == [.float(8)])
        let overlap = f.client.request("/node/tp/overlap", [.float(16)], reply: "/error")
        #expect(
            overlap?.arguments == [
                .string("/node/tp/overlap"), .int32(22),
                .string(
                    "tp.overlap = 16.0 is refused: only the default 8 is accepted; Rubber Band R3, which does the stretching, "
                        + "has no overlap setting, so AVAudioUnitTimePitch's other values (3…32) are refused rather than ignored"
                )
            ])
        #expect(try f.engine.get("tp", "overlap") == .float(8))
        // Its exact insert latency is a read-only parameter, listed by /params with the kernel's figure.
        f.client.send("/node/tp/params")
        f.client.receive(timeout: 3) { $0.address == "/reply" }
        let latency = try #require(f.client.take("/node/tp/param").first { $0.arguments[0] == .string("latency") })
        guard case .int(let frames) = try f.engine.get("tp", "latency") else { Issue.record("no latency"); return }
        #expect(frames > 0 && latency.arguments[6] == .int32(Int32(frames)))
        #expect(latency.arguments[7] == .string("readonly"))
    }
}

/// The 3D addresses: vectors in one message, orientation in both forms, errors for bad ones.
@Suite struct OSCSpatialTests {
    @Test func sourcesAndTheListenerMoveWithVectorAddresses() throws {
        let f = try OSCFixture()
        #expect(f.client.command("/node/new", [.string("environment"), .string("env")])?.address == "/done")
        #expect(f.client.command("/node/new", [.string("player"), .string("src")])?.address == "/done")
        #expect(f.client.command("/graph/connect", [.string("src"), .string("env")])?.address == "/done")
        f.client.send("/node/src/position", [.float(1), .int32(2), .float(-3)])
        #expect(f.client.request("/node/src/position")?.arguments == [.float(1), .float(2), .float(-3)])
        f.client.send("/node/env/listener/position", [.float(0), .float(1.5), .float(0)])
        #expect(f.client.request("/sync", [.int32(1)], reply: "/synced") != nil)
        #expect(try f.engine.get("env", "listenerY") == .float(1.5))
        f.client.send(
            "/node/env/listener/orientation", [.float(0), .float(0), .float(1), .float(0), .float(1), .float(0)])
        let angles = try #require(f.client.request("/node/env/listener/orientation"))
        if case .float(let yaw) = angles.arguments.first { #expect(abs(abs(yaw) - 180) < 1e-3, "yaw \(yaw)") }
        let parallel = f.client.request(
            "/node/env/listener/orientation",
            [.float(0), .float(1), .float(0), .float(0), .float(2), .float(0)], reply: "/error")
        #expect(parallel?.errorCode == 22)
        let short = f.client.request("/node/src/velocity", [.float(1), .float(2)], reply: "/error")
        #expect(short?.errorCode == 61)
        let tooFar = f.client.request("/node/src/position", [.float(2e6), .float(0), .float(0)], reply: "/error")
        #expect(tooFar?.errorCode == 22)
        let notAnEnvironment = f.client.request(
            "/node/src/listener/orientation", [.float(1), .float(0), .float(0)],
            reply: "/error")
        #expect(
            notAnEnvironment?.arguments == [
                .string("/node/src/listener/orientation"), .int32(14),
                .string("'src' is a player, not an environment")
            ])
    }

    /// A live engine reads an `hrtf` file off the request: a bad one reaches subscribers as
    /// `/environment/problem` and the requester as `/error` (code 42), and the environment keeps its set.
    @Test func aLiveEnvironmentsBadHRTFFileIsReportedToSubscribers() throws {
        let f = try OSCFixture()
        f.engine.setLoadsHRTFSetsInBackground(true)
        #expect(f.client.command("/notify", [.int32(1)])?.address == "/done")
        #expect(f.client.command("/node/new", [.string("environment"), .string("env")])?.address == "/done")
        try Data("not a SOFA file".utf8).write(to: URL(fileURLWithPath: f.directory + "/bad.sofa"))
        f.client.send("/node/env/hrtf", [.string("bad.sofa")])
        _ = f.client.receive(timeout: 5) { $0.address == "/environment/problem" }
        let problem = f.client.take("/environment/problem").first
        #expect(problem?.arguments.first == .string("env"))
        _ = f.client.receive(timeout: 2) { $0.address == "/error" }
        let error = f.client.take("/error").first
        #expect(error?.arguments.prefix(2) == [.string("/node/env/hrtf"), .int32(OSCErrorCode(.fileError).rawValue)])
        #expect(try f.engine.get("env", "hrtf") == .string(""))
    }
}

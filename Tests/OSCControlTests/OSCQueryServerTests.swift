// OSCQuery as controllers speak it (Python's urllib and websockets, python-osc over UDP) against
// `soundstage run`: the namespace with values, ranges and access; LISTEN; PATH_ADDED/PATH_REMOVED; OSC
// over the WebSocket; read-only serving; and the guards against other web sites. The engine runs as
// a child process, as users run it: the web server serves on Swift's concurrency threads, which the
// test process's own blocking tests would starve.
import AudioGraph
import DSPTestSupport
import Foundation
import Glibc
@testable import OSCControl
import Testing

extension OSCExternalSerialSuites {
    @Suite struct OSCQueryRunTests {}
}

extension OSCExternalSerialSuites.OSCQueryRunTests {
    static let patch = """
        version: 1
        engine: { sampleRate: 48000, outputs: 2 }
        buffers:
          - name: hum
            generate: { waveform: sine, frequency: 220, duration: 1, amplitude: 0.3 }
        nodes:
          - { name: env, kind: environment }
          - { name: tone, kind: player, params: { buffer: hum, loop: true, playing: true, volume: 0.5 } }
          - { name: verb, kind: reverb, params: { preset: largeHall } }
        connections:
          - { from: tone, to: env }
          - { from: env, to: verb }
          - { from: verb, to: main }

        """

    private func check(readOnly: Bool) throws {
        let server = try DummyJackServer()
        let folder = NSTemporaryDirectory() + "osct-oscquery-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let patchPath = folder + "/query.yaml"
        try Self.patch.write(toFile: patchPath, atomically: true, encoding: .utf8)
        let run = try SoundstageRun(
            patch: patchPath, server: server, clientName: "ss_query",
            extraArguments: readOnly ? ["--http-read-only"] : [])
        let http = try #require(run.httpPort, Comment(rawValue: run.child.output.suffix(2000).description))
        let result = try PythonWeb.runScript(
            "oscquery_check.py", [String(http), String(run.port)] + (readOnly ? ["--read-only"] : []))
        #expect(result.status == 0 && result.output.contains("OK"), Comment(rawValue: result.output))
        if readOnly {
            let client = OSCTestClient(port: run.port)
            #expect(client.request("/node/tone/volume")?.arguments.first == .float(0.25))
        }
    }

    @Test(
        .needsJackAndSoundstage,
        .requiresTool(
            "python web clients", PythonWeb.interpreter.path != nil, Comment(rawValue: PythonWeb.interpreter.reason)),
        .timeLimit(.minutes(2)))
    func controllersReadListenAndFollowTheNamespace() throws { try check(readOnly: false) }

    @Test(
        .needsJackAndSoundstage,
        .requiresTool(
            "python web clients", PythonWeb.interpreter.path != nil, Comment(rawValue: PythonWeb.interpreter.reason)),
        .timeLimit(.minutes(2)))
    func aReadOnlyServerAnswersButChangesNothing() throws { try check(readOnly: true) }

    /// The status line a GET of `/` with `Host: host` gets from 127.0.0.1:`port`.
    private func statusLine(port: Int, host: String) -> String? {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else { return nil }
        let request = Array("GET / HTTP/1.1\r\nHost: \(host)\r\nAccept: application/json\r\n\r\n".utf8)
        guard send(fd, request, request.count, 0) == request.count else { return nil }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let n = recv(fd, &buffer, buffer.count, 0)
        guard n > 0 else { return nil }
        return String(decoding: buffer[0..<n], as: UTF8.self).components(separatedBy: "\r\n").first
    }

    /// A server bound to the network answers requests by address, localhost, the machine's name and the
    /// names allowed, and refuses another name: what a DNS rebinding page sends, with a matching Origin.
    @Test(.needsJackAndSoundstage, .timeLimit(.minutes(2)))
    func aNetworkServerRefusesNamesItWasNotGiven() throws {
        let server = try DummyJackServer()
        let folder = NSTemporaryDirectory() + "osct-rebind-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let patchPath = folder + "/query.yaml"
        try Self.patch.write(toFile: patchPath, atomically: true, encoding: .utf8)
        let run = try SoundstageRun(
            patch: patchPath, server: server, clientName: "ss_rebind",
            extraArguments: ["--http-host", "0.0.0.0", "--http-allow-host", "engine.test"])
        _ = run.child.waitForOutput(containing: "web view: http://0.0.0.0:", timeout: 5)
        let output = run.child.output
        let found = output.range(of: #"web view: http://0\.0\.0\.0:(\d+)/"#, options: .regularExpression)
        let http = try #require(
            found.flatMap { Int(output[$0].dropFirst("web view: http://0.0.0.0:".count).dropLast()) },
            Comment(rawValue: output.suffix(1500).description))
        let machine = try #require(WebRequestGuard.machineNames.first)
        for host in ["127.0.0.1:\(http)", "localhost", "engine.test:\(http)", "ENGINE.test.", machine, "192.0.2.1"] {
            let line = statusLine(port: http, host: host)
            #expect(
                line?.contains(" 200 ") == true || line?.contains(" 302 ") == true,
                "Host: \(host): \(line ?? "no answer")")
        }
        for host in ["evil.example:\(http)", "engine.test.evil.example", "\(machine).evil.example"] {
            let line = statusLine(port: http, host: host)
            #expect(line?.contains(" 403 ") == true, "Host: \(host): \(line ?? "no answer")")
        }
        let client = OSCTestClient(port: run.port)
        #expect(client.command("/quit")?.address == "/done")
        #expect(run.child.waitForExit(timeout: 10) == 0)
    }
}

@Suite struct OSCQueryServerTests {
    /// A port held by a plain listening socket, as another program would hold it.
    private func occupiedPort() throws -> (fd: Int32, port: Int) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        try #require(bound == 0 && listen(fd, 1) == 0)
        var size = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &size) }
        }
        return (fd, Int(UInt16(bigEndian: address.sin_port)))
    }

    @Test func aTakenPortIsRefusedOrGivesWayWhenAllowed() throws {
        let (fd, taken) = try occupiedPort()
        defer { close(fd) }
        #expect(throws: OSCServiceError.self) {
            _ = try WebPortCheck.bindablePort(host: "127.0.0.1", port: taken, fallsBack: false)
        }
        let other = try WebPortCheck.bindablePort(host: "127.0.0.1", port: taken, fallsBack: true)
        #expect(other != taken && other > 0)
        #expect(throws: OSCServiceError.self) {
            _ = try WebPortCheck.bindablePort(host: "studio.example", port: 0, fallsBack: true)
        }
        #expect(throws: OSCServiceError.self) { try OSCFixture { $0.web = WebServerOptions(port: taken) } }
    }

    @Test func everyServedAddressIsDescribed() {
        let missing = OSCServiceCore.routes.keys.filter { OSCQueryDescriptions.routes[$0] == nil }
            .filter { !$0.hasPrefix("/session/") || OSCQueryDescriptions.sessionValues[String($0.dropFirst(9))] == nil }
            .filter { $0 != "/session/state" }
        #expect(missing.isEmpty, "no OSCQuery description for \(missing.sorted())")
        let tails = Set(
            NodeKind.allCases.flatMap { OSCServiceCore.nodeMethodPaths("n", kind: $0) }
                .map { String($0.dropFirst("/node/n/".count)) })
        let parameters = Set(NodeKind.allCases.flatMap { $0.parameters.map(\.name) })
        let undescribed = tails.subtracting(parameters).filter { OSCQueryDescriptions.nodeMethods[$0] == nil }
        #expect(undescribed.isEmpty, "no OSCQuery description for node methods \(undescribed.sorted())")
        // Every node address served is one some kind lists: the tree shows it and patterns reach it
        // (lastRenderTime and playerTime once were served but neither shown nor matched).
        let unlisted = Set(OSCServiceCore.nodeRoutes.keys).subtracting(tails)
        #expect(unlisted.isEmpty, "node addresses no kind lists: \(unlisted.sorted())")
    }

    @Test func theTreeCarriesEveryNodeParameterAndSessionValue() throws {
        let engine = Engine(
            configuration: EngineConfiguration(sampleRate: 48_000, blockFrames: 64, outputChannelCount: 2))
        try engine.attach(.player, name: "tone", parameters: ["volume": .float(0.5)])
        try engine.attach(.eq, name: "shelf", parameters: ["bands": .int(2)])
        let tree = OSCQueryTree.build(
            OSCQuerySource(
                nodes: engine.nodes(), routes: Array(OSCServiceCore.routes.keys),
                sessionValues: [("category", .string("playback")), ("isActive", .int32(1))], sessionState: "active",
                nodeMethods: { OSCServiceCore.nodeMethodPaths($0, kind: $1) }))
        let tone = try #require(tree.find("/node/tone"))
        #expect(Set(tone.contents.keys).isSuperset(of: NodeKind.player.parameters.map(\.name)))
        #expect(tree.find("/node/tone/volume")?.attributes["VALUE"] == .array([.number(0.5)]))
        #expect(tree.find("/node/tone/volume")?.fullPath == "/node/tone/volume")
        #expect(tree.find("/node/shelf/band1.gain") != nil && tree.find("/node/shelf/band2.gain") == nil)
        #expect(tree.find("/session/category")?.attributes["ACCESS"] == .integer(3))
        #expect(tree.find("/session/isActive")?.attributes["ACCESS"] == .integer(1))
        #expect(tree.find("/session/state")?.attributes["VALUE"] == .array([.string("active")]))
        for route in OSCServiceCore.routes.keys { #expect(tree.find(route) != nil, "\(route) is not in the tree") }
    }

    @Test func requestsForOtherHostsAndOriginsAreRefused() {
        #expect(WebRequestGuard.refusal(host: "127.0.0.1:57131", origin: nil, boundHost: "127.0.0.1") == nil)
        #expect(
            WebRequestGuard.refusal(host: "localhost:57131", origin: "http://localhost:57131", boundHost: "127.0.0.1")
                == nil)
        #expect(WebRequestGuard.refusal(host: "[::1]:57131", origin: nil, boundHost: "::1") == nil)
        #expect(WebRequestGuard.refusal(host: "evil.example", origin: nil, boundHost: "127.0.0.1") != nil)
        #expect(WebRequestGuard.refusal(host: nil, origin: nil, boundHost: "127.0.0.1") != nil)
        // Names a rebinding page can have: only an address or localhost, whole, with a numeric port.
        for forged in [
            "127.0.0.1.evil.com", "127.0.0.1.evil.com:57131", "127.0.0.1evil", "[::1].evil", "127.0.0.1:57131@evil.com",
            "localhost.evil.com", "127.0.0.1:", "127.0.0.1:80:80", "[::1]", "::1", "127.1", ""
        ] where forged != "[::1]" {
            #expect(
                WebRequestGuard.refusal(host: forged, origin: "http://\(forged)", boundHost: "127.0.0.1") != nil,
                "Host: \(forged)")
        }
        for loopback in ["127.0.0.1", "127.0.0.2:8080", "LOCALHOST:57131", "[::1]", "[::ffff:127.0.0.1]:57131"] {
            #expect(WebRequestGuard.refusal(host: loopback, origin: nil, boundHost: "127.0.0.1") == nil, "\(loopback)")
        }
        #expect(
            WebRequestGuard.refusal(host: "127.0.0.1:57131", origin: "http://evil.example", boundHost: "127.0.0.1")
                != nil)
        #expect(WebRequestGuard.refusal(host: "127.0.0.1:57131", origin: "null", boundHost: "127.0.0.1") != nil)
        // On the network: an address, localhost, the machine's names and the names allowed; not a name a
        // rebinding page could own (its Origin then matches its Host, so the Origin check alone lets it in).
        let machine = ["studio.example.org", "studio", "studio.local"]
        func networkRefusal(_ host: String, origin: String? = nil, allowed: [String] = []) -> String? {
            WebRequestGuard.refusal(
                host: host, origin: origin, boundHost: "0.0.0.0", allowedNames: allowed, machineNames: machine)
        }
        for reachable in [
            "studio.local:57131", "STUDIO:57131", "studio.example.org.", "192.168.1.20:57131", "[fe80::1]:57131",
            "10.0.0.7", "localhost:57131", "127.0.0.1"
        ] {
            #expect(networkRefusal(reachable) == nil, "\(reachable)")
            #expect(networkRefusal(reachable, origin: "http://\(reachable)") == nil, "\(reachable)")
        }
        for rebound in ["evil.example:57131", "studio.evil.example", "192.168.1.20.evil.example", "studio.local.evil"] {
            #expect(networkRefusal(rebound, origin: "http://\(rebound)") != nil, "\(rebound)")
        }
        #expect(networkRefusal("engine.lan:57131", origin: "http://engine.lan:57131", allowed: ["Engine.LAN"]) == nil)
        #expect(networkRefusal("studio.local:57131", origin: "http://evil.example") != nil)
        #expect(
            networkRefusal("evil.example:57131")?.contains("studio.example.org, studio, studio.local") == true,
            "the refusal names the machine's names")
        // A loopback server takes an allowed name too (a reverse proxy's), and no other.
        #expect(
            WebRequestGuard.refusal(
                host: "engine.lan", origin: nil, boundHost: "127.0.0.1", allowedNames: ["engine.lan"]) == nil)
        #expect(
            WebRequestGuard.refusal(host: "studio", origin: nil, boundHost: "127.0.0.1", machineNames: machine) != nil)
    }

    @Test func readOnlyLetsQueriesGettersAndSubscriptionsThrough() {
        for (address, count) in [
            ("/node/list", 0), ("/node/a/volume", 0), ("/node/a/params", 0), ("/session/category", 0), ("/notify", 1),
            ("/meters", 1), ("/node/*/volume", 0), ("/recorder/r/status", 0), ("/node/a/playerTime", 1)
        ] {
            #expect(WebReadOnly.allows(address, argumentCount: count), "\(address)")
        }
        for (address, count) in [
            ("/node/a/volume", 1), ("/node/a/play", 0), ("/node/a/stop", 0), ("/session/category", 1), ("/node/new", 2),
            ("/patch/load", 1), ("/quit", 0), ("/recorder/r/record", 0), ("/node/a/listener/position", 3),
            ("/session/activate", 0), ("/graph/connect", 2), ("/clearSched", 0)
        ] {
            #expect(!WebReadOnly.allows(address, argumentCount: count), "\(address)")
        }
    }
}

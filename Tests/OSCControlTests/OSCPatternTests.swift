// Address patterns fan out through liblo's matcher over registered node addresses, without /error storms.
import AudioGraph
import Foundation
@testable import OSCControl
import Testing

@Suite struct OSCPatternTests {
    private func fixtureWithPlayers() throws -> OSCFixture {
        let f = try OSCFixture()
        for name in ["osc1", "osc2", "osc3"] {
            #expect(f.client.command("/node/new", [.string("player"), .string(name)])?.address == "/done")
        }
        f.client.send("/ping")
        _ = f.client.receive(timeout: 2) { $0.address == "/pong" }
        return f
    }

    @Test func starSetsEveryNodeWithoutErrors() throws {
        let f = try fixtureWithPlayers()
        // `output` has no volume: the pattern simply does not reach it; `main` and the players do.
        f.client.send("/node/*/volume", [.float(0)])
        f.client.send("/ping")
        f.client.receive(timeout: 2) { $0.address == "/pong" }
        #expect(f.client.takeErrors().isEmpty)
        for name in ["main", "osc1", "osc2", "osc3"] { #expect(try f.engine.get(name, "volume") == .float(0)) }
    }

    @Test(arguments: ["/node/osc[12]/pan", "/node/{osc1,osc2}/pan", "/node/osc?/pan"])
    func patternFormsMatchTheirNodes(pattern: String) throws {
        let f = try fixtureWithPlayers()
        f.client.send(pattern, [.float(-1)])
        f.client.send("/ping")
        f.client.receive(timeout: 2) { $0.address == "/pong" }
        #expect(f.client.takeErrors().isEmpty)
        #expect(try f.engine.get("osc1", "pan") == .float(-1))
        #expect(try f.engine.get("osc2", "pan") == .float(-1))
        if pattern.contains("?") {
            #expect(try f.engine.get("osc3", "pan") == .float(-1))
        } else {
            #expect(try f.engine.get("osc3", "pan") == .float(0))
        }
    }

    /// A pattern whose last part is a wildcard is a query: without arguments it runs no command (the
    /// players keep playing), and with arguments it sets nothing and gets one /error.
    @Test func aWildcardTargetOnlyQueries() throws {
        let f = try OSCFixture()
        try f.engine.addBuffer(
            SampleBuffer(name: "b", channels: [Array(repeating: Float(0.5), count: 4_800)], sampleRate: 48_000))
        for name in ["osc1", "osc2"] {
            #expect(
                f.client.command(
                    "/node/new",
                    [
                        .string("player"), .string(name), .string("buffer"), .string("b"),
                        .string("loop"), .bool(true), .string("playing"), .bool(true)
                    ])?.address == "/done")
        }
        for pattern in ["/*", "/node/*", "/node/osc1/*"] {
            f.client.send(pattern)
            _ = f.client.request("/ping", reply: "/pong")
            #expect(f.client.takeErrors().isEmpty, "\(pattern)")
            for name in ["osc1", "osc2"] {
                #expect(try f.engine.get(name, "playing") == .bool(true), "\(pattern) stopped or paused \(name)")
            }
        }
        // Queries still answer: the parameters come back.
        #expect(f.client.take("/node/osc1/volume").count >= 1)
        f.client.send("/node/osc1/*", [.float(0.5)])
        f.client.receive(timeout: 2) { $0.address == "/error" }
        let errors = f.client.takeErrors()
        #expect(errors.map(\.errorCode) == [61])
        #expect(try f.engine.get("osc1", "volume") == .float(1), "a wildcard set changed a parameter")
        #expect(try f.engine.get("osc1", "pan") == .float(0))
        // Naming the command lifts the limit.
        f.client.send("/node/{osc1,osc2}/stop")
        _ = f.client.request("/ping", reply: "/pong")
        for name in ["osc1", "osc2"] { #expect(try f.engine.get(name, "playing") == .bool(false)) }
    }

    @Test func patternGetRepliesPerNode() throws {
        let f = try fixtureWithPlayers()
        f.client.send("/node/osc*/volume")
        f.client.receive(timeout: 1)
        let replies = f.client.pending.map(\.message).filter { $0.address.hasSuffix("/volume") }
        #expect(Set(replies.map(\.address)) == ["/node/osc1/volume", "/node/osc2/volume", "/node/osc3/volume"])
    }

    @Test func failingMatchesGiveOneError() throws {
        let f = try fixtureWithPlayers()
        f.client.send("/node/osc*/volume", [.float(7)])
        f.client.receive(timeout: 1)
        let errors = f.client.takeErrors()
        #expect(errors.count == 1)
        #expect(errors.first?.errorCode == 22)
        #expect(errors.first?.arguments[0] == .string("/node/osc*/volume"))
    }

    @Test func patternMatchingNothingIsOneError() throws {
        let f = try fixtureWithPlayers()
        f.client.send("/node/zz*/volume", [.float(0)])
        f.client.send("/buffer/*", [])
        f.client.receive(timeout: 1)
        let errors = f.client.takeErrors()
        #expect(errors.map(\.errorCode) == [60, 60])
    }

    @Test func nodeAddressesFollowTheGraph() throws {
        let f = try fixtureWithPlayers()
        #expect(f.client.command("/node/free", [.string("osc2")])?.address == "/done")
        f.client.send("/node/osc*/volume", [.float(0.5)])
        f.client.send("/ping")
        f.client.receive(timeout: 2) { $0.address == "/pong" }
        #expect(f.client.takeErrors().isEmpty)
        #expect(try f.engine.get("osc1", "volume") == .float(0.5))
        // Nodes made by other code (not over OSC) are picked up by the periodic scan.
        try f.engine.attach(.player, name: "osc9")
        Thread.sleep(forTimeInterval: 0.5)
        f.client.send("/node/osc[9]/volume", [.float(0.125)])
        f.client.send("/ping")
        f.client.receive(timeout: 2) { $0.address == "/pong" }
        #expect(try f.engine.get("osc9", "volume") == .float(0.125))
    }
}

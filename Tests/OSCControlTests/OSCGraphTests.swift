// /graph/*: node connections, and JACK connections through the host when both ends are port names.
import AudioGraph
@testable import OSCControl
import Testing

@Suite struct OSCGraphTests {
    @Test func connectListAndDisconnectNodes() throws {
        let f = try OSCFixture()
        _ = f.client.command("/node/new", [.string("player"), .string("p1")])
        _ = f.client.command("/node/new", [.string("mixer"), .string("sub")])
        #expect(
            f.client.command("/graph/connect", [.string("p1"), .string("sub")])?.arguments
                == [.string("/graph/connect"), .string("p1"), .string("sub")])
        #expect(f.client.command("/graph/connect", [.string("sub:0"), .string("main:3")])?.address == "/done")
        f.client.send("/graph/list")
        f.client.receive(timeout: 2) { $0.address == "/reply" }
        let edges = f.client.take("/graph/edge").map(\.arguments)
        #expect(edges.contains([.string("p1:0"), .string("sub:0")]))
        #expect(edges.contains([.string("sub:0"), .string("main:3")]))
        #expect(edges.contains([.string("main:0"), .string("output:0")]))
        #expect(f.client.command("/graph/disconnect", [.string("p1"), .string("sub")])?.address == "/done")
        #expect(!f.engine.connections().contains { $0.source == "p1" })
    }

    @Test func graphErrorsKeepTheirCodes() throws {
        let f = try OSCFixture()
        _ = f.client.command("/node/new", [.string("mixer"), .string("a")])
        _ = f.client.command("/node/new", [.string("mixer"), .string("b")])
        _ = f.client.command("/graph/connect", [.string("a"), .string("b")])
        #expect(f.client.command("/graph/connect", [.string("b"), .string("a")])?.errorCode == 31)
        #expect(f.client.command("/graph/disconnect", [.string("a"), .string("main")])?.errorCode == 32)
        #expect(f.client.command("/graph/connect", [.string("a:7"), .string("b")])?.errorCode == 30)
        #expect(f.client.command("/graph/connect", [.string("ghost"), .string("b")])?.errorCode == 10)
    }

    @Test func jackPortsGoToTheHost() throws {
        let host = MockHost()
        let f = try OSCFixture(host: host)
        #expect(
            f.client.command("/graph/connect", [.string("soundstage:out_1"), .string("system:playback_1")])?
                .address == "/done")
        f.client.send("/graph/list")
        f.client.receive(timeout: 2) { $0.address == "/reply" }
        #expect(
            f.client.take("/graph/edge").map(\.arguments)
                .contains([.string("soundstage:out_1"), .string("system:playback_1")]))
        #expect(
            f.client.command("/graph/connect", [.string("soundstage:out_1"), .string("system:nothing")])?
                .errorCode == 68)
        #expect(f.client.command("/graph/connect", [.string("main"), .string("system:playback_1")])?.errorCode == 61)
        #expect(
            f.client.command("/graph/disconnect", [.string("soundstage:out_1"), .string("system:playback_1")])?
                .address == "/done")
        #expect(host.listConnections().isEmpty)
        let bare = try OSCFixture()
        #expect(bare.client.command("/graph/connect", [.string("a:out"), .string("b:in")])?.errorCode == 69)
    }

    @Test func aSlowJackConnectionHoldsNoOtherRequest() throws {
        let host = MockHost()
        let f = try OSCFixture(host: host)
        host.connectGate.wait()
        f.client.send("/graph/connect", [.string("soundstage:out_1"), .string("system:playback_1")])
        // The server has not answered yet: requests after it, ours and another client's, still are.
        #expect(f.client.command("/node/new", [.string("mixer"), .string("sub")])?.address == "/done")
        let other = OSCTestClient(port: f.port)
        #expect(other.request("/ping", reply: "/pong") != nil)
        #expect(!f.client.pending.contains { $0.message.arguments.first == .string("/graph/connect") })
        host.connectGate.signal()
        #expect(
            f.client.awaitOutcome("/graph/connect")?.arguments
                == [.string("/graph/connect"), .string("soundstage:out_1"), .string("system:playback_1")])
        #expect(host.listConnections().count == 1)
    }

    @Test func portNamesAreToldFromBuses() {
        #expect(OSCServiceCore.isJackPortName("system:playback_1"))
        #expect(OSCServiceCore.isJackPortName("soundstage:out_1"))
        #expect(!OSCServiceCore.isJackPortName("p1:0"))
        #expect(!OSCServiceCore.isJackPortName("p1"))
        #expect(!OSCServiceCore.isJackPortName(":x"))
    }
}

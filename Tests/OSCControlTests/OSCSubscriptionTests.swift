// /notify, leases, notifications, meters.
import AudioGraph
import Foundation
@testable import OSCControl
import Testing

@Suite struct OSCSubscriptionTests {
    /// A reply URL that cannot be used is refused with an /error, and replies keep reaching the sender.
    @Test(arguments: [
        "osc.udp://127.0.0.1:99999/", "osc.udp://127.0.0.1:0/", "osc.udp://no-such-host.invalid:9000/",
        "osc.udp://127.0.0.1/", "http://127.0.0.1:9000/"
    ])
    func aReplyURLThatCannotBeUsedIsRefused(url: String) throws {
        let f = try OSCFixture()
        f.client.send("/notify", [.int32(1), .string(url)])
        f.client.receive(timeout: 3) { $0.address == "/error" || $0.address == "/done" }
        let errors = f.client.takeErrors()
        #expect(errors.count == 1 && f.client.take("/done").isEmpty, "\(url) was accepted")
        #expect(errors.first?.errorCode == 61, "code \(String(describing: errors.first?.errorCode))")
        #expect(
            f.client.request("/ping", [.int32(7)], reply: "/pong")?.arguments == [.int32(7)],
            "replies no longer reach the sender after \(url)")
    }

    @Test func subscribersHearGraphChanges() throws {
        let f = try OSCFixture()
        let done = try #require(f.client.command("/notify", [.int32(1)]))
        #expect(done.arguments == [.string("/notify"), .int32(1), .float(10)])
        let other = OSCTestClient(port: f.port)
        #expect(other.command("/node/new", [.string("player"), .string("p")])?.address == "/done")
        #expect(other.command("/graph/connect", [.string("p"), .string("main")])?.address == "/done")
        f.client.receive(timeout: 2) { $0.address == "/graph/connected" }
        #expect(f.client.take("/node/added").first?.arguments == [.string("p"), .string("player")])
        #expect(f.client.take("/graph/connected").first?.arguments == [.string("p:0"), .string("main:0")])
        _ = other.command("/node/free", [.string("p")])
        f.client.receive(timeout: 2) { $0.address == "/graph/disconnected" }
        #expect(f.client.take("/node/removed").first?.arguments == [.string("p")])
        #expect(f.client.take("/graph/disconnected").first?.arguments == [.string("p:0"), .string("main:0")])
        // The unsubscribed client heard none of it.
        other.receive(timeout: 0.3)
        #expect(other.take("/node/added").isEmpty)
    }

    @Test func leasesExpireUnlessRenewed() throws {
        let f = try OSCFixture(lease: 0.4)
        #expect(f.client.command("/notify", [.int32(1)])?.address == "/done")
        let renewing = OSCTestClient(port: f.port)
        #expect(renewing.command("/notify", [.bool(true)])?.address == "/done")
        for _ in 0..<4 {
            Thread.sleep(forTimeInterval: 0.2)
            #expect(renewing.command("/renew")?.arguments == [.string("/renew"), .float(0.4)])
        }
        try f.engine.attach(.mixer, name: "late")
        renewing.receive(timeout: 1) { $0.address == "/node/added" }
        #expect(renewing.take("/node/added").count == 1)
        f.client.receive(timeout: 0.3)
        #expect(f.client.take("/node/added").isEmpty)
        #expect(f.client.command("/renew")?.errorCode == 66)
    }

    @Test func replyURLReceivesRepliesAndNotifications() throws {
        let f = try OSCFixture()
        let listener = OSCTestClient(port: f.port)
        let done = f.client.command("/notify", [.int32(1), .string(listener.url)])
        #expect(done == nil)  // the /done went to the registered URL
        listener.receive(timeout: 2) { $0.address == "/done" }
        #expect(listener.take("/done").first?.arguments.first == .string("/notify"))
        f.client.send("/ping")
        listener.receive(timeout: 2) { $0.address == "/pong" }
        #expect(listener.take("/pong").count == 1)
        // Unsubscribing removes the route: the answer comes back to the sender.
        #expect(
            f.client.command("/notify", [.int32(0), .string(listener.url)])?.arguments == [
                .string("/notify"), .int32(0)
            ])
        #expect(f.client.request("/ping", reply: "/pong") != nil)
        #expect(f.client.command("/notify", [.int32(1), .string("not a url")])?.errorCode == 61)
    }

    @Test func metersArriveInSmallBundles() throws {
        let f = try OSCFixture()
        try f.engine.addBuffer(
            SampleBuffer(name: "dc", channels: [Array(repeating: 0.5, count: 48_000)], sampleRate: 48_000))
        _ = f.client.command(
            "/node/new",
            [
                .string("player"), .string("p"), .string("buffer"), .string("dc"),
                .string("loop"), .bool(true), .string("playing"), .bool(true)
            ])
        _ = f.client.command("/graph/connect", [.string("p"), .string("main")])
        for i in 0..<24 {
            _ = f.client.command(
                "/node/new", [.string("mixer"), .string("wide-mixer-\(i)"), .string("channels"), .int32(64)])
        }
        #expect(f.client.command("/meters", [.int32(20)])?.errorCode == 66)
        _ = f.client.command("/notify", [.int32(1)])
        let done = f.client.command("/meters", [.int32(50)])
        #expect(done?.arguments == [.string("/meters"), .int32(50)])
        f.client.receive(timeout: 0.6)
        let records = f.client.takeAll().filter { $0.message.address == "/meter" }
        #expect(!records.isEmpty)
        #expect(records.allSatisfy { $0.isBundle && $0.datagramSize < 4096 })
        let sizes = Set(records.map(\.datagramSize))
        #expect(sizes.count > 1 || records.count > 26)  // several datagrams per tick
        let p = try #require(records.last { $0.message.arguments.first == .string("p") }?.message)
        #expect(p.arguments[1] == .int32(1))
        if case .float(let peak) = p.arguments[2] { #expect(abs(peak - (-6.02)) < 0.5) }
        if case .float(let rms) = p.arguments[3] { #expect(abs(rms - (-6.02)) < 0.5) }
        // Only chosen nodes; 0 turns them off.
        _ = f.client.command("/meters", [.int32(20), .string("p")])
        f.client.receive(timeout: 0.3)
        _ = f.client.takeAll()
        f.client.receive(timeout: 0.3)
        #expect(Set(f.client.take("/meter").map { $0.arguments[0] }) == [.string("p")])
        _ = f.client.command("/meters", [.int32(0)])
        f.client.receive(timeout: 0.2)
        _ = f.client.takeAll()
        f.client.receive(timeout: 0.3)
        #expect(f.client.take("/meter").isEmpty)
        #expect(f.client.command("/meters", [.int32(20), .string("ghost")])?.errorCode == 10)
        #expect(f.client.command("/meters", [.int32(1)])?.errorCode == 22)
    }

    @Test func hostEventsReachSubscribers() throws {
        let f = try OSCFixture()
        _ = f.client.command("/notify", [.int32(1)])
        f.service.post(.xrun(count: 3, delayedMicroseconds: 120))
        f.service.post(.serverLost(reason: "JACK server has been closed"))
        f.client.receive(timeout: 2) { $0.address == "/engine/services_lost" }
        #expect(f.client.take("/engine/xrun").first?.arguments == [.int32(3), .float(120)])
        #expect(f.client.take("/engine/services_lost").first?.arguments == [.string("JACK server has been closed")])
    }
}

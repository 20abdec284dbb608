// Insert layouts requested from a thread that must stay responsive (the OSC thread) are applied on the
// host's port thread: while jackd is slow, the requester and status reads never wait, later requests
// replace waiting ones, and calls that name our ports see every request made before them.
import AudioGraph
import Foundation
@testable import JackHost
import Testing

extension JackHostTests {
    @Suite("Insert requests")
    struct InsertRequests {
        @Test func aStalledPortThreadNeverHoldsUpTheRequesterAndTheNewestLayoutWins() throws {
            let server = try PrivateJackServer()
            let fixture = try EQInsertHost(server: server)
            defer { fixture.stop() }
            let (engine, host, client, probe) = (fixture.engine, fixture.host, fixture.client, fixture.probe)

            // The port lock held here stands for a port call that jackd answers late.
            let edited = DispatchSemaphore(value: 0)
            let before = host.core.insertRequests.withLock { $0.drainedCount }
            host.core.portWork.withLock { _ in
                Thread.detachNewThread {
                    for i in 0..<21 { try? engine.set("eq", "insert", to: .bool(i % 2 == 0)) }
                    _ = host.isRunning
                    _ = host.cpuLoad
                    _ = host.actualClientName
                    edited.signal()
                }
                #expect(
                    edited.wait(timeout: .now() + 5) == .success,
                    "21 edits and three status reads waited for the port work")
                #expect(!probe.portExists("\(client):eq_in_1"), "ports registered while the port work was stalled")
            }
            // The newest request (exposed) is applied before a call that names the ports goes on.
            let ports = try #require(host.insertPortNames["eq"])
            #expect(ports.inputs == ["\(client):eq_in_1", "\(client):eq_in_2"])
            #expect(probe.portExists("\(client):eq_in_1") && probe.portExists("\(client):eq_out_2"))
            let drained = host.core.insertRequests.withLock { $0.drainedCount } - before
            #expect((1...2).contains(drained), "\(drained) layouts applied for 21 requests made during the stall")

            // A connection made right after a request finds the ports.
            try engine.set("eq", "insert", to: .bool(false))
            try engine.set("eq", "insert", to: .bool(true))
            #expect(host.connect("\(client):out_1", to: "\(client):eq_in_1").isConnected)
            try engine.set("eq", "insert", to: .bool(false))
            #expect(!host.connect("\(client):out_1", to: "\(client):eq_in_2").isConnected, "a hidden insert's port")
            #expect(host.insertPortNames.isEmpty)
        }
    }
}

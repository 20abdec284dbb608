// `/graph/connect` and `/graph/disconnect` of JACK ports are made on the worker: jackd takes about a
// period to answer each, so a burst of them at a long period must not hold other clients' requests.
// `soundstage run` on a private dummy server at 2048 frames (43 ms a period).
import Foundation
@testable import OSCControl
import Testing

extension OSCExternalSerialSuites {
    @Suite struct JackConnectionBurstRunTests {}
}

extension OSCExternalSerialSuites.JackConnectionBurstRunTests {
    @Test(.needsJackAndSoundstage, .timeLimit(.minutes(1)))
    func anotherClientIsAnsweredWhileABurstOfConnectionsWaitsForJackd() throws {
        let server = try DummyJackServer(period: 2048)
        let folder = URL(fileURLWithPath: NSTemporaryDirectory() + "osct-burst-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("burst.yaml").path
        try OSCExternalSerialSuites.HotReloadRunTests.patch(toneVolume: 0.25, right: nil).write(
            toFile: path, atomically: true, encoding: .utf8)
        let run = try SoundstageRun(patch: path, server: server, clientName: "ss_burst")
        let patcher = OSCTestClient(port: run.port)
        let other = OSCTestClient(port: run.port)
        #expect(other.request("/ping", reply: "/pong") != nil)

        let pairs = 10
        for _ in 0..<pairs {
            patcher.send("/graph/connect", [.string(run.outputPort(1)), .string("system:playback_1")])
            patcher.send("/graph/disconnect", [.string(run.outputPort(1)), .string("system:playback_1")])
        }
        // Twenty requests of a period or more each: the other client's ping is answered long before.
        #expect(other.request("/ping", reply: "/pong") != nil)
        patcher.receive(timeout: 0.001)
        let outcomes = { (address: String) in
            patcher.pending.filter {
                ($0.message.address == "/done" || $0.message.address == "/error")
                    && $0.message.arguments.first == .string(address)
            }.count
        }
        let answeredBeforePing = outcomes("/graph/connect") + outcomes("/graph/disconnect")
        #expect(answeredBeforePing < pairs, "\(answeredBeforePing) of \(2 * pairs) were answered before the ping")

        // Every one of them is carried out, in order, and the last leaves the ports apart.
        let allAnswered = { outcomes("/graph/connect") + outcomes("/graph/disconnect") == 2 * pairs }
        if !allAnswered() { patcher.receive(timeout: 20) { _ in allAnswered() } }
        #expect(patcher.take("/done").count == 2 * pairs, "\(patcher.takeErrors())")
        #expect(!server.isConnected(run.outputPort(1), to: "system:playback_1"))
    }
}

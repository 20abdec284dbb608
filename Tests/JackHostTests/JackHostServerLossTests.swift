// When jackd dies the host reports it, closes its client off the callback thread, and keeps the
// process alive; it can start again once a server is back.
import AudioGraph
import Foundation
import JackHost
import Synchronization
import Testing

extension JackHostTests {
    @Suite("Server loss")
    struct ServerLoss {
        @Test func killedServerIsReportedAndTheHostSurvives() throws {
            let server = try PrivateJackServer()
            let events = EventLog()
            let engine = try Tone.makeEngine()
            let poller = EnginePoller(engine)
            defer { poller.stop() }
            let host = JackHost(
                configuration: JackHostConfiguration(serverName: server.name),
                renderEngine: engine.renderEngine, onEvent: events.handler)
            _ = try host.start()
            #expect(waitUntil(timeout: 2) { host.processCycleCount > 20 })
            let killed = Date()
            server.kill9()
            let lost = events.wait(timeout: 2) {
                if case .serverLost = $0 { return true }
                return false
            }
            #expect(lost != nil, "no serverLost within 2 s: \(events.all)")
            if let lost {
                #expect(lost.time.timeIntervalSince(killed) < 2)
                #expect(lost.event == .serverLost(reason: "JACK server has been closed"))
            }
            #expect(!host.isRunning)
            #expect(host.isServerLost)
            #expect(host.cpuLoad == 0)
            #expect(host.connect("out_1", to: "system:playback_1").isConnected == false)
            host.stop()
            host.stop()
            #expect(!host.isServerLost)
        }

        @Test func hostStartsAgainWhenTheServerIsBack() throws {
            let server = try PrivateJackServer()
            let events = EventLog()
            let host = JackHost(
                configuration: JackHostConfiguration(serverName: server.name),
                renderEngine: RenderEngine(maxBlockFrames: 64), onEvent: events.handler)
            _ = try host.start()
            server.kill9()
            #expect(events.wait(timeout: 2) { $0 == .serverLost(reason: "JACK server has been closed") } != nil)
            #expect {
                _ = try host.start()
            } throws: { error in
                if case .serverNotRunning = error as? JackHostError { return true }
                return false
            }
            let restarted = try PrivateJackServer(name: server.name, period: 128)
            let report = try host.start()
            #expect(report.bufferSize == 128)
            #expect(waitUntil(timeout: 2) { host.processCycleCount > 20 })
            #expect(try restarted.lsp().contains("soundstage:out_1"))
            host.stop()
        }

        @Test func handlerMayStopTheHostOnServerLoss() throws {
            let server = try PrivateJackServer()
            let box = HostBox()
            let host = JackHost(
                configuration: JackHostConfiguration(serverName: server.name),
                renderEngine: RenderEngine(maxBlockFrames: 64))
            box.host.withLock { $0 = host }
            host.onEvent = { [box] event in
                guard case .serverLost = event else { return }
                box.host.withLock { $0 }?.stop()
                // Relaxed: read after a timed wait.
                box.stoppedInHandler.store(true, ordering: .relaxed)
            }
            _ = try host.start()
            server.kill9()
            #expect(waitUntil(timeout: 3) { box.stoppedInHandler.load(ordering: .relaxed) })
            #expect(!host.isRunning && !host.isServerLost)
            box.host.withLock { $0 = nil }
        }
    }
}

/// Lets an event handler reach its host without a retain cycle at test end.
private final class HostBox: Sendable {
    let host = Mutex<JackHost?>(nil)
    let stoppedInHandler = Atomic<Bool>(false)
}

// Events reach `onEvent` on the host's event thread, and an xrun does not stop the audio.
import AudioGraph
import Foundation
import JackHost
import Testing

extension JackHostTests {
    @Suite("Events")
    struct Events {
        @Test func lateCycleIsReportedAsXrunAndAudioContinues() throws {
            let server = try PrivateJackServer()
            let events = EventLog()
            let host = JackHost(
                configuration: JackHostConfiguration(serverName: server.name),
                renderEngine: RenderEngine(maxBlockFrames: 64), onEvent: events.handler)
            // Stalls the first process cycle far past its 5.3 ms deadline.
            host.setRenderThreadStartHook { usleep(100_000) }
            _ = try host.start()
            let xrun = events.wait(timeout: 3) {
                if case .xrun = $0 { return true }
                return false
            }
            #expect(xrun != nil, "no xrun event: \(events.all)")
            #expect(host.xrunCount >= 1)
            let cycles = host.processCycleCount
            #expect(waitUntil(timeout: 2) { host.processCycleCount > cycles + 50 }, "audio stopped after the xrun")
            host.stop()
        }
    }
}

// Test helper: a running host whose engine has an EQ that can be exposed as a JACK insert, and a
// silent client that looks at the server from outside.
import AudioGraph
import Foundation
import JackHost

/// A host on a private server whose engine has an EQ `eq`, not exposed yet; the host applies the
/// engine's insert layouts (as `soundstage run` does). `probe` is another client on the server.
final class EQInsertHost {
    let engine: Engine
    let poller: EnginePoller
    let host: JackHost
    let client: String
    let probe: JackToneSource

    init(server: PrivateJackServer) throws {
        engine = Engine(configuration: EngineConfiguration(sampleRate: 48_000, blockFrames: 64))
        try engine.attach(.eq, name: "eq", parameters: ["insert": .bool(false)])
        poller = EnginePoller(engine)
        host = JackHost(
            configuration: JackHostConfiguration(serverName: server.name, outputChannelCount: 2),
            renderEngine: engine.renderEngine)
        engine.setHostInsertObserver { [host] layout in host.requestInserts(layout) }
        do {
            _ = try host.start()
            guard let name = host.actualClientName else { throw EQInsertHostError.noClientName }
            client = name
            probe = try JackToneSource(server: server.name, frequency: 100, amplitude: 0)
        } catch {
            host.stop()
            poller.stop()
            throw error
        }
    }

    /// Closes the probe, stops the host, then the poller.
    func stop() {
        probe.close()
        host.stop()
        poller.stop()
    }
}

enum EQInsertHostError: Error {
    case noClientName
}

// Opening, naming, ports and connections of the JACK host.
import AudioGraph
import Foundation
import JackHost
import Testing

extension JackHostTests {
    @Suite("Lifecycle")
    struct Lifecycle {
        @Test func registersNumberedPortsOnTheServer() throws {
            let server = try PrivateJackServer()
            let host = JackHost(
                configuration: JackHostConfiguration(
                    serverName: server.name, outputChannelCount: 2, inputChannelCount: 2),
                renderEngine: RenderEngine(maxBlockFrames: 64))
            let report = try host.start()
            #expect(report.actualClientName == "soundstage")
            #expect(!report.wasRenamed)
            #expect(report.serverName == server.name)
            #expect(report.outputPorts == ["soundstage:out_1", "soundstage:out_2"])
            #expect(report.inputPorts == ["soundstage:in_1", "soundstage:in_2"])
            #expect(report.sampleRate == 48_000 && host.sampleRate == 48_000)
            #expect(report.bufferSize == 256 && host.bufferSize == 256)
            let listed = try server.lsp().split(separator: "\n").map(String.init)
            for port in ["soundstage:out_1", "soundstage:out_2", "soundstage:in_1", "soundstage:in_2"] {
                #expect(listed.contains(port), "jack_lsp lacks \(port): \(listed)")
            }
            #expect(host.isRunning)
            #expect(waitUntil(timeout: 2) { host.processCycleCount > 20 }, "the process callback does not run")
            // jack_cpu_load is a percentage of the period; once the client is closed the host reports 0.
            let load = host.cpuLoad
            #expect(load.isFinite && (0...100).contains(load), "cpu load \(load)")
            host.stop()
            #expect(!host.isRunning)
            #expect(host.cpuLoad == 0)
            #expect(try !server.lsp().contains("soundstage:"))
        }

        @Test func missingServerFailsWithoutStartingOne() throws {
            let absent = PrivateJackServer.uniqueName(prefix: "ss_absent")
            let host = JackHost(
                configuration: JackHostConfiguration(serverName: absent),
                renderEngine: RenderEngine(maxBlockFrames: 64))
            #expect {
                _ = try host.start()
            } throws: { error in
                guard case .serverNotRunning(let server, let status) = error as? JackHostError else { return false }
                return server == absent && status & 0x01 != 0
            }
            #expect(!host.isRunning)
            #expect(!JackServerLauncher.isServerRunning(name: absent))
            usleep(300_000)
            #expect(PrivateJackServer.processes(commandLineContaining: absent).isEmpty, "a jackd was spawned")
            let message = String(describing: JackHostError.serverNotRunning(server: absent, status: 0x11))
            #expect(message.contains(absent) && message.contains("ServerFailed"))
        }

        @Test func takenClientNameIsRenamedAndReported() throws {
            let server = try PrivateJackServer()
            let config = JackHostConfiguration(clientName: "dup", serverName: server.name, outputChannelCount: 1)
            let first = JackHost(configuration: config, renderEngine: RenderEngine(maxBlockFrames: 64))
            let second = JackHost(configuration: config, renderEngine: RenderEngine(maxBlockFrames: 64))
            let firstReport = try first.start()
            let secondReport = try second.start()
            #expect(firstReport.actualClientName == "dup")
            #expect(secondReport.requestedClientName == "dup")
            #expect(secondReport.wasRenamed)
            #expect(secondReport.actualClientName != "dup" && secondReport.actualClientName.hasPrefix("dup"))
            #expect(second.actualClientName == secondReport.actualClientName)
            #expect(secondReport.outputPorts == ["\(secondReport.actualClientName):out_1"])
            let listed = try server.lsp()
            #expect(listed.contains("dup:out_1") && listed.contains("\(secondReport.actualClientName):out_1"))
        }

        @Test func connectionsAreMadeAndFailuresReportedWithoutAborting() throws {
            let server = try PrivateJackServer()
            let config = JackHostConfiguration(
                serverName: server.name, outputChannelCount: 2, inputChannelCount: 2, connectPhysicalOutputs: true,
                connections: [
                    (from: "out_1", to: "nobody:in"),
                    (from: "system:capture_1", to: "in_1"),
                    (from: "in_2", to: "system:capture_2"),
                    (from: "out_1", to: "out_2")
                ])
            let host = JackHost(configuration: config, renderEngine: RenderEngine(maxBlockFrames: 64))
            let report = try host.start()
            let outcomes = report.connections.map(\.isConnected)
            #expect(outcomes == [true, true, false, true, true, false], "\(report.connections)")
            #expect(report.connections[0].destination == "system:playback_1")
            #expect(report.connections[1].destination == "system:playback_2")
            #expect(report.connections[4].source == "system:capture_2")
            #expect(report.connections[4].destination == "soundstage:in_2")
            #expect(report.failedConnections.count == 2)
            #expect(report.failedConnections[0].description.contains("nobody:in"))
            let listed = try server.lsp(["-c"])
            #expect(listed.contains("soundstage:out_1\n   system:playback_1"))
            #expect(host.connections(of: "in_1") == ["system:capture_1"])
            #expect(host.connect("out_1", to: "system:playback_1").outcome == .alreadyConnected)
            #expect(host.disconnect("out_1", from: "system:playback_1").isConnected)
            #expect(host.connections(of: "out_1").isEmpty)
        }

        @Test func physicalPortsAreListed() throws {
            let server = try PrivateJackServer()
            let host = JackHost(
                configuration: JackHostConfiguration(serverName: server.name),
                renderEngine: RenderEngine(maxBlockFrames: 64))
            #expect(host.physicalPlaybackPorts().isEmpty)
            _ = try host.start()
            #expect(host.physicalPlaybackPorts() == ["system:playback_1", "system:playback_2"])
            #expect(host.physicalCapturePorts() == ["system:capture_1", "system:capture_2"])
        }

        @Test func stopIsIdempotentAndTheHostRestarts() throws {
            let server = try PrivateJackServer()
            let host = JackHost(
                configuration: JackHostConfiguration(serverName: server.name),
                renderEngine: RenderEngine(maxBlockFrames: 64))
            host.stop()
            _ = try host.start()
            #expect(throws: JackHostError.alreadyRunning) { _ = try host.start() }
            host.stop()
            host.stop()
            #expect(!host.isRunning && host.actualClientName == nil)
            let again = try host.start()
            #expect(again.actualClientName == "soundstage")
            #expect(waitUntil(timeout: 2) { host.isRunning && host.processCycleCount > 10 })
        }

        @Test func invalidConfigurationIsRejectedBeforeOpening() {
            let engine = RenderEngine(maxBlockFrames: 64)
            let long = String(repeating: "x", count: 80)
            for config in [
                JackHostConfiguration(clientName: ""), JackHostConfiguration(clientName: long),
                JackHostConfiguration(outputChannelCount: -1), JackHostConfiguration(inputChannelCount: 1_000)
            ] {
                let host = JackHost(configuration: config, renderEngine: engine)
                #expect {
                    _ = try host.start()
                } throws: { error in
                    if case .invalidConfiguration = error as? JackHostError { return true }
                    return false
                }
            }
        }
    }
}

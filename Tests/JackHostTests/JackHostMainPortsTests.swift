// The session's category decides which main ports exist: a set switched off is unregistered while
// cycles run (nothing reads its ports any more), and switched on again it comes back with the
// connections it had, and plays: a tone fed into in_1 through the engine's input node reaches out_1.
import AudioGraph
import CJack
import DSPTestSupport
import Foundation
import JackHost
import Testing

extension JackHostTests {
    @Suite("Main port sets (the session's category)")
    struct MainPorts {
        /// in_1 → input node → main → out_1.
        private func makeEngine() throws -> Engine {
            let engine = Engine(
                configuration: EngineConfiguration(
                    sampleRate: 48_000, blockFrames: 64, outputChannelCount: 1, inputChannelCount: 1))
            try engine.attach(.input, name: "mic")
            try engine.connect("mic", to: "main")
            return engine
        }

        private func peak(_ recorder: JackRecorder) -> Double {
            Double(SignalStats.peak(recorder.record(frames: 4_800)[2_400...]))
        }

        @Test func setsComeAndGoWithTheirConnections() throws {
            let server = try PrivateJackServer()
            let engine = try makeEngine()
            let poller = EnginePoller(engine)
            defer { poller.stop() }
            let host = JackHost(
                configuration: JackHostConfiguration(
                    serverName: server.name, outputChannelCount: 1, inputChannelCount: 1),
                renderEngine: engine.renderEngine)
            // A playback category from the start: outputs only.
            host.setMainPorts(JackMainPorts(outputs: true, inputs: false))
            let report = try host.start()
            defer { host.stop() }
            let client = try #require(host.actualClientName)
            #expect(report.outputPorts == ["\(client):out_1"] && report.inputPorts.isEmpty)
            #expect(try !server.lsp().contains("\(client):in_1"))

            let tone = try JackToneSource(server: server.name, frequency: 1_000, amplitude: 0.5)
            defer { tone.close() }
            let recorder = try JackRecorder(server: server.name, capacity: 48_000)
            defer { recorder.close() }
            #expect(recorder.connect(from: "\(client):out_1").isConnected)
            usleep(200_000)
            #expect(peak(recorder) < 1e-6, "no inputs yet, so nothing plays")

            // playAndRecord: the inputs come; the tone goes through.
            #expect(host.setMainPorts(JackMainPorts(outputs: true, inputs: true)).isEmpty)
            #expect(host.inputPortNames == ["\(client):in_1"])
            #expect(host.connect(tone.portName, to: "in_1").isConnected)
            usleep(200_000)
            #expect(abs(peak(recorder) - 0.5) < 0.01)

            // record: the outputs go, with their connection, while cycles run.
            #expect(host.setMainPorts(JackMainPorts(outputs: false, inputs: true)).isEmpty)
            #expect(host.outputPortNames.isEmpty)
            #expect(try !server.lsp().contains("\(client):out_1"))
            #expect(host.connections(of: "in_1") == [tone.portName])
            usleep(200_000)
            #expect(host.isRunning && !host.isServerLost)

            // Back to playAndRecord: out_1 is registered again with the connection it had.
            #expect(host.setMainPorts(JackMainPorts(outputs: true, inputs: true)).isEmpty)
            #expect(host.connections(of: "out_1") == [recorder.portName])
            usleep(200_000)
            #expect(abs(peak(recorder) - 0.5) < 0.01, "the tone plays again")
            #expect(host.mainPorts == JackMainPorts(outputs: true, inputs: true))
        }
    }
}

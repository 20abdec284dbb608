// Listening to other audio the JACK way: `other_audio` follows the other clients' outputs that reach
// physical playback ports (not those of a client we feed, which would close a loop in JACK's graph),
// hears their level, and never reaches our outputs.
import AudioGraph
import CJack
import DSPTestSupport
import Foundation
import JackHost
import Testing

extension JackHostTests {
    @Suite("Other audio monitor")
    struct OtherAudio {
        @Test func theMonitorFollowsWhatPlaysAndHearsItWithoutFeedingBack() throws {
            let server = try PrivateJackServer()
            // An engine that plays nothing itself: whatever reaches its outputs would be feedback.
            let engine = Engine(
                configuration: EngineConfiguration(sampleRate: 48_000, blockFrames: 64, outputChannelCount: 1))
            let poller = EnginePoller(engine)
            defer { poller.stop() }
            let host = JackHost(
                configuration: JackHostConfiguration(serverName: server.name, outputChannelCount: 1),
                renderEngine: engine.renderEngine)
            _ = try host.start()
            defer { host.stop() }
            let client = try #require(host.actualClientName)
            let monitor = "\(client):\(JackHost.otherAudioPortName)"

            let tone = try JackToneSource(server: server.name, frequency: 1_000, amplitude: 0.5)
            defer { tone.close() }
            #expect(host.connect(tone.portName, to: "system:playback_1").isConnected)
            // A client we feed that plays out too: listening to it would close a loop through us.
            let room = try JackRoomSimulator(server: server.name, bulkDelay: 0, taps: [(0, 1)])
            defer { room.close() }
            #expect(room.connect("\(client):out_1", to: room.speakerPort).isConnected)
            #expect(room.connect(room.micPort, to: "system:playback_2").isConnected)

            #expect(host.setOtherAudioMonitoring(true) == nil)
            #expect(host.monitorsOtherAudio)
            #expect(waitUntil(timeout: 2) { host.connections(of: JackHost.otherAudioPortName) == [tone.portName] })
            #expect(host.connections(of: JackHost.otherAudioPortName) == [tone.portName])
            _ = host.takeOtherAudioPeak()
            usleep(200_000)
            #expect(abs(host.takeOtherAudioPeak() - 0.5) < 0.01)

            let recorder = try JackRecorder(server: server.name, capacity: 48_000)
            defer { recorder.close() }
            #expect(recorder.connect(from: "\(client):out_1").isConnected)
            #expect(recorder.record(frames: 9_600).allSatisfy { $0 == 0 }, "what the monitor hears reached our output")

            // The tone stops playing out: the monitor lets it go, and hears nothing.
            #expect(host.disconnect(tone.portName, from: "system:playback_1").isConnected)
            #expect(waitUntil(timeout: 2) { host.connections(of: JackHost.otherAudioPortName).isEmpty })
            _ = host.takeOtherAudioPeak()
            usleep(100_000)
            #expect(host.takeOtherAudioPeak() == 0)
            // A new player appears: followed at once.
            #expect(host.connect(tone.portName, to: "system:playback_2").isConnected)
            #expect(waitUntil(timeout: 2) { host.connections(of: JackHost.otherAudioPortName) == [tone.portName] })

            #expect(host.setOtherAudioMonitoring(false) == nil)
            #expect(!host.monitorsOtherAudio)
            #expect(try !server.lsp().contains(monitor))
        }
    }
}

// Effects exposed as JACK inserts: another client's tone goes through an exposed EQ and comes out
// shaped exactly as the EQ's analytic response says; latency is propagated; ports follow the node.
import AudioDSP
import AudioGraph
import DSPTestSupport
import Foundation
import JackHost
import Testing

extension JackHostTests {
    @Suite("Inserts")
    struct Inserts {
        static let toneFrequency = 1_000.0
        static let toneAmplitude: Float = 0.25
        /// A peaking band at 1.5 kHz, +12 dB, one octave: the 1 kHz tone sits on its skirt.
        static let band: [String: ParameterValue] = [
            "band0.bypass": .bool(false), "band0.filterType": .string("parametric"),
            "band0.frequency": .float(1_500), "band0.bandwidth": .float(1), "band0.gain": .float(12)
        ]

        /// An engine with an EQ `eq` (one band, as above) exposed as an insert, nothing in the graph.
        private func makeEngine(insert: Bool = true) throws -> Engine {
            let engine = Engine(configuration: EngineConfiguration(sampleRate: 48_000, blockFrames: 64))
            var parameters = Self.band
            parameters["bands"] = .int(1)
            parameters["insert"] = .bool(insert)
            try engine.attach(.eq, name: "eq", parameters: parameters)
            return engine
        }

        @Test func toneThroughAnExposedEQMatchesTheAnalyticResponse() throws {
            let server = try PrivateJackServer()
            let engine = try makeEngine()
            let poller = EnginePoller(engine)
            defer { poller.stop() }
            let host = try startInsertHost(engine, on: server)
            defer { host.stop() }
            let client = try #require(host.actualClientName)
            let ports = try #require(host.insertPortNames["eq"])
            #expect(ports.inputs == ["\(client):eq_in_1", "\(client):eq_in_2"])
            #expect(ports.outputs == ["\(client):eq_out_1", "\(client):eq_out_2"])

            let tone = try JackToneSource(
                server: server.name, frequency: Self.toneFrequency, amplitude: Self.toneAmplitude)
            defer { tone.close() }
            let recorder = try JackRecorder(server: server.name, capacity: 48_000)
            defer { recorder.close() }
            #expect(tone.connect(to: ports.inputs[0]).isConnected)
            #expect(recorder.connect(from: ports.outputs[0]).isConnected)
            usleep(300_000)
            let expected = BiquadCoefficients.eqBand(
                type: .parametric, frequency: 1_500, bandwidth: 1, gainDecibels: 12,
                sampleRate: 48_000
            ).response(at: Self.toneFrequency, sampleRate: 48_000)
            // A period an xrun disturbs on a loaded machine spoils the windows it falls in, not the measurement.
            let steady = recorder.steadyToneAmplitude(frequency: Self.toneFrequency)
            let measured = try #require(steady.amplitude, "no steady capture: \(steady.captures)")
            let gain = Decibels.fromAmplitude(measured / Double(Self.toneAmplitude))
            let analytic = Decibels.fromAmplitude(expected.magnitude)
            #expect(abs(gain - analytic) < 0.05, "measured \(gain) dB through the insert, analytic \(analytic) dB")
            #expect(analytic > 3, "the test tone must sit where the band changes the level: \(analytic) dB")
        }

        /// JACK's default rule (every input feeds every output) would give eq_out_1 the capture latency
        /// of the main input too; the insert's own path must be reported instead, and the main path apart.
        @Test func latencyFollowsEachPathThroughTheClient() throws {
            let server = try PrivateJackServer()
            let engine = try makeEngine()
            let poller = EnginePoller(engine)
            defer { poller.stop() }
            let host = try startInsertHost(engine, on: server, inputs: 1)
            defer { host.stop() }
            let ports = try #require(host.insertPortNames["eq"])
            let tone = try JackToneSource(server: server.name, frequency: 100, amplitude: 0)
            defer { tone.close() }
            let recorder = try JackRecorder(server: server.name, capacity: 16)
            defer { recorder.close() }
            // The dummy backend's ports carry the period's latency; the test clients' ports carry none.
            let capture = try #require(tone.latency(of: "system:capture_1", capture: true))
            let playback = try #require(tone.latency(of: "system:playback_1", capture: false))
            #expect(capture.max > 0 && playback.max > 0, "the backend reports no latency: \(capture) \(playback)")
            #expect(host.connect("system:capture_1", to: "in_1").isConnected)
            #expect(host.playbackLatencyFrames == 0, "unconnected outputs reach no playback port")
            // Both main outputs, so their ranges agree (JACK combines them as min of minima, max of maxima).
            #expect(host.connect("out_1", to: "system:playback_1").isConnected)
            #expect(host.connect("out_2", to: "system:playback_2").isConnected)
            // What dataPlayedBack waits for: the backend's playback latency behind the main outputs.
            #expect(
                waitUntil(timeout: 3) { host.playbackLatencyFrames == Int(playback.max) },
                "playback latency \(host.playbackLatencyFrames), the backend's \(playback)")
            #expect(tone.connect(to: ports.inputs[0]).isConnected)
            #expect(recorder.connect(from: ports.outputs[0]).isConnected)
            let zero = (min: UInt32(0), max: UInt32(0))
            func settles(_ port: String, capture isCapture: Bool, to expected: (min: UInt32, max: UInt32)) -> Bool {
                waitUntil(timeout: 3) { tone.latency(of: port, capture: isCapture).map { $0 == expected } ?? false }
            }
            let client = try #require(host.actualClientName)
            #expect(
                settles("\(client):out_1", capture: true, to: capture),
                "out_1 capture \(String(describing: tone.latency(of: "\(client):out_1", capture: true))), in_1's source \(capture)"
            )
            #expect(
                settles(ports.outputs[0], capture: true, to: zero),
                "eq_out_1 capture \(String(describing: tone.latency(of: ports.outputs[0], capture: true))), its source has none"
            )
            #expect(
                settles("\(client):in_1", capture: false, to: playback),
                "in_1 playback \(String(describing: tone.latency(of: "\(client):in_1", capture: false))), out_1's sink \(playback)"
            )
            #expect(
                settles(ports.inputs[0], capture: false, to: zero),
                "eq_in_1 playback \(String(describing: tone.latency(of: ports.inputs[0], capture: false))), its sink has none"
            )
        }

        @Test func portsFollowTheInsertParameterAndTheNode() throws {
            let server = try PrivateJackServer()
            let engine = try makeEngine(insert: false)
            let poller = EnginePoller(engine)
            defer { poller.stop() }
            let host = try startInsertHost(engine, on: server)
            defer { host.stop() }
            let client = try #require(host.actualClientName)
            let probe = try JackToneSource(server: server.name, frequency: 100, amplitude: 0)
            defer { probe.close() }
            #expect(!probe.portExists("\(client):eq_in_1"))

            try engine.set("eq", "insert", to: .bool(true))
            #expect(probe.portExists("\(client):eq_in_1") && probe.portExists("\(client):eq_out_2"))
            try engine.set("eq", "insert", to: .bool(false))
            #expect(!probe.portExists("\(client):eq_in_1") && !probe.portExists("\(client):eq_out_2"))
            try engine.set("eq", "insert", to: .bool(true))
            try engine.detach("eq")
            #expect(!probe.portExists("\(client):eq_out_1"), "a freed node's ports stay")
            #expect(host.insertPortNames.isEmpty)
            let cycles = host.processCycleCount
            #expect(waitUntil(timeout: 2) { host.processCycleCount > cycles + 20 }, "audio stopped")

            // Exposed before the host starts: the ports appear with the client.
            host.stop()
            try engine.attach(.delay, name: "echo", parameters: ["insert": .bool(true)])
            _ = try host.start()
            let restarted = try #require(host.actualClientName)
            #expect(probe.portExists("\(restarted):echo_in_1") && probe.portExists("\(restarted):echo_out_2"))
        }

        /// A time-pitch insert is a pitch shifter at rate 1: an octave up, with its latency reported.
        @Test func aTimePitchInsertShiftsPitchAndReportsItsLatency() throws {
            let server = try PrivateJackServer()
            let engine = Engine(configuration: EngineConfiguration(sampleRate: 48_000, blockFrames: 64))
            try engine.attach(
                .timepitch, name: "shift",
                parameters: [
                    "pitch": .float(1_200), "rate": .float(2),
                    "insert": .bool(true), "channels": .int(1)
                ])
            let poller = EnginePoller(engine)
            defer { poller.stop() }
            let host = try startInsertHost(engine, on: server)
            defer { host.stop() }
            let ports = try #require(host.insertPortNames["shift"])
            let tone = try JackToneSource(server: server.name, frequency: 440, amplitude: 0.25)
            defer { tone.close() }
            let recorder = try JackRecorder(server: server.name, capacity: 48_000)
            defer { recorder.close() }
            #expect(tone.connect(to: ports.inputs[0]).isConnected)
            #expect(recorder.connect(from: ports.outputs[0]).isConnected)
            usleep(500_000)
            let samples = recorder.record(frames: 24_000)
            try #require(samples.count == 24_000)
            let octave = Goertzel.measure(samples[4_800...], frequency: 880, sampleRate: 48_000).amplitude
            let original = Goertzel.measure(samples[4_800...], frequency: 440, sampleRate: 48_000).amplitude
            #expect(octave > 0.1 && original < octave * 0.1, "880 Hz at \(octave), 440 Hz at \(original)")
            let latency = engine.hostInsertLayout.inserts.first.map(\.latencyFrames) ?? 0
            #expect(latency > 0)
            let settled = waitUntil(timeout: 3) {
                tone.latency(of: ports.outputs[0], capture: true).map { Int($0.max) == latency } ?? false
            }
            #expect(
                settled,
                "shift_out_1 capture latency \(String(describing: tone.latency(of: ports.outputs[0], capture: true))), kernel \(latency)"
            )
        }
    }
}

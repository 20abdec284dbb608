// Audio through JACK: a tone from the engine reaches another client at the right level, survives a
// period change, and the process thread neither allocates nor locks.
import AudioGraph
import CAllocationCounter
import DSPTestSupport
import Foundation
import JackHost
import Synchronization
import Testing

/// Set by the render-thread start hook (a C function pointer cannot capture).
private let renderHookRan = Atomic<Bool>(false)
/// The probe channel the start hook tracks the process thread into.
private let renderHookChannel = Atomic<Int32>(0)

extension JackHostTests {
    @Suite("Audio")
    struct Audio {
        /// Level tolerance for the captured tone against the offline render of the same graph.
        static let levelToleranceDecibels = 0.5

        /// Starts a host playing the tone on `server` and a recorder connected to `out_1`.
        private func startTone(
            on server: PrivateJackServer, events: EventLog? = nil,
            hook: (@convention(c) () -> Void)? = nil
        ) throws
            -> (Engine, EnginePoller, JackHost, JackRecorder)
        {
            let engine = try Tone.makeEngine()
            let poller = EnginePoller(engine)
            let host = JackHost(
                configuration: JackHostConfiguration(serverName: server.name, outputChannelCount: 2),
                renderEngine: engine.renderEngine, onEvent: events?.handler)
            host.setRenderThreadStartHook(hook)
            let report = try host.start()
            let recorder = try JackRecorder(server: server.name, capacity: 48_000)
            let connection = recorder.connect(from: report.outputPorts[0])
            #expect(connection.isConnected, "\(connection)")
            return (engine, poller, host, recorder)
        }

        /// Asserts that the recorder hears the tone at the offline level (±0.5 dB). The level is the
        /// median of the steady windows of a capture (`JackRecorder.steadyToneAmplitude`): a loaded
        /// machine's xruns put steps in some windows and the capture is taken again while most are
        /// disturbed; a wrong gain or silence shows in every window and fails.
        private func expectTone(from recorder: JackRecorder, reference: Double, _ label: String) {
            let steady = recorder.steadyToneAmplitude(frequency: Tone.frequency)
            guard let measured = steady.amplitude else {
                Issue.record("\(label): no steady 1 kHz tone: \(steady.captures)")
                return
            }
            let difference = Decibels.fromAmplitude(measured) - Decibels.fromAmplitude(reference)
            #expect(
                abs(difference) <= Self.levelToleranceDecibels,
                "\(label): 1 kHz at \(measured), offline \(reference) (\(difference) dB); \(steady.captures)")
        }

        @Test func engineToneReachesAnotherClientAtTheOfflineLevel() throws {
            let reference = try Tone.offlineReferenceAmplitude()
            #expect(
                abs(
                    Decibels.fromAmplitude(reference)
                        - Decibels.fromAmplitude(Double(Tone.amplitude) / 2.0.squareRoot())) < 0.1,
                "mono player at centre pan should be -3 dB: \(reference)")
            let server = try PrivateJackServer()
            let (_, poller, host, recorder) = try startTone(on: server)
            defer { poller.stop() }
            usleep(200_000)
            expectTone(from: recorder, reference: reference, "out_1")
            recorder.close()
            host.stop()
        }

        @Test func periodChangeKeepsAudioFlowing() throws {
            let reference = try Tone.offlineReferenceAmplitude()
            let server = try PrivateJackServer()
            let events = EventLog()
            let (_, poller, host, recorder) = try startTone(on: server, events: events)
            defer { poller.stop() }
            usleep(200_000)
            expectTone(from: recorder, reference: reference, "before the change")
            let cyclesBefore = host.processCycleCount
            let tool = try server.runWithDefaultServer("/usr/bin/jack_bufsize", ["128"])
            #expect(tool.status == 0, "jack_bufsize: \(tool.output)")
            #expect(waitUntil(timeout: 5) { host.bufferSize == 128 }, "bufferSize is \(host.bufferSize)")
            #expect(events.wait(timeout: 2) { $0 == .bufferSizeChanged(frames: 128) } != nil, "\(events.all)")
            usleep(200_000)
            expectTone(from: recorder, reference: reference, "after the change")
            #expect(host.processCycleCount > cyclesBefore + 100)
            recorder.close()
            host.stop()
        }

        @Test(.disabled(if: AllocationProbe.isSanitized, "the sanitizer owns malloc; the plain build counts"))
        func processThreadNeitherAllocatesNorLocks() throws {
            try #require(AllocationProbe.isActive, "the allocation counter is not linked in")
            renderHookRan.store(false, ordering: .relaxed)
            let probe = AllocationProbe()
            // Relaxed: published to the process thread by jack_activate (a syscall and a thread start).
            renderHookChannel.store(probe.channel, ordering: .relaxed)
            let server = try PrivateJackServer()
            let hook: @convention(c) () -> Void = {
                ss_track_current_thread(renderHookChannel.load(ordering: .relaxed))
                // Relaxed: read after the test has slept past several cycles.
                renderHookRan.store(true, ordering: .relaxed)
            }
            let (engine, poller, host, recorder) = try startTone(on: server, hook: hook)
            defer { poller.stop() }
            // An effect whose JACK insert ports come and go meanwhile (new port tables for the callback).
            try engine.attach(.eq, name: "fx", parameters: ["insert": .bool(true)])
            try engine.connect("p", to: "fx")
            engine.setHostInsertObserver { [host] layout in host.setInserts(layout) }
            host.setInserts(engine.hostInsertLayout)
            #expect(waitUntil(timeout: 3) { host.processCycleCount > 100 }, "warm-up")
            let hookRan = renderHookRan.load(ordering: .relaxed)
            #expect(hookRan, "the start hook did not run")
            probe.reset()
            AllocationProbe.armTrap(true)
            defer { AllocationProbe.armTrap(false) }
            let start = host.processCycleCount
            // Parameter changes exercise the command queue on the process thread meanwhile, and insert
            // changes the program and the port table.
            let deadline = Date().addingTimeInterval(3)
            var volume = 0.5
            var exposed = true
            while Date() < deadline {
                try engine.set("p", "volume", to: .float(volume))
                volume = volume == 0.5 ? 0.8 : 0.5
                exposed.toggle()
                try engine.set("fx", "insert", to: .bool(exposed))
                usleep(100_000)
            }
            #expect(host.insertPortNames.isEmpty == !exposed)
            let cycles = host.processCycleCount - start
            let allocations = probe.allocations
            let locks = probe.locks
            #expect(cycles > 300, "only \(cycles) cycles ran in 3 s")
            #expect(allocations == 0, "\(allocations) allocations on the process thread in \(cycles) cycles")
            #expect(locks == 0, "\(locks) mutex locks on the process thread in \(cycles) cycles")
            recorder.close()
            host.stop()
        }
    }
}

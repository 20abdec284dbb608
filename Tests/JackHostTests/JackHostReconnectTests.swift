// With `reconnectsAfterServerLoss`, a host whose server dies waits for a server of the same name, opens
// again under its name with every port, restores every connection its ports had (whoever made them,
// including a peer that comes back after it), and plays on with the engine's state intact; the
// process thread stays free of allocation and locks across the return; stop() ends the waiting.
import AudioGraph
import CAllocationCounter
import DSPTestSupport
import Foundation
import JackHost
import Synchronization
import Testing

/// Set by the render-thread start hook (a C function pointer cannot capture).
private let reconnectHookRuns = Atomic<Int>(0)
private let reconnectHookChannel = Atomic<Int32>(0)

extension JackHostTests {
    @Suite("Reconnect after server loss")
    struct Reconnect {
        private func makeHost(_ engine: Engine, _ server: PrivateJackServer, events: EventLog) -> JackHost {
            let host = JackHost(
                configuration: JackHostConfiguration(
                    serverName: server.name, outputChannelCount: 2, inputChannelCount: 1,
                    reconnectsAfterServerLoss: true),
                renderEngine: engine.renderEngine, onEvent: events.handler)
            host.setInserts(engine.hostInsertLayout)
            engine.setHostInsertObserver { [weak host] layout in host?.setInserts(layout) }
            return host
        }

        private func returned(_ events: EventLog, timeout: Double = 5) -> JackHostReturnReport? {
            guard
                let hit = events.wait(
                    timeout: timeout,
                    for: {
                        if case .serverReturned = $0 { return true }
                        return false
                    }), case .serverReturned(let report) = hit.event
            else { return nil }
            return report
        }

        @Test func hostComesBackUnderItsNameWithEveryPortAndConnection() throws {
            let reference = try Tone.offlineReferenceAmplitude()
            let server = try PrivateJackServer()
            let engine = try Tone.makeEngine()
            try engine.attach(.eq, name: "fx", parameters: ["insert": .bool(true)])
            let poller = EnginePoller(engine)
            defer { poller.stop() }
            let events = EventLog()
            let host = makeHost(engine, server, events: events)
            let report = try host.start()
            let name = report.actualClientName
            // Ours, a third party's (a connection made on our ports by another client), and a peer's.
            #expect(host.connect("out_2", to: "system:playback_2").isConnected)
            let tool = try server.runWithDefaultServer("/usr/bin/jack_connect", ["system:capture_1", "\(name):in_1"])
            #expect(tool.status == 0, "\(tool.output)")
            #expect(host.connect("fx_out_1", to: "system:playback_1").isConnected)
            let recorder = try JackRecorder(server: server.name, capacity: 48_000)
            #expect(recorder.connect(from: "\(name):out_1").isConnected)
            usleep(200_000)

            server.kill9()
            let lost = events.wait(timeout: 3) {
                if case .serverLost = $0 { return true }
                return false
            }
            #expect(lost != nil, "\(events.all)")
            #expect(!host.isRunning && host.isServerLost)
            recorder.close()
            // Meanwhile the engine's control side goes on: requests apply (heard after the return) and
            // no frame is rendered.
            try engine.set("p", "volume", to: .float(0.25))
            try engine.set("p", "volume", to: .float(0.5))

            let restarted = try PrivateJackServer(name: server.name, period: 128)
            let back = try #require(returned(events), "no serverReturned: \(events.all)")
            #expect(back.start.actualClientName == name)
            #expect(back.start.bufferSize == 128)
            #expect(events.all.contains(.bufferSizeChanged(frames: 128)))
            #expect(host.isRunning && !host.isServerLost)
            let ports = try restarted.lsp(["-c"])
            for port in ["out_1", "out_2", "in_1", "fx_in_1", "fx_out_1"] {
                #expect(ports.contains("\(name):\(port)"), "\(port) missing:\n\(ports)")
            }
            #expect(host.connections(of: "out_2") == ["system:playback_2"])
            #expect(host.connections(of: "in_1") == ["system:capture_1"])
            #expect(host.connections(of: "fx_out_1") == ["system:playback_1"])
            // The peer's connection waits for its port.
            #expect(back.waiting == [JackEdge(source: "\(name):out_1", destination: "ss_rec:in")])

            // The peer comes back later: its connection is made again, and the tone plays on at the volume
            // set while the server was away (−6.02 dB).
            let peer = try JackRecorder(server: restarted.name, capacity: 48_000)
            #expect(waitUntil(timeout: 1) { host.connections(of: "out_1") == ["ss_rec:in"] })
            // The second half of a 0.5 s recording: the recorder may start before the restored connection
            // carries audio. Up to four recordings: on a loaded machine the non-realtime dummy server can
            // miss periods, which the recording hears as gaps.
            var levels: [Double] = []
            for _ in 0..<4 {
                let samples = peer.record(frames: 24_000)
                #expect(samples.count == 24_000)
                guard samples.count == 24_000 else { break }
                levels.append(
                    Decibels.fromAmplitude(Tone.amplitude(of: samples[12_000...])) - Decibels.fromAmplitude(reference))
                if abs(levels.last! - Decibels.fromAmplitude(0.5)) < 0.1 { break }
            }
            #expect(
                levels.contains { abs($0 - Decibels.fromAmplitude(0.5)) < 0.1 },
                "the tone after the return: \(levels) dB")
            peer.close()
            host.stop()
        }

        @Test func connectionsAreRestoredAfterATerminatedServerToo() throws {
            // jackd, terminated, may disconnect the ports before it announces the shutdown.
            let server = try PrivateJackServer()
            let engine = try Tone.makeEngine()
            let poller = EnginePoller(engine)
            defer { poller.stop() }
            let events = EventLog()
            let host = makeHost(engine, server, events: events)
            _ = try host.start()
            let made = try server.runWithDefaultServer(
                "/usr/bin/jack_connect", ["soundstage:out_1", "system:playback_1"])
            #expect(made.status == 0)
            #expect(host.connect("system:capture_2", to: "in_1").isConnected)
            usleep(200_000)
            for round in 1...3 {
                events.clear()
                server.stop()
                let restarted = try PrivateJackServer(name: server.name)
                let back = try #require(returned(events), "round \(round): \(events.all)")
                let allMade = back.restored.allSatisfy { $0.isConnected }
                #expect(allMade, "round \(round): \(back.restored)")
                #expect(host.connections(of: "out_1") == ["system:playback_1"], "round \(round)")
                #expect(host.connections(of: "in_1") == ["system:capture_2"], "round \(round)")
                restarted.stop()
            }
            host.stop()
        }

        /// A server back at another rate gets silence until the control side has rebuilt the engine at it
        /// and said so: an engine built for 48 kHz would otherwise play at 44.1 kHz a semitone and a half
        /// low (and record that into files of its own rate). Then the tone plays again.
        @Test func aReturnAtAnotherRateIsSilentUntilTheEngineHasIt() throws {
            let server = try PrivateJackServer(sampleRate: 48_000)
            let engine = try Tone.makeEngine()
            let poller = EnginePoller(engine)
            defer { poller.stop() }
            let events = EventLog()
            let host = makeHost(engine, server, events: events)
            let name = try host.start().actualClientName
            host.setEngineSampleRate(48_000)
            #expect(!host.isWaitingForEngineRate)
            server.kill9()
            #expect(
                events.wait(timeout: 3) {
                    if case .serverLost = $0 { return true }
                    return false
                } != nil)
            let restarted = try PrivateJackServer(name: server.name, sampleRate: 44_100)
            let back = try #require(returned(events), "\(events.all)")
            #expect(back.start.sampleRate == 44_100)
            #expect(host.isWaitingForEngineRate)
            let recorder = try JackRecorder(server: restarted.name, capacity: 44_100)
            #expect(recorder.connect(from: "\(name):out_1").isConnected)
            let waiting = recorder.record(frames: 11_025)
            #expect(
                waiting.count == 11_025 && waiting.allSatisfy { $0 == 0 }, "peak \(waiting.map { abs($0) }.max() ?? -1)"
            )

            engine.setSampleRate(44_100)
            host.setEngineSampleRate(44_100)
            #expect(!host.isWaitingForEngineRate)
            let playing = recorder.record(frames: 11_025)
            #expect(Tone.amplitude(of: playing[5_000...]) > 0.1, "peak \(playing.map { abs($0) }.max() ?? -1)")
            recorder.close()
            host.stop()
        }

        /// A patch reload or `/graph/*` while the server is away: a removal keeps a connection from coming
        /// back (a configured one too: the return makes what the ports had, not the configuration), a new
        /// one is made at the return (given input first too), and a removal of a connection nobody had
        /// fails as it would with the server there.
        @Test func connectionsAskedWhileTheServerIsAwayAreCarriedOutAtItsReturn() throws {
            let server = try PrivateJackServer()
            let engine = try Tone.makeEngine()
            let poller = EnginePoller(engine)
            defer { poller.stop() }
            let events = EventLog()
            // The connection is the configuration's (a patch's `jack.connect`), made at the start.
            let host = JackHost(
                configuration: JackHostConfiguration(
                    serverName: server.name, outputChannelCount: 2, inputChannelCount: 1,
                    connections: [(from: "out_1", to: "system:playback_1")], reconnectsAfterServerLoss: true),
                renderEngine: engine.renderEngine, onEvent: events.handler)
            let start = try host.start()
            let allMade = start.connections.allSatisfy { $0.isConnected }
            #expect(allMade, "\(start.connections)")
            usleep(200_000)
            server.kill9()
            #expect(events.wait(timeout: 3) { if case .serverLost = $0 { return true } else { return false } } != nil)

            #expect(host.disconnect("out_1", from: "system:playback_1").outcome == .waitingForServer)
            #expect(host.connect("out_1", to: "system:playback_2").outcome == .waitingForServer)
            #expect(host.connect("system:capture_1", to: "in_1").outcome == .waitingForServer)
            let never = host.disconnect("out_2", from: "system:playback_2")
            #expect(!never.isConnected, "\(never)")

            let restarted = try PrivateJackServer(name: server.name)
            _ = try #require(returned(events), "no serverReturned: \(events.all)")
            #expect(waitUntil(timeout: 1) { host.connections(of: "out_1") == ["system:playback_2"] })
            #expect(host.connections(of: "in_1") == ["system:capture_1"])
            restarted.stop()
            host.stop()
        }

        @Test func stopEndsTheWaitingAndADroppedHostIsFreed() throws {
            let server = try PrivateJackServer()
            let engine = try Tone.makeEngine()
            let events = EventLog()
            var host: JackHost? = makeHost(engine, server, events: events)
            weak let weakHost = host
            _ = try host?.start()
            server.kill9()
            #expect(events.wait(timeout: 3) { if case .serverLost = $0 { return true } else { return false } } != nil)
            let started = Date()
            host?.stop()
            #expect(Date().timeIntervalSince(started) < 1, "stop() waited for the reconnect thread")
            #expect(host?.isRunning == false && host?.isServerLost == false)
            let restarted = try PrivateJackServer(name: server.name)
            #expect(returned(events, timeout: 1) == nil, "a stopped host came back: \(events.all)")
            let listed = try restarted.lsp()
            #expect(!listed.contains("soundstage:"))

            // Dropped while it waits: the reconnect thread holds it weakly, so it goes.
            _ = try host?.start()
            restarted.kill9()
            // The second loss (the log still holds the first).
            #expect(
                waitUntil(timeout: 3) {
                    events.all.filter { if case .serverLost = $0 { return true } else { return false } }.count >= 2
                })
            host = nil
            #expect(waitUntil(timeout: 2) { weakHost == nil }, "the host was kept alive by its reconnect thread")
        }

        @Test(.disabled(if: AllocationProbe.isSanitized, "the sanitizer owns malloc; the plain build counts"))
        func processThreadStaysFreeOfAllocationAcrossAReturn() throws {
            try #require(AllocationProbe.isActive, "the allocation counter is not linked in")
            reconnectHookRuns.store(0, ordering: .relaxed)
            let probe = AllocationProbe()
            // Relaxed: published to each process thread by jack_activate.
            reconnectHookChannel.store(probe.channel, ordering: .relaxed)
            let server = try PrivateJackServer()
            let engine = try Tone.makeEngine()
            try engine.attach(.eq, name: "fx", parameters: ["insert": .bool(true)])
            try engine.connect("p", to: "fx")
            let poller = EnginePoller(engine)
            defer { poller.stop() }
            let events = EventLog()
            let host = makeHost(engine, server, events: events)
            // Runs on the first cycle of every client the host opens, the reopened one included.
            host.setRenderThreadStartHook {
                ss_track_current_thread(reconnectHookChannel.load(ordering: .relaxed))
                reconnectHookRuns.add(1, ordering: .relaxed)
            }
            _ = try host.start()
            #expect(waitUntil(timeout: 3) { host.processCycleCount > 100 }, "warm-up")
            probe.reset()
            AllocationProbe.armTrap(true)
            defer { AllocationProbe.armTrap(false) }

            var volume = 0.5
            func edit(for seconds: Double) throws {
                let deadline = Date().addingTimeInterval(seconds)
                while Date() < deadline {
                    try engine.set("p", "volume", to: .float(volume))
                    volume = volume == 0.5 ? 0.8 : 0.5
                    usleep(20_000)
                }
            }
            try edit(for: 1)
            server.kill9()
            try edit(for: 0.5)
            let restarted = try PrivateJackServer(name: server.name)
            #expect(returned(events) != nil, "\(events.all)")
            // Warm-up of the new process thread (its first cycles set up libjack's buffers).
            #expect(waitUntil(timeout: 3) { reconnectHookRuns.load(ordering: .relaxed) == 2 })
            let cyclesAfter = host.processCycleCount
            try edit(for: 2)
            #expect(host.processCycleCount - cyclesAfter > 200)
            #expect(probe.allocations == 0, "\(probe.allocations) allocations on the process threads")
            #expect(probe.locks == 0, "\(probe.locks) mutex locks on the process threads")
            host.stop()
            restarted.stop()
        }
    }
}

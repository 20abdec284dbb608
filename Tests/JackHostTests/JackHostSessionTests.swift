// Route changes as the audio session sees them, from JACK's own events: our main ports gaining and
// losing connections, a period change; and suspending rendering with and without rendering anyway.
import AudioGraph
import CJack
import DSPTestSupport
import Foundation
import JackHost
import Testing

extension JackHostTests {
    @Suite("Session: route changes and suspension")
    struct Session {
        private func routeChange(_ events: EventLog, _ reason: JackRouteChangeReason, timeout: Double = 3)
            -> JackRouteChange?
        {
            guard
                let hit = events.wait(
                    timeout: timeout,
                    for: {
                        if case .routeChanged(let change) = $0 { return change.reason == reason }
                        return false
                    }), case .routeChanged(let change) = hit.event
            else { return nil }
            return change
        }

        @Test func connectionsOfTheMainPortsAndPeriodChangesAreRouteChanges() throws {
            let server = try PrivateJackServer()
            let events = EventLog()
            let engine = try Tone.makeEngine()
            try engine.attach(.eq, name: "fx", parameters: ["insert": .bool(true)])
            let host = JackHost(
                configuration: JackHostConfiguration(
                    serverName: server.name, inputChannelCount: 1, connections: [("out_1", "system:playback_1")]),
                renderEngine: engine.renderEngine, onEvent: events.handler)
            host.setInserts(engine.hostInsertLayout)
            _ = try host.start()
            // The route the client opened with is not a change.
            #expect(host.route == ["system:playback_1"])
            usleep(200_000)
            #expect(!events.all.contains { if case .routeChanged = $0 { return true } else { return false } })

            #expect(host.connect("system:capture_1", to: "in_1").isConnected)
            let gained = try #require(routeChange(events, .newDeviceAvailable), "\(events.all)")
            #expect(gained.previousRoute == ["system:playback_1"])
            #expect(gained.currentRoute == ["system:capture_1", "system:playback_1"])
            // An insert's connection is not the route.
            events.clear()
            #expect(host.connect("fx_out_1", to: "system:playback_2").isConnected)
            usleep(300_000)
            #expect(!events.all.contains { if case .routeChanged = $0 { return true } else { return false } })

            #expect(host.disconnect("out_1", from: "system:playback_1").isConnected)
            let lost = try #require(routeChange(events, .oldDeviceUnavailable), "\(events.all)")
            #expect(lost.currentRoute == ["system:capture_1"])
            #expect(lost.outputsLostLastConnection)
            #expect(host.route == ["system:capture_1"])

            events.clear()
            let tool = try server.runWithDefaultServer("/usr/bin/jack_bufsize", ["128"])
            #expect(tool.status == 0)
            let reconfigured = try #require(routeChange(events, .routeConfigurationChange), "\(events.all)")
            #expect(reconfigured.currentRoute == ["system:capture_1"])
            host.stop()
        }

        @Test func suspendedHostsPlaySilenceWithTimeStoppedOrRunning() throws {
            let server = try PrivateJackServer()
            let engine = try Tone.makeEngine()
            let poller = EnginePoller(engine)
            defer { poller.stop() }
            let host = JackHost(
                configuration: JackHostConfiguration(serverName: server.name), renderEngine: engine.renderEngine)
            let report = try host.start()
            let recorder = try JackRecorder(server: server.name, capacity: 48_000)
            #expect(recorder.connect(from: report.outputPorts[0]).isConnected)
            usleep(200_000)
            #expect(SignalStats.peak(recorder.record(frames: 4_800)[...]) > 0.1)

            host.suspend(renderAnyway: false)
            #expect(host.isSuspended)
            usleep(100_000)
            let frozen = engine.renderEngine.renderedFrames
            let silent = recorder.record(frames: 9_600)
            #expect(silent.count == 9_600 && silent.allSatisfy { $0 == 0 }, "not silent while suspended")
            #expect(engine.renderEngine.renderedFrames == frozen, "the engine rendered while suspended")
            // Requests still apply while suspended.
            try engine.set("p", "volume", to: .float(0.5))

            host.suspend(renderAnyway: true)
            usleep(100_000)
            let running = engine.renderEngine.renderedFrames
            let stillSilent = recorder.record(frames: 9_600)
            #expect(stillSilent.allSatisfy { $0 == 0 }, "not silent while suspended rendering anyway")
            #expect(engine.renderEngine.renderedFrames >= running + 9_600, "time stood still rendering anyway")

            host.wakeUp()
            #expect(!host.isSuspended)
            usleep(100_000)
            // Up to four recordings: on a loaded machine the non-realtime dummy server can miss periods,
            // which a recording hears as gaps.
            let expected = Double(Tone.amplitude) / 2.0.squareRoot() * 0.5
            var levels: [Double] = []
            for _ in 0..<4 {
                let level = Tone.amplitude(of: recorder.record(frames: 24_000)[...])
                levels.append(level)
                if abs(Decibels.fromAmplitude(level) - Decibels.fromAmplitude(expected)) < 0.5 { break }
            }
            #expect(
                levels.contains { abs(Decibels.fromAmplitude($0) - Decibels.fromAmplitude(expected)) < 0.5 },
                "the tone after waking up: \(levels)")
            recorder.close()
            host.stop()
        }

        @Test func aPreferredPeriodIsAskedOfTheServer() throws {
            let server = try PrivateJackServer()
            let events = EventLog()
            let host = JackHost(
                configuration: JackHostConfiguration(serverName: server.name),
                renderEngine: RenderEngine(maxBlockFrames: 64), onEvent: events.handler)
            #expect(host.requestBufferSize(frames: 128) == nil, "not running yet")
            _ = try host.start()
            #expect(host.requestBufferSize(frames: 128) == 128)
            #expect(host.bufferSize == 128)
            #expect(routeChange(events, .routeConfigurationChange) != nil, "\(events.all)")
            let listed = try server.runWithDefaultServer("/usr/bin/jack_bufsize", [])
            #expect(listed.output.contains("128"), "\(listed.output)")
            host.stop()
        }

        @Test func clientPropertiesArePublishedAndComeBackWithTheServer() throws {
            // jack_property reads the user's metadata store, which any server exiting elsewhere deletes.
            try JackServerStartLock.exclusively { try propertiesComeBack() }
        }

        private func propertiesComeBack() throws {
            let server = try PrivateJackServer()
            let events = EventLog()
            let host = JackHost(
                configuration: JackHostConfiguration(serverName: server.name, reconnectsAfterServerLoss: true),
                renderEngine: RenderEngine(maxBlockFrames: 64), onEvent: events.handler)
            host.setClientProperties(["urn:soundstage:test:title": "before start"])
            _ = try host.start()
            func listed(_ server: PrivateJackServer) throws -> String {
                try server.runWithDefaultServer("/usr/bin/jack_property", ["-l"]).output
            }
            #expect(try listed(server).contains("before start"))
            host.setClientProperties(["urn:soundstage:test:artist": "Band"])
            let now = try listed(server)
            #expect(now.contains("Band") && !now.contains("before start"), "\(now)")
            server.kill9()
            #expect(events.wait(timeout: 3) { if case .serverLost = $0 { return true } else { return false } } != nil)
            let restarted = try PrivateJackServer(name: server.name)
            #expect(
                events.wait(timeout: 5) { if case .serverReturned = $0 { return true } else { return false } } != nil)
            // The host sets its properties on the new client before it reports the return. A server of
            // another test that exits without the lock (a command's own server) deletes the user's
            // metadata store, and this process may keep the deleted copy (CI once listed nothing after
            // the return); the control loop repairs that with `refreshClientProperties()` every 0.5 s,
            // as here.
            var refreshes: [Bool] = []
            var back = try listed(restarted).contains("Band")
            while !back && refreshes.count < 6 {
                refreshes.append(host.refreshClientProperties())
                usleep(500_000)
                back = try listed(restarted).contains("Band")
            }
            #expect(back, "the metadata did not come back with the server (refreshes: \(refreshes))")
            host.stop()
        }

        @Test func transportIsReadFromTheServer() throws {
            let server = try PrivateJackServer()
            let host = JackHost(
                configuration: JackHostConfiguration(serverName: server.name),
                renderEngine: RenderEngine(maxBlockFrames: 64))
            #expect(host.transportPosition() == nil)
            _ = try host.start()
            #expect(host.transportPosition()?.isRolling == false)
            // Another client moves the transport, as a DAW would.
            var status = jack_status_t(rawValue: 0)
            let other = try #require(
                jackshim_client_open(
                    "ss_daw", jack_options_t(rawValue: JackNoStartServer.rawValue), &status, server.name))
            defer { _ = jack_client_close(other) }
            #expect(jack_activate(other) == 0)
            _ = jack_transport_locate(other, 96_000)
            jack_transport_start(other)
            // JACK applies the start at the end of a cycle and the locate at the beginning of the next:
            // for one Starting cycle the transport shows the old frame. Watched closely, it is never
            // reported rolling anywhere but where it was located.
            var rollingElsewhere: [Int] = []
            let deadline = Date().addingTimeInterval(2)
            while Date() < deadline {
                if let position = host.transportPosition(), position.isRolling {
                    if position.frame < 96_000 { rollingElsewhere.append(position.frame) }
                    break
                }
                usleep(200)
            }
            #expect(rollingElsewhere.isEmpty, "reported rolling at frames \(rollingElsewhere)")
            #expect(waitUntil(timeout: 2) { host.transportPosition()?.isRolling == true })
            #expect((host.transportPosition()?.frame ?? 0) >= 96_000)
            jack_transport_stop(other)
            #expect(waitUntil(timeout: 2) { host.transportPosition()?.isRolling == false })
            host.stop()
        }
    }
}

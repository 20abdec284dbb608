// Hot reload end to end: `soundstage run --watch` on a private dummy jackd, its output recorded with
// jack_rec while the patch file is edited under it. What stays keeps playing with glided parameters,
// a removed node fades out, an added one fades in, a broken patch is refused whole (and reported to
// /notify subscribers), and SIGHUP reloads without --watch. A click detector listens to the recording.
import DSPTestSupport
import Foundation
@testable import OSCControl
import Testing

extension OSCExternalSerialSuites {
    @Suite struct HotReloadRunTests {}
}

extension OSCExternalSerialSuites.HotReloadRunTests {
    /// A 220 Hz sine (`tone`) hard left, and a 330 Hz one hard right when `right` names it. Both buffers
    /// hold whole cycles, so their loops are seamless.
    static func patch(toneVolume: Double, right: String?, extra: String = "", jack: String? = nil) -> String {
        var text = """
            version: 1
            engine: { sampleRate: 48000, outputs: 2 }
            buffers:
              - name: low
                generate: { waveform: sine, frequency: 220, duration: 1.0, amplitude: 1.0 }
              - name: high
                generate: { waveform: sine, frequency: 330, duration: 1.0, amplitude: 1.0 }
            nodes:
              - { name: tone, kind: player, params: { buffer: low, loop: true, playing: true, pan: -1, volume: \(toneVolume)\(extra) } }

            """
        if let right {
            text += """
                  - { name: \(right), kind: player, params: { buffer: high, loop: true, playing: true, pan: 1, volume: 0.25 } }

                """
        }
        text += """
            connections:
              - { from: tone, to: main }

            """
        if let right { text += "  - { from: \(right), to: main }\n" }
        if let jack { text += "jack:\n  connect:\n    - { from: \(jack), to: \"system:playback_1\" }\n" }
        return text
    }

    /// The engine's xrun count (argument 4 of `/status.reply`).
    private func xruns(_ client: OSCTestClient) -> Int? {
        guard let reply = client.request("/status", reply: "/status.reply"), reply.arguments.count >= 5,
            case .int32(let n) = reply.arguments[4]
        else { return nil }
        return Int(n)
    }

    private func volume(_ client: OSCTestClient, _ node: String) -> Double? {
        client.request("/node/\(node)/volume")?.arguments.first?.doubleValue
    }

    /// Engine frame minus the player's own timeline frame: constant while the player plays on, changed
    /// by a restart.
    private func playerOrigin(_ client: OSCTestClient, _ node: String) -> Int64? {
        guard let reply = client.request("/node/\(node)/playerTime"), reply.arguments.count == 2,
            case .int64(let sample) = reply.arguments[0], case .int64(let player) = reply.arguments[1]
        else { return nil }
        return sample - player
    }

    /// Waits for a `/patch/reload…` notification.
    private func notification(_ client: OSCTestClient, _ address: String, timeout: Double = 5) -> OSCMessage? {
        if let hit = client.take(address).first { return hit }
        client.receive(timeout: timeout) { $0.address == address }
        return client.take(address).first
    }

    /// Places in `samples` where the second difference exceeds `factor` times the most a sine of
    /// `frequency` at the signal's peak can make, grouped into clusters (one click, one cluster).
    static func clicks(_ samples: [Float], frequency: Double, factor: Double = 4) -> [Int] {
        let w = 2 * Double.pi * frequency / 48_000
        let peak = samples.reduce(0) { max($0, abs(Double($1))) }
        let bound = factor * w * w * peak
        var clusters: [Int] = []
        for i in 1..<max(1, samples.count - 1) {
            let d = abs(Double(samples[i + 1]) - 2 * Double(samples[i]) + Double(samples[i - 1]))
            if d > bound, clusters.last.map({ i - $0 > 512 }) ?? true { clusters.append(i) }
        }
        return clusters
    }

    /// RMS of `samples[range]`.
    static func rms(_ samples: [Float], _ range: Range<Int>) -> Double {
        let slice = samples[range.clamped(to: 0..<samples.count)]
        guard !slice.isEmpty else { return 0 }
        return (slice.reduce(0) { $0 + Double($1) * Double($1) } / Double(slice.count)).squareRoot()
    }

    @Test(.needsJackAndSoundstage, .timeLimit(.minutes(2)))
    func editsUnderWatchGlideFadeAndRefuseBrokenPatchesWithoutAClick() throws {
        let server = try DummyJackServer(period: 256, sampleRate: 48_000)
        let folder = NSTemporaryDirectory() + "osct-reload-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/live.yaml"
        try Self.patch(toneVolume: 0.25, right: "leaving").write(toFile: path, atomically: true, encoding: .utf8)
        let run = try SoundstageRun(patch: path, server: server, clientName: "ss_reload", extraArguments: ["--watch"])
        let client = OSCTestClient(port: run.port)
        #expect(client.command("/notify", [.int32(1)])?.address == "/done")
        let xrunsBefore = xruns(client)
        // Long enough for the three edits, each applied once the file has been still for 1 s.
        let capture = try JackRecCapture(
            server: server, ports: [run.outputPort(1), run.outputPort(2)], seconds: 7)
        let start = Date()
        let origin = playerOrigin(client, "tone")
        #expect(origin != nil)

        // 1. The tone glides up; `leaving` goes (saved by renaming a new file over the old, as editors do).
        Thread.sleep(until: start.addingTimeInterval(0.8))
        try Self.patch(toneVolume: 0.75, right: nil).write(toFile: path, atomically: true, encoding: .utf8)
        let first = notification(client, "/patch/reload")
        #expect(first?.arguments == [.string(path)], "no /patch/reload: \(run.child.output.suffix(1500))")
        #expect(volume(client, "tone").map { abs($0 - 0.75) < 1e-6 } == true)
        #expect(client.request("/node/leaving/volume")?.address != "/node/leaving/volume")
        _ = client.takeErrors()

        // 2. `arriving` comes in on the right (written in place this time).
        Thread.sleep(until: start.addingTimeInterval(2.0))
        try Data(Self.patch(toneVolume: 0.75, right: "arriving", jack: "out_1").utf8).write(
            to: URL(fileURLWithPath: path))
        #expect(notification(client, "/patch/reload") != nil, "no second /patch/reload")
        // The JACK connection the edit added is made (jack_lsp asked until it answers with it).
        #expect(
            ExternalLibloToolsTests.waitUntil(timeout: 3) {
                server.isConnected(run.outputPort(1), to: "system:playback_1")
            },
            "\(server.connections())\n\(run.child.output.suffix(1500))")
        #expect(volume(client, "arriving").map { abs($0 - 0.25) < 1e-6 } == true)
        // The tone played on through both reloads: its timeline was never restarted.
        #expect(playerOrigin(client, "tone") == origin)

        // 3. A broken patch (the tone's volume out of range on line 9, and a misspelt parameter): refused
        // whole, the reason with line:column to stderr and to the subscriber, the graph untouched.
        Thread.sleep(until: start.addingTimeInterval(3.0))
        let broken = Self.patch(toneVolume: 0.1, right: nil, extra: ", pann: 0").replacingOccurrences(
            of: "volume: 0.1", with: "volume: 7")
        try broken.write(toFile: path, atomically: true, encoding: .utf8)
        let refusal = notification(client, "/patch/reload_failed")
        let message = refusal.flatMap { $0.arguments.count == 2 ? $0.arguments[1].stringValue : nil } ?? ""
        #expect(refusal?.arguments.first == .string(path))
        #expect(message.contains("\(path):9:"), "\(message)")
        #expect(message.contains("pann"), "\(message)")
        #expect(volume(client, "tone").map { abs($0 - 0.75) < 1e-6 } == true, "the refused patch changed the tone")
        #expect(volume(client, "arriving").map { abs($0 - 0.25) < 1e-6 } == true, "the refused patch removed a node")
        #expect(client.take("/patch/reload").isEmpty)

        let channels = try capture.finish()
        let xrunCount = xruns(client).flatMap { after in xrunsBefore.map { after - $0 } }
        #expect(client.command("/quit")?.address == "/done")
        #expect(run.child.waitForExit(timeout: 10) == 0)
        let log = run.child.output
        #expect(log.contains("reload refused"), "\(log.suffix(2000))")
        #expect(log.contains("\(path):9:"), "stderr lacks line:column: \(log.suffix(2000))")

        try #require(channels.count == 2 && channels[0].count > 6 * 48_000)
        // The first quarter second is left out: jack_rec joining the graph can cost the dummy server a
        // period there (seen as a step in both channels at once), and no reload happens before 0.8 s.
        let (left, right) = (Array(channels[0].dropFirst(12_000)), Array(channels[1].dropFirst(12_000)))
        // What the user hears: the tone from 0.25 to 0.75 peak, never restarted nor stepped; `leaving`
        // fading to silence, then `arriving` fading in, both without a step.
        let leftClicks = Self.clicks(left, frequency: 220)
        let rightClicks = Self.clicks(right, frequency: 330)
        let context = Comment(
            rawValue: "left clicks at \(leftClicks), right clicks at \(rightClicks), xruns during the capture "
                + "\(xrunCount.map(String.init) ?? "?"), left ratio "
                + "\(ClickDetector.secondDifferenceRatio(left[...], frequency: 220, sampleRate: 48_000)), right ratio "
                + "\(ClickDetector.secondDifferenceRatio(right[...], frequency: 330, sampleRate: 48_000))")
        // A period the dummy server drops (an xrun) is a real discontinuity, not the reload's: each xrun
        // may explain one click per channel, and nothing else may.
        let allowed = xrunCount ?? 0
        #expect(leftClicks.count <= allowed && rightClicks.count <= allowed, context)
        let early = 0..<24_000
        let late = (left.count - 24_000)..<left.count
        #expect(abs(Self.rms(left, early) - 0.25 / 2.0.squareRoot()) < 0.01, context)
        #expect(abs(Self.rms(left, late) - 0.75 / 2.0.squareRoot()) < 0.02, context)
        #expect(abs(Self.rms(right, early) - 0.25 / 2.0.squareRoot()) < 0.01, context)
        #expect(abs(Self.rms(right, late) - 0.25 / 2.0.squareRoot()) < 0.01, context)
        // Between the first and the second reload the right channel is silent for a while.
        let windows = stride(from: 0, to: right.count - 4_800, by: 4_800).map { Self.rms(right, $0..<($0 + 4_800)) }
        #expect(windows.contains { $0 < 1e-5 }, "the removed node never went silent: \(windows)")
        print(
            "hot reload: left clicks \(leftClicks), right clicks \(rightClicks), left ratio \(ClickDetector.secondDifferenceRatio(left[...], frequency: 220, sampleRate: 48_000)), "
                + "right ratio \(ClickDetector.secondDifferenceRatio(right[...], frequency: 330, sampleRate: 48_000)), "
                + "xruns \(xrunCount.map(String.init) ?? "?")")
    }

    /// The click counter itself: a clean gliding sine has none, a 1 % step has one.
    @Test func theClickCounterHearsASmallStepAndNotAGlide() {
        let w = 2 * Double.pi * 220 / 48_000
        let glide = (0..<48_000).map { n in Float((0.25 + 0.5 * Double(n) / 48_000) * sin(w * Double(n))) }
        #expect(Self.clicks(glide, frequency: 220).isEmpty)
        var stepped = glide
        for n in 20_000..<stepped.count { stepped[n] += 0.0075 }
        #expect(Self.clicks(stepped, frequency: 220) == [19_999])
    }

    /// A reload that removes an effect insert with the JACK connection of its port: the port took the
    /// connection with it, which is no failure to print.
    @Test(.needsJackAndSoundstage, .timeLimit(.minutes(2)))
    func removingAnInsertWithItsJackConnectionReportsNoFailure() throws {
        let server = try DummyJackServer(period: 256, sampleRate: 48_000)
        let folder = NSTemporaryDirectory() + "osct-insert-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/live.yaml"
        let withInsert =
            Self.patch(toneVolume: 0.25, right: nil).replacingOccurrences(
                of: "connections:\n",
                with: "  - { name: verb, kind: reverb, params: { insert: true } }\nconnections:\n")
            + "jack:\n  connect:\n    - { from: verb_out_1, to: \"system:playback_2\" }\n"
        try withInsert.write(toFile: path, atomically: true, encoding: .utf8)
        let run = try SoundstageRun(patch: path, server: server, clientName: "ss_insert")
        #expect(
            ExternalLibloToolsTests.waitUntil(timeout: 3) {
                server.isConnected("ss_insert:verb_out_1", to: "system:playback_2")
            }, "\(run.child.output.suffix(1500))")
        let client = OSCTestClient(port: run.port)
        #expect(client.command("/notify", [.int32(1)])?.address == "/done")
        try Self.patch(toneVolume: 0.25, right: nil).write(toFile: path, atomically: true, encoding: .utf8)
        kill(run.child.pid, SIGHUP)
        #expect(notification(client, "/patch/reload") != nil, "\(run.child.output.suffix(1500))")
        #expect(client.command("/quit")?.address == "/done")
        #expect(run.child.waitForExit(timeout: 10) == 0)
        #expect(run.child.output.contains("JACK: 0 connection(s) made, 1 removed"), "\(run.child.output.suffix(1500))")
        #expect(!run.child.output.contains("FAILED"), "\(run.child.output.suffix(1500))")
    }

    /// Reloads that move out_1 from one playback port to the other make the new connection before they
    /// break the old: the route never loses its last connection, so `pauseOnRouteLoss` pauses nobody.
    @Test(.needsJackAndSoundstage, .timeLimit(.minutes(2)))
    func aReloadMovingAnOutputNeverLosesTheRoute() throws {
        let server = try DummyJackServer(period: 256, sampleRate: 48_000)
        let folder = NSTemporaryDirectory() + "osct-move-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/live.yaml"
        func patch(playback: Int) -> String {
            Self.patch(toneVolume: 0.25, right: nil) + "session:\n  pauseOnRouteLoss: true\n"
                + "jack:\n  connect:\n    - { from: out_1, to: \"system:playback_\(playback)\" }\n"
        }
        try patch(playback: 1).write(toFile: path, atomically: true, encoding: .utf8)
        let run = try SoundstageRun(patch: path, server: server, clientName: "ss_move")
        #expect(
            ExternalLibloToolsTests.waitUntil(timeout: 3) {
                server.isConnected(run.outputPort(1), to: "system:playback_1")
            })
        let client = OSCTestClient(port: run.port)
        #expect(client.command("/notify", [.int32(1)])?.address == "/done")
        for round in 1...8 {
            let playback = round % 2 == 1 ? 2 : 1
            try patch(playback: playback).write(toFile: path, atomically: true, encoding: .utf8)
            kill(run.child.pid, SIGHUP)
            #expect(notification(client, "/patch/reload") != nil, "round \(round): \(run.child.output.suffix(1500))")
            #expect(
                ExternalLibloToolsTests.waitUntil(timeout: 3) {
                    server.isConnected(run.outputPort(1), to: "system:playback_\(playback)")
                        && !server.isConnected(run.outputPort(1), to: "system:playback_\(3 - playback)")
                }, "round \(round): \(server.connections())")
        }
        client.receive(timeout: 0.5)
        let changes = client.take("/session/route_change").map(\.arguments)
        #expect(changes.count >= 8, "\(changes)")
        // No moment without a connection: every route announced holds a playback port.
        #expect(changes.allSatisfy { $0.count == 3 && $0[2] != .string("") }, "\(changes)")
        #expect(client.take("/session/interruption").isEmpty)
        #expect(client.request("/node/tone/playing")?.arguments.first?.boolValue == true)
        #expect(client.command("/quit")?.address == "/done")
        #expect(run.child.waitForExit(timeout: 10) == 0)
    }

    /// A save written in two steps 0.5 s apart (a slow copy, an editor writing in place): the first
    /// half is a valid patch without `second`, which was once applied (removing `second`, which the
    /// second half brought back, restarted). Only the whole file is applied.
    @Test(.needsJackAndSoundstage, .timeLimit(.minutes(2)))
    func aSaveWrittenInStepsIsReloadedWhole() throws {
        let server = try DummyJackServer(period: 256, sampleRate: 48_000)
        let folder = NSTemporaryDirectory() + "osct-steps-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/live.yaml"
        try Self.patch(toneVolume: 0.25, right: "second").write(toFile: path, atomically: true, encoding: .utf8)
        let run = try SoundstageRun(patch: path, server: server, clientName: "ss_steps", extraArguments: ["--watch"])
        let client = OSCTestClient(port: run.port)
        #expect(client.command("/notify", [.int32(1)])?.address == "/done")
        let origin = playerOrigin(client, "second")
        #expect(origin != nil)

        let whole = Self.patch(toneVolume: 0.5, right: "second")
        let cut = whole.range(of: "  - { name: second")!.lowerBound
        let file = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        try file.truncate(atOffset: 0)
        try file.write(contentsOf: Data(whole[..<cut].utf8))
        try file.synchronize()
        Thread.sleep(forTimeInterval: 0.5)
        try file.write(contentsOf: Data(whole[cut...].utf8))
        try file.close()

        #expect(notification(client, "/patch/reload")?.arguments == [.string(path)], "\(run.child.output.suffix(1500))")
        #expect(volume(client, "tone").map { abs($0 - 0.5) < 1e-6 } == true)
        #expect(playerOrigin(client, "second") == origin, "second was removed or restarted")
        client.receive(timeout: 1.5)
        #expect(client.take("/patch/reload").isEmpty, "the file was applied more than once")
        #expect(client.take("/node/removed").isEmpty)
        #expect(client.command("/quit")?.address == "/done")
        #expect(run.child.waitForExit(timeout: 10) == 0)
        #expect(
            run.child.output.components(separatedBy: "patch reloaded").count == 2, "\(run.child.output.suffix(1500))")
    }

    @Test(.needsJackAndSoundstage, .timeLimit(.minutes(2)))
    func sighupReloadsWithoutWatch() throws {
        let server = try DummyJackServer(period: 256, sampleRate: 48_000)
        let folder = NSTemporaryDirectory() + "osct-sighup-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/live.yaml"
        try Self.patch(toneVolume: 0.25, right: nil, jack: "out_1").write(
            toFile: path, atomically: true, encoding: .utf8)
        let run = try SoundstageRun(patch: path, server: server, clientName: "ss_sighup")
        #expect(
            ExternalLibloToolsTests.waitUntil(timeout: 3) {
                server.isConnected(run.outputPort(1), to: "system:playback_1")
            })
        let client = OSCTestClient(port: run.port)
        #expect(client.command("/notify", [.int32(1)])?.address == "/done")

        try Self.patch(toneVolume: 0.5, right: "arriving").write(toFile: path, atomically: true, encoding: .utf8)
        // Without --watch an edit alone changes nothing.
        Thread.sleep(forTimeInterval: 0.6)
        #expect(volume(client, "tone").map { abs($0 - 0.25) < 1e-6 } == true)
        #expect(client.take("/patch/reload").isEmpty)

        kill(run.child.pid, SIGHUP)
        #expect(notification(client, "/patch/reload")?.arguments == [.string(path)], "\(run.child.output.suffix(1500))")
        #expect(volume(client, "tone").map { abs($0 - 0.5) < 1e-6 } == true)
        #expect(volume(client, "arriving").map { abs($0 - 0.25) < 1e-6 } == true)
        #expect(client.request("/node/tone/playing")?.arguments.first?.boolValue == true)
        #expect(run.child.isRunning, "SIGHUP ended soundstage run")
        // The JACK connection the edit removed is undone.
        #expect(
            ExternalLibloToolsTests.waitUntil(timeout: 3) {
                !server.isConnected(run.outputPort(1), to: "system:playback_1")
            },
            "\(server.connections())\n\(run.child.output.suffix(1500))")
        #expect(client.command("/quit")?.address == "/done")
        #expect(run.child.waitForExit(timeout: 10) == 0)
        #expect(run.child.output.contains("patch reloaded (SIGHUP)"), "\(run.child.output.suffix(1500))")
    }
}

// `soundstage run` under the New Session Manager, end to end: a real `soundstage run` child, a private
// jackd, and the test as the session manager (NSMTestServer, NSM API 1.1.2 messages). Announce, open as
// the client id, edits reported dirty, save (files copied in, JACK connections kept) reloading to the
// same sound offline, switch in place, recordings closed on SIGTERM, protocol errors with NSM's codes.
import AudioFiles
import Foundation
import Glibc
@testable import OSCControl
import Testing

extension OSCExternalSerialSuites {
    @Suite struct NSMSessionRunTests {}
}

/// A `soundstage run` child under `NSMTestServer`.
private final class ManagedRun {
    let nsm = NSMTestServer()
    let child: ChildProcess
    let root: String

    /// Starts `soundstage run [patch] --server … --no-start-server` with NSM_URL set.
    init(server: DummyJackServer, patch: String?, extraArguments: [String] = []) throws {
        root = NSTemporaryDirectory() + "osct-nsm-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        child = try ChildProcess(
            SoundstageRun.executable,
            ["run"] + (patch.map { [$0] } ?? []) + [
                "--server", server.name, "--osc-port", "0", "--no-start-server"
            ] + extraArguments,
            environment: ["NSM_URL": nsm.url])
    }

    deinit {
        child.stop()
        try? FileManager.default.removeItem(atPath: root)
    }

    /// The OSC port of the session that played last ("OSC: udp and tcp on 127.0.0.1:PORT").
    func oscPort(after marker: Int = 0) -> Int? {
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            let text = String(child.output.dropFirst(marker))
            let matches = text.matches(of: /OSC: udp and tcp on 127\.0\.0\.1:(\d+)/)
            if let last = matches.last { return Int(last.output.1) }
            usleep(50_000)
        }
        return nil
    }

    var log: Comment { Comment(rawValue: String(child.output.suffix(3000))) }
}

extension OSCExternalSerialSuites.NSMSessionRunTests {
    /// A noise file played looping by `a` (from a folder outside the session), a tone on `b`.
    private static let template = """
        version: 1
        engine: { sampleRate: 48000, outputs: 2 }
        buffers:
          - { name: noise, file: noise.wav }
          - name: tone
            generate: { waveform: sine, frequency: 330, duration: 0.5, amplitude: 0.3 }
        nodes:
          - { name: a, kind: player, params: { buffer: noise, loop: true, playing: true } }
          - { name: b, kind: player, params: { buffer: tone, loop: true, playing: true } }
        connections:
          - { from: a, to: main }
          - { from: b, to: main }

        """

    /// Writes the template and its noise file into `folder` (outside any session); returns the patch path.
    private func writeTemplate(in folder: String) throws -> String {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        var generator = SystemRandomNumberGenerator()
        let noise = (0..<2).map { _ in (0..<12_000).map { _ in Float.random(in: -0.5...0.5, using: &generator) } }
        try AudioFileWriter.write(AudioData(channels: noise, sampleRate: 48_000), to: folder + "/noise.wav")
        try Self.template.write(toFile: folder + "/template.yaml", atomically: true, encoding: .utf8)
        return folder + "/template.yaml"
    }

    /// The ports of `client` on the server, as `jack_lsp` lists them.
    private func ports(_ server: DummyJackServer, of client: String) -> [String] {
        ChildProcess.run("/usr/bin/jack_lsp", ["-s", server.name], timeout: 10).output
            .split(separator: "\n").map(String.init).filter { $0.hasPrefix(client + ":") }
    }

    /// `soundstage render PATCH` for one second; the planar output.
    private func render(_ patch: String, into folder: String) throws -> [[Float]] {
        let out = folder + "/render-\(UUID().uuidString).wav"
        let result = ChildProcess.run(
            SoundstageRun.executable, ["render", patch, "--out", out, "--duration", "1", "--quiet"], timeout: 60)
        guard result.status == 0 else { throw ExternalSetupError("render failed: \(result.output)") }
        return try AudioFileReader.load(path: out).channels
    }

    @Test(.needsJackAndSoundstage, .timeLimit(.minutes(3)))
    func announcesOpensAsTheClientIDSavesAndTheSaveReloadsToTheSameSound() throws {
        let server = try DummyJackServer()
        let library = NSTemporaryDirectory() + "osct-nsm-library-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: library) }
        let template = try writeTemplate(in: library)
        let managed = try ManagedRun(server: server, patch: template)

        // Announce: the API's six arguments; no JACK client before open.
        let announce = try #require(managed.nsm.acceptAnnounce(), managed.log)
        #expect(announce.arguments.count == 6)
        #expect(announce.arguments.prefix(2) == [.string("Soundstage"), .string(":switch:dirty:message:")])
        #expect(announce.arguments[2].stringValue?.hasSuffix("soundstage") == true)
        #expect(Array(announce.arguments.suffix(3)) == [.int32(1), .int32(1), .int32(managed.child.pid)])
        usleep(300_000)
        #expect(ports(server, of: "Soundstage.nTEST").isEmpty && ports(server, of: "soundstage").isEmpty)

        // Open: a new session from the template, saved in the folder, the JACK client named by the id.
        let session = managed.root + "/Session/Soundstage.nTEST"
        let opened = try #require(managed.nsm.open(path: session, clientID: "Soundstage.nTEST"), managed.log)
        #expect(opened.address == "/reply", managed.log)
        #expect(ports(server, of: "Soundstage.nTEST") == ["Soundstage.nTEST:out_1", "Soundstage.nTEST:out_2"])
        #expect(FileManager.default.fileExists(atPath: session + "/patch.yaml"))
        #expect(FileManager.default.contentsEqual(atPath: library + "/noise.wav", andPath: session + "/noise.wav"))
        #expect(managed.nsm.waitFor("/nsm/client/is_clean") != nil, managed.log)

        // Edits over OSC make it dirty: a parameter, a connection, a JACK connection.
        let client = OSCTestClient(port: try #require(managed.oscPort(), managed.log))
        client.send("/node/a/volume", [.float(0.5)])
        #expect(client.request("/node/a/volume")?.arguments.first?.doubleValue == 0.5)
        #expect(managed.nsm.waitFor("/nsm/client/is_dirty") != nil, managed.log)
        #expect(client.command("/node/new", [.string("mixer"), .string("bus")])?.address == "/done")
        #expect(client.command("/graph/disconnect", [.string("b"), .string("main")])?.address == "/done")
        #expect(client.command("/graph/connect", [.string("b"), .string("bus")])?.address == "/done")
        #expect(client.command("/graph/connect", [.string("bus"), .string("main")])?.address == "/done")
        client.send("/node/bus/volume", [.float(0.25)])
        #expect(client.request("/node/bus/volume")?.arguments.first?.doubleValue == 0.25)
        let jackEdit = client.command(
            "/graph/connect", [.string("Soundstage.nTEST:out_1"), .string("system:playback_2")])
        #expect(jackEdit?.address == "/done", "\(String(describing: jackEdit))")

        // Save: the reply, then clean; the file holds the edits and the JACK connection.
        let saved = try #require(managed.nsm.save(), managed.log)
        #expect(saved.address == "/reply", managed.log)
        #expect(managed.nsm.waitFor("/nsm/client/is_clean") != nil, managed.log)
        let text = try String(contentsOfFile: session + "/patch.yaml", encoding: .utf8)
        #expect(text.contains("file: noise.wav"), Comment(rawValue: text))
        #expect(text.contains("from: out_1") && text.contains("to: \"system:playback_2\""), Comment(rawValue: text))

        // The saved session renders exactly as the same graph written by hand.
        let expected = library + "/expected.yaml"
        try Self.template
            .replacingOccurrences(
                of: "params: { buffer: noise, loop: true, playing: true }",
                with: "params: { buffer: noise, loop: true, playing: true, volume: 0.5 }"
            )
            .replacingOccurrences(
                of: "  - { from: b, to: main }\n", with: "  - { from: b, to: bus }\n  - { from: bus, to: main }\n"
            )
            .replacingOccurrences(
                of: "connections:", with: "  - { name: bus, kind: mixer, params: { volume: 0.25 } }\nconnections:"
            )
            .write(toFile: expected, atomically: true, encoding: .utf8)
        let reference = try render(expected, into: managed.root)
        let reloaded = try render(session + "/patch.yaml", into: managed.root)
        #expect(reference.count == 2 && reloaded.count == 2)
        #expect(reference.map { $0.map(\.magnitude).max() ?? 0 }.allSatisfy { $0 > 0.05 }, "silent reference")
        #expect(reference == reloaded, "the saved session does not render like the graph it holds")

        // SIGTERM: a clean quit.
        #expect(managed.child.stop(signal: SIGTERM, grace: 10) == false)
        #expect(managed.child.terminationStatus == 0, managed.log)
    }

    @Test(.needsJackAndSoundstage, .timeLimit(.minutes(3)))
    func aSecondOpenSwitchesInPlaceAndReopensTheJackClientUnderTheNewID() throws {
        let server = try DummyJackServer()
        let managed = try ManagedRun(server: server, patch: nil)
        _ = try #require(managed.nsm.acceptAnnounce(), managed.log)
        let first = managed.root + "/One/Soundstage.nAAAA"
        #expect(managed.nsm.open(path: first, clientID: "Soundstage.nAAAA")?.address == "/reply", managed.log)
        #expect(ports(server, of: "Soundstage.nAAAA").count == 2)
        let marker = managed.child.output.count
        // An empty graph is saved as the new session.
        #expect(FileManager.default.fileExists(atPath: first + "/patch.yaml"))
        let client = OSCTestClient(port: try #require(managed.oscPort(), managed.log))
        #expect(client.command("/node/new", [.string("player"), .string("p")])?.address == "/done")
        #expect(managed.nsm.waitFor("/nsm/client/is_dirty") != nil, managed.log)

        // The second session: another folder, another id; the same process.
        let second = managed.root + "/Two/Soundstage.nBBBB"
        // The save that follows at once (one burst) is for the new session.
        managed.nsm.send("/nsm/client/open", [.string(second), .string("Two"), .string("Soundstage.nBBBB")])
        managed.nsm.send("/nsm/client/save")
        let switched = managed.nsm.awaitAnswer(to: "/nsm/client/open")
        #expect(switched?.address == "/reply", managed.log)
        #expect(managed.nsm.awaitAnswer(to: "/nsm/client/save")?.address == "/reply", managed.log)
        #expect(managed.child.isRunning)
        #expect(ports(server, of: "Soundstage.nAAAA").isEmpty)
        #expect(ports(server, of: "Soundstage.nBBBB").count == 2)
        #expect(managed.nsm.waitFor("/nsm/client/is_clean") != nil, managed.log)
        // The new session is its own: the node made in the first (never saved) is not in it.
        let again = OSCTestClient(port: try #require(managed.oscPort(after: marker), managed.log))
        again.send("/node/p/volume")
        #expect(again.awaitOutcome("/node/p/volume")?.address == "/error")
        #expect(managed.child.stop(signal: SIGTERM, grace: 10) == false)
        #expect(managed.child.terminationStatus == 0, managed.log)
    }

    @Test(.needsJackAndSoundstage, .timeLimit(.minutes(3)))
    func sigtermClosesRecordingsWhichGoToTheSessionFolder() throws {
        let server = try DummyJackServer()
        let managed = try ManagedRun(server: server, patch: nil)
        _ = try #require(managed.nsm.acceptAnnounce(), managed.log)
        let session = managed.root + "/Rec/Soundstage.nREC"
        #expect(managed.nsm.open(path: session, clientID: "Soundstage.nREC")?.address == "/reply", managed.log)
        let client = OSCTestClient(port: try #require(managed.oscPort(), managed.log))
        #expect(
            client.command("/recorder/new", [.string("take"), .string("main"), .string("take.wav")])?.address == "/done"
        )
        #expect(client.command("/recorder/take/record")?.address == "/done")
        usleep(700_000)
        #expect(managed.child.stop(signal: SIGTERM, grace: 10) == false)
        #expect(managed.child.terminationStatus == 0, managed.log)
        // A relative recording path lands in the session folder, and the file is complete.
        let info = try AudioFileReader.info(path: session + "/take.wav")
        #expect(info.frameCount > 4_800, "recorded \(info.frameCount) frames")
    }

    /// The same cycle with a manager nobody here wrote the OSC of: python-osc builds and parses every
    /// message, and the script launches `soundstage run` itself, as nsmd does.
    @Test(
        .requiresTool(
            "python-osc", PythonOSC.interpreter.path != nil, "python-osc is not available (PyPI unreachable?)"),
        .needsJackAndSoundstage, .timeLimit(.minutes(2)))
    func aPythonOSCSessionManagerDrivesAFullCycle() throws {
        let server = try DummyJackServer()
        let root = NSTemporaryDirectory() + "osct-nsm-py-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: root) }
        try ExternalPythonOSCTests.runScript(
            "ext_nsm_server.py", [SoundstageRun.executable, server.name, root, root + "/soundstage.log"])
    }

    @Test(.needsJackAndSoundstage, .timeLimit(.minutes(3)))
    func sigtermBeforeOpenQuitsAtOnceWithoutEverOpeningAJackClient() throws {
        let server = try DummyJackServer()
        let managed = try ManagedRun(server: server, patch: nil)
        _ = try #require(managed.nsm.acceptAnnounce(), managed.log)
        usleep(300_000)
        #expect(!server.connections().contains("soundstage") && !server.connections().contains("Soundstage"))
        #expect(managed.child.stop(signal: SIGTERM, grace: 5) == false)
        #expect(managed.child.terminationStatus == 0, managed.log)
    }

    @Test(.needsJackAndSoundstage, .timeLimit(.minutes(3)))
    func protocolErrorsAreAnsweredWithNSMCodes() throws {
        let server = try DummyJackServer()
        let managed = try ManagedRun(server: server, patch: nil)
        _ = try #require(managed.nsm.acceptAnnounce(), managed.log)
        // Save before any open: ERR_NO_SESSION_OPEN.
        let early = managed.nsm.save()
        #expect(early?.address == "/error" && early?.arguments.dropFirst().first == .int32(-6), managed.log)
        // An open with the wrong arguments: ERR_GENERAL.
        managed.nsm.send("/nsm/client/open", [.string("/tmp/x"), .int32(3)])
        let malformed = managed.nsm.awaitAnswer(to: "/nsm/client/open")
        #expect(malformed?.address == "/error" && malformed?.arguments.dropFirst().first == .int32(-1), managed.log)
        // A session whose patch is broken: ERR_BAD_PROJECT, and nothing runs.
        let broken = managed.root + "/Broken/Soundstage.nBAD"
        try FileManager.default.createDirectory(atPath: broken, withIntermediateDirectories: true)
        try "version: 1\nnodes:\n  - { name: x, kind: nonsense }\n".write(
            toFile: broken + "/patch.yaml", atomically: true, encoding: .utf8)
        let bad = managed.nsm.open(path: broken, clientID: "Soundstage.nBAD")
        #expect(bad?.address == "/error" && bad?.arguments.dropFirst().first == .int32(-9), managed.log)
        #expect(ports(server, of: "Soundstage.nBAD").isEmpty)
        // A folder that cannot be made: ERR_CREATE_FAILED.
        let impossible = managed.nsm.open(path: "/proc/nope/Soundstage.nX", clientID: "Soundstage.nX")
        #expect(impossible?.address == "/error" && impossible?.arguments.dropFirst().first == .int32(-10))
        // A client id longer than a JACK client name may be, and paths that are no session folder:
        // answered before anything is made.
        let longID = "Soundstage." + String(repeating: "n", count: 53)
        let long = managed.nsm.open(path: managed.root + "/Long/" + longID, clientID: longID)
        #expect(long?.address == "/error" && long?.arguments.dropFirst().first == .int32(-1), managed.log)
        #expect(!FileManager.default.fileExists(atPath: managed.root + "/Long"))
        for path in ["/", "", "relative/Soundstage.nR"] {
            let refused = managed.nsm.open(path: path, clientID: "Soundstage.nR")
            #expect(refused?.address == "/error" && refused?.arguments.dropFirst().first == .int32(-10), managed.log)
        }
        #expect(!FileManager.default.fileExists(atPath: "/patch.yaml"))
        // A message Soundstage does not serve: ERR_GENERAL.
        managed.nsm.send("/nsm/client/show_optional_gui")
        let gui = managed.nsm.awaitAnswer(to: "/nsm/client/show_optional_gui")
        #expect(gui?.address == "/error" && gui?.arguments.dropFirst().first == .int32(-1), managed.log)
        // A good open still works afterwards; /quit over OSC is refused while managed.
        let good = managed.root + "/Good/Soundstage.nOK"
        #expect(managed.nsm.open(path: good, clientID: "Soundstage.nOK")?.address == "/reply", managed.log)
        let client = OSCTestClient(port: try #require(managed.oscPort(), managed.log))
        #expect(client.command("/quit")?.address == "/error")
        // A switch to an id JACK refuses leaves the session in force playing.
        let switchTo = managed.nsm.open(path: managed.root + "/Long2/" + longID, clientID: longID)
        #expect(switchTo?.address == "/error", managed.log)
        #expect(ports(server, of: "Soundstage.nOK").count == 2)
        #expect(client.request("/ping", reply: "/pong") != nil)
        #expect(managed.child.isRunning)
        #expect(managed.child.stop(signal: SIGTERM, grace: 10) == false)
        #expect(managed.child.terminationStatus == 0, managed.log)
    }

    /// An interruption (the server's loss, a rig's `/session/interrupt`) is no edit, and a save during one
    /// writes the session it will resume: the players it paused written playing, the JACK connections the
    /// host will restore kept. A real edit during one still is an edit.
    @Test(.needsJackAndSoundstage, .timeLimit(.minutes(3)))
    func aSaveWhileTheServerIsLostWritesTheSessionItWillResumeAndNoInterruptionIsAnEdit() throws {
        let server = try DummyJackServer()
        let library = NSTemporaryDirectory() + "osct-nsm-library-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: library) }
        let managed = try ManagedRun(server: server, patch: try writeTemplate(in: library))
        _ = try #require(managed.nsm.acceptAnnounce(), managed.log)
        let session = managed.root + "/Loss/Soundstage.nLOSS"
        #expect(managed.nsm.open(path: session, clientID: "Soundstage.nLOSS")?.address == "/reply", managed.log)
        let client = OSCTestClient(port: try #require(managed.oscPort(), managed.log))
        #expect(
            client.command("/graph/connect", [.string("Soundstage.nLOSS:out_2"), .string("system:playback_1")])?
                .address == "/done")
        #expect(managed.nsm.save()?.address == "/reply", managed.log)
        #expect(managed.nsm.waitFor("/nsm/client/is_clean") != nil)
        _ = managed.nsm.waitFor(timeout: 0.5) { _ in false }
        _ = managed.nsm.take("/nsm/client/is_dirty")
        let saved = try String(contentsOfFile: session + "/patch.yaml", encoding: .utf8)
        // Both players play in the saved session, and it holds the JACK connection.
        func check(_ text: String) {
            #expect(text.components(separatedBy: "playing: true").count == 3, Comment(rawValue: text))
            #expect(text.contains("from: out_2") && text.contains("to: \"system:playback_1\""), Comment(rawValue: text))
        }
        check(saved)

        // A rig's interruption pauses the players and is no edit; an edit during it is one.
        #expect(client.command("/session/interrupt", [.string("begin")])?.address == "/done")
        #expect(managed.nsm.waitFor("/nsm/client/is_dirty", timeout: 1.5) == nil, managed.log)
        client.send("/node/a/volume", [.float(0.5)])
        #expect(managed.nsm.waitFor("/nsm/client/is_dirty") != nil, managed.log)
        client.send("/node/a/volume", [.float(1)])
        #expect(managed.nsm.waitFor("/nsm/client/is_clean") != nil, managed.log)
        #expect(client.command("/session/interrupt", [.string("end")])?.address == "/done")
        #expect(managed.nsm.waitFor("/nsm/client/is_dirty", timeout: 1.5) == nil, managed.log)

        server.kill(signal: SIGKILL)
        #expect(managed.child.waitForOutput(containing: "JACK server lost", timeout: 10) != nil, managed.log)
        // The loss changes nothing a save would write, so the session stays clean; a save during it writes
        // the players playing (they resume when the server is back) and keeps the connection; so does
        // /patch/save.
        #expect(managed.nsm.waitFor("/nsm/client/is_dirty", timeout: 1.5) == nil, managed.log)
        try FileManager.default.removeItem(atPath: session + "/patch.yaml")
        #expect(managed.nsm.save()?.address == "/reply", managed.log)
        let during = try String(contentsOfFile: session + "/patch.yaml", encoding: .utf8)
        #expect(during == saved)
        #expect(client.command("/patch/save", [.string("copy.yaml")])?.address == "/done")
        check(try String(contentsOfFile: session + "/copy.yaml", encoding: .utf8))

        // No switch while the server is away: ERR_NOT_NOW, and the session in force stays.
        let notNow = managed.nsm.open(path: managed.root + "/Other/Soundstage.nO", clientID: "Soundstage.nO")
        #expect(notNow?.address == "/error" && notNow?.arguments.dropFirst().first == .int32(-8), managed.log)

        // The return (players resumed, the connection made again) is no edit either.
        try server.startAgain(period: 256)
        #expect(managed.child.waitForOutput(containing: "JACK server back", timeout: 15) != nil, managed.log)
        #expect(managed.nsm.waitFor("/nsm/client/is_dirty", timeout: 2) == nil, managed.log)
        #expect(client.request("/node/a/playing")?.arguments.first?.boolValue == true, managed.log)
        #expect(managed.child.stop(signal: SIGTERM, grace: 10) == false)
        #expect(managed.child.terminationStatus == 0, managed.log)
    }
}

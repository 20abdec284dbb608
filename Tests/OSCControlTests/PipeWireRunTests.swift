// `soundstage run` on a private headless PipeWire, as a desktop user would meet it: without pw-jack it
// plays through PipeWire rather than starting a jackd PipeWire cannot see; under pw-jack it never
// starts a jackd; a second instance reports the name PipeWire really gave it; and /status says xruns
// cannot be counted there.
import AudioFiles
import Foundation
@testable import OSCControl
import Testing

extension OSCExternalSerialSuites {
    @Suite struct PipeWireRunTests {}
}

extension OSCExternalSerialSuites.PipeWireRunTests {
    private static let patch = """
        version: 1
        engine: { sampleRate: 48000, outputs: 2 }
        buffers:
          - name: tone
            generate: { waveform: sine, frequency: 440, duration: 1.0, amplitude: 0.2 }
        nodes:
          - { name: p, kind: player, params: { buffer: tone, loop: true, playing: true } }
        connections:
          - { from: p, to: main }

        """

    private func patchFile() throws -> (folder: String, path: String) {
        let folder = NSTemporaryDirectory() + "osct-pw-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try Self.patch.write(toFile: folder + "/tone.yaml", atomically: true, encoding: .utf8)
        return (folder, folder + "/tone.yaml")
    }

    @Test(.needsPipeWireAndSoundstage, .timeLimit(.minutes(2)))
    func aSecondInstanceReportsItsRealNameAndXrunsAreNotCounted() throws {
        let pipeWire = try PrivatePipeWire()
        let (folder, path) = try patchFile()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let first = try SoundstageRun(patch: path, pipeWire: pipeWire, clientName: "ss_twice")
        let second = try SoundstageRun(patch: path, pipeWire: pipeWire, clientName: "ss_twice")
        let lsp = pipeWire.lsp()
        let client = OSCTestClient(port: second.port)
        let status = try #require(client.request("/status", reply: "/status.reply"))
        let name = status.arguments[7].stringValue ?? ""
        #expect(name != "ss_twice" && name.hasPrefix("ss_twice"), "the second instance says it is '\(name)': \(lsp)")
        #expect(lsp.contains("\(name):out_1"), "its ports: \(lsp)")
        #expect(second.child.output.contains("JACK client '\(name)'"), "\(second.child.output.prefix(600))")
        #expect(status.arguments[4] == .int32(-1), "xruns on PipeWire: \(status)")
        for run in [first, second] {
            #expect(OSCTestClient(port: run.port).command("/quit")?.address == "/done")
            #expect(run.child.waitForExit(timeout: 10) == 0)
        }
        #expect(second.child.output.contains("xruns: not counted"))
    }

    @Test(.needsPipeWireAndSoundstage, .timeLimit(.minutes(2)))
    func underPwJackANamedServerThatIsNotThereStartsNoJackd() throws {
        let pipeWire = try PrivatePipeWire()
        let (folder, path) = try patchFile()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let name = "ss_nosuch_\(getpid())"
        let run = ChildProcess.run(
            "/usr/bin/pw-jack",
            [SoundstageRun.executable, "run", path, "--server", name, "--osc-port", "0", "--duration", "1"],
            environment: pipeWire.environment.filter { $0.key != "JACK_NO_START_SERVER" }, timeout: 30)
        #expect(run.status != 0)
        #expect(run.output.contains("no jackd is started from it"), "\(run.output.suffix(800))")
        let jackds = ChildProcess.run("/usr/bin/pgrep", ["-f", "jackd -n \(name)"], timeout: 5).output
        #expect(jackds.isEmpty, "a jackd was started: \(jackds)")
    }

    @Test(.needsPipeWireAndSoundstage, .timeLimit(.minutes(2)))
    func withoutPwJackItPlaysThroughPipeWireRatherThanStartingJackd() throws {
        let pipeWire = try PrivatePipeWire()
        let (folder, path) = try patchFile()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        var environment = pipeWire.environment.filter { $0.key != "JACK_NO_START_SERVER" }
        environment["JACK_DEFAULT_SERVER"] = ""
        let child = try ChildProcess(
            SoundstageRun.executable,
            ["run", path, "--name", "ss_desktop", "--osc-port", "0", "--duration", "3"], environment: environment)
        #expect(child.waitForOutput(containing: "playing for", timeout: 20) != nil, "\(child.output.suffix(1500))")
        #expect(pipeWire.lsp().contains("ss_desktop:out_1"), "not on PipeWire: \(pipeWire.lsp())")
        #expect(child.waitForExit(timeout: 15) == 0)
        #expect(child.output.contains("PipeWire runs here"), "\(child.output.prefix(800))")
        #expect(!child.output.contains("started jackd"))
    }

    /// The JACK integration on PipeWire: what `run` plays is its offline render sample for sample, an
    /// effect's insert ports appear, and a period asked for is the period in force.
    @Test(.needsPipeWireAndSoundstage, .timeLimit(.minutes(2)))
    func runPlaysItsRenderWithInsertsAndPeriodChanges() throws {
        let pipeWire = try PrivatePipeWire()
        let folder = NSTemporaryDirectory() + "osct-pw-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/hiss.yaml"
        try """
        version: 1
        engine: { sampleRate: 48000, outputs: 2 }
        buffers:
          - name: hiss
            generate: { waveform: noise, duration: 1.0, amplitude: 0.5, channels: 2 }
        nodes:
          - { name: p, kind: player, params: { buffer: hiss, loop: true, playing: true } }
          - { name: fx, kind: eq, params: { insert: true } }
        connections:
          - { from: p, to: main }

        """.write(toFile: path, atomically: true, encoding: .utf8)
        let render = ChildProcess.run(
            SoundstageRun.executable, ["render", path, "--out", folder + "/ref.wav", "--duration", "1"], timeout: 60)
        #expect(render.status == 0, "\(render.output)")
        let reference = try AudioFileReader.load(path: folder + "/ref.wav").channels
        let run = try SoundstageRun(patch: path, pipeWire: pipeWire, clientName: "ss_pw")
        let lsp = pipeWire.lsp()
        #expect(lsp.contains("ss_pw:fx_in_1") && lsp.contains("ss_pw:fx_out_1"), "insert ports: \(lsp)")

        // A cycle the loaded machine drops shows as a jump in the capture: one of up to four captures
        // must be the render throughout.
        var attempts: [Float] = []
        for _ in 0..<4 {
            let captured = try JackRecCapture(pipeWire: pipeWire, ports: ["ss_pw:out_1", "ss_pw:out_2"], seconds: 1)
                .finish()
            let match = LoopedRenderMatch.difference(captured, reference, period: 48_000)
            attempts.append(match?.error ?? .infinity)
            if let match, match.error < 1e-8 { break }
        }
        // jack_rec writes 32-bit integers: the float samples come back within 2^-31 of themselves.
        #expect(attempts.contains { $0 < 1e-8 }, "no capture was the render; largest differences \(attempts)")

        let client = OSCTestClient(port: run.port)
        let asked = client.command("/session/preferredIOBufferDuration", [.float(Float(512.0 / 48_000))])
        #expect(asked?.arguments == [.string("/session/preferredIOBufferDuration"), .float(Float(512.0 / 48_000))])
        let status = client.request("/status", reply: "/status.reply")
        #expect(status?.arguments[2] == .int32(512), "\(String(describing: status))")
        #expect(client.command("/quit")?.address == "/done")
        #expect(run.child.waitForExit(timeout: 10) == 0)
    }
}

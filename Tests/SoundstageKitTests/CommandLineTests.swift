import AudioFiles
import DSPTestSupport
import Foundation
import SoundstageKit
import Testing

@Suite struct CommandLineTests {
    @Test func renderIsBitIdenticalForBlockSizes1_64_256_1000() throws {
        let dir = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        var outputs: [[[Float]]] = []
        for block in [1, 64, 256, 1000] {
            let out = dir.appendingPathComponent("b\(block).wav").path
            let r = try Fixtures.run(
                Fixtures.executable,
                [
                    "render", Fixtures.patches.appendingPathComponent("submix.yaml").path, "--out", out,
                    "--duration", "1.5", "--block", "\(block)"
                ])
            #expect(r.status == 0, "\(r.stderr)")
            outputs.append(try AudioFileReader.load(path: out).channels)
            // The files themselves are equal too: no timestamp in them.
            #expect(
                try Data(contentsOf: URL(fileURLWithPath: out))
                    == Data(contentsOf: dir.appendingPathComponent("b1.wav")))
        }
        let audio = try AudioFileReader.load(path: dir.appendingPathComponent("b64.wav").path)
        #expect(audio.frameCount == 72_000)
        #expect(SignalStats.peak(audio.channels[0][...]) > 0.05)
        for data in outputs.dropFirst() { #expect(data == outputs[0]) }
    }

    @Test func checkReportsLineAndColumnAndFails() throws {
        let dir = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let bad = try Fixtures.write("version: 1\nnodes:\n  - { name: x, kind: wobble }\n", to: "bad.yaml", in: dir)
        let r = try Fixtures.run(Fixtures.executable, ["check", bad])
        #expect(r.status != 0)
        #expect(r.stderr.contains("bad.yaml:3:") && r.stderr.contains("unknown node kind 'wobble'"))
        let good = try Fixtures.run(
            Fixtures.executable, ["check", Fixtures.patches.appendingPathComponent("hello.yaml").path])
        #expect(good.status == 0 && good.stdout.contains("ok"))
    }

    @Test func badArgumentsAndPatchesExitNonZeroWithAMessage() throws {
        let hello = Fixtures.patches.appendingPathComponent("hello.yaml").path
        let cases: [([String], String)] = [
            // A negative value is the option's value, refused as out of range (not "Missing value").
            (
                ["render", hello, "--out", "/tmp/x.wav", "--duration", "-1"],
                "--duration must be a number of seconds > 0"
            ),
            (
                ["render", hello, "--out", "/tmp/x.wav", "--duration", "1", "--rate", "-48000"],
                "--rate must be a whole number of Hz between"
            ),
            // Refused before anything is rendered, not after.
            (
                ["render", hello, "--out", "/tmp/x.wav", "--duration", "1", "--rate", "47999.5"],
                "--rate must be a whole number"
            ),
            (["convert", hello, "/tmp/x.wav", "--channels", "-2"], "--channels"),
            (["render", hello, "--out", "/tmp/x.wav", "--duration", "1", "--block", "0"], "--block"),
            (["render", "/no/such/patch.yaml", "--out", "/tmp/x.wav", "--duration", "1"], "patch.yaml"),
            (["render", hello, "--out", "/no/such/dir/x.wav", "--duration", "1"], "its directory does not exist"),
            // A folder that exists but makes no files is not called missing.
            (["render", hello, "--out", "/proc/soundstage-x.wav", "--duration", "1"], "its folder takes no new files"),
            (["run", "/no/such/patch.yaml"], "patch.yaml"),
            (["frobnicate"], "frobnicate")
        ]
        for (args, needle) in cases {
            let r = try Fixtures.run(Fixtures.executable, args)
            #expect(r.status != 0, "\(args)")
            #expect((r.stderr + r.stdout).contains(needle), "\(args): \(r.stderr)")
        }
    }
}

@Suite struct FileRootTests {
    /// A patch in the working directory gives one root, not the same folder twice.
    @Test func thePatchFolderAndTheWorkingDirectoryAreNamedOnce() throws {
        let here = FileManager.default.currentDirectoryPath
        #expect(FileAccessPolicy.defaults(patchPath: here + "/p.yaml").roots.count == 1)
        #expect(FileAccessPolicy.defaults(patchPath: "p.yaml").roots.count == 1)
        #expect(FileAccessPolicy.defaults(patchPath: "/nonexistent-folder/p.yaml").roots.count == 2)
    }
}

@Suite(.serialized) struct RunCommandTests {
    @Test func runStartsAServerWhenNoneRunsAndStopsItOnExit() throws {
        let server = "ss_cli_\(getpid())_\(UInt32.random(in: 0..<UInt32.max))"
        let r = try Fixtures.run(
            Fixtures.executable,
            [
                "run", Fixtures.patches.appendingPathComponent("hello.yaml").path, "--server", server, "--duration",
                "1.5",
                "--osc-port", "0"
            ], timeout: 60)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("No JACK server '\(server)' was running: started jackd (dummy backend"))
        #expect(r.stdout.contains("\(server)") && r.stdout.contains("soundstage:out_1"))
        let check = try Fixtures.run("/usr/bin/jack_wait", ["-s", server, "-c"], timeout: 10)
        #expect(check.stdout.contains("not running"))
    }

    @Test func runWithoutAServerAndNoStartFailsClearly() throws {
        let server = "ss_none_\(getpid())_\(UInt32.random(in: 0..<UInt32.max))"
        let r = try Fixtures.run(
            Fixtures.executable,
            [
                "run", Fixtures.patches.appendingPathComponent("hello.yaml").path, "--server", server,
                "--no-start-server",
                "--osc-port", "0"
            ], timeout: 30)
        #expect(r.status != 0)
        #expect(r.stderr.contains("no JACK server named '\(server)'"))
    }

    @Test func takenClientNameFallsBackToJacksRename() throws {
        let server = "ss_name_\(getpid())_\(UInt32.random(in: 0..<UInt32.max))"
        let jackd = try Fixtures.startJackd(named: server)
        defer {
            jackd.terminate()
            jackd.waitUntilExit()
        }
        let hello = Fixtures.patches.appendingPathComponent("hello.yaml").path
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("first-\(server).log")
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        defer { try? FileManager.default.removeItem(at: log) }
        let first = Process()
        first.executableURL = URL(fileURLWithPath: Fixtures.executable)
        first.arguments = ["run", hello, "--server", server, "--duration", "30", "--no-start-server", "--osc-port", "0"]
        first.standardOutput = try FileHandle(forWritingTo: log)
        first.standardError = FileHandle.nullDevice
        try first.run()
        // Wait until the first instance reports its ports (it prints them once the client is active).
        var firstIsUp = false
        let deadline = Date().addingTimeInterval(20)
        while !firstIsUp && Date() < deadline {
            firstIsUp = ((try? String(contentsOf: log, encoding: .utf8)) ?? "").contains("ports: soundstage:out_1")
            if !firstIsUp { usleep(50_000) }
        }
        #expect(firstIsUp)
        let second = try Fixtures.run(
            Fixtures.executable,
            [
                "run", hello, "--server", server, "--duration", "1", "--no-start-server",
                "--osc-port", "0"
            ])
        first.terminate()  // SIGTERM: a clean shutdown
        first.waitUntilExit()
        #expect(first.terminationStatus == 0)
        #expect(second.status == 0, "\(second.stderr)")
        #expect(second.stdout.contains("was taken: JACK named this client 'soundstage-01'"))
        #expect(second.stdout.contains("soundstage-01:out_1"))
    }

    @Test func runStartsThePatchsRecordersAndFinishesTheirFiles() throws {
        let directory = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let patch = try Fixtures.write(
            """
            version: 1
            buffers:
              - { name: dc, generate: { waveform: square, frequency: 1, duration: 0.4, amplitude: 0.5 } }
            nodes:
              - { name: p, kind: player, params: { buffer: dc, loop: true, playing: true } }
            connections:
              - { from: p, to: main }
            recorders:
              - { name: take, node: p, path: take.wav, duration: 0.5 }
              - { name: whole, node: main, path: whole.flac }
            """, to: "rec.yaml", in: directory)
        let server = "ss_rec_\(getpid())_\(UInt32.random(in: 0..<UInt32.max))"
        let r = try Fixtures.run(
            Fixtures.executable, ["run", patch, "--server", server, "--duration", "1.5", "--osc-port", "0"],
            timeout: 60)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("recorder take: p → "), "\(r.stdout)")
        let take = try AudioFileReader.load(path: directory.appendingPathComponent("take.wav").path)
        #expect(take.channels.first?.count == 24_000, "a 0.5 s take holds exactly 24000 frames")
        let whole = try AudioFileReader.load(path: directory.appendingPathComponent("whole.flac").path)
        let frames = whole.channels.first?.count ?? 0
        #expect(frames > 48_000 && frames <= 96_000, "the open-ended take ran until exit (1.5 s): \(frames) frames")
    }
}

import AudioFiles
import Foundation
import Testing

/// `--quiet` on every command, and the progress bar drawn only on a terminal.
@Suite struct QuietAndProgressTests {
    private static let hello = Fixtures.patches.appendingPathComponent("hello.yaml").path

    @Test func quietLeavesOnlyErrors() throws {
        let dir = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let exe = Fixtures.executable
        let wav = dir.appendingPathComponent("r.wav").path
        let flac = dir.appendingPathComponent("c.flac").path
        let commands: [[String]] = [
            ["render", Self.hello, "--out", wav, "--duration", "0.5", "--quiet"],
            ["convert", wav, flac, "--quiet"],
            ["check", Self.hello, "--quiet"],
            ["info", wav, flac, "-q"],
            ["info", "--verify", "--json", "--quiet", wav]
        ]
        for arguments in commands {
            let loud = try Fixtures.run(exe, arguments.filter { $0 != "--quiet" && $0 != "-q" })
            #expect(loud.status == 0 && !loud.stdout.isEmpty, "\(arguments): \(loud.stderr)")
            let r = try Fixtures.run(exe, arguments)
            #expect(r.status == 0, "\(arguments): \(r.stderr)")
            #expect(r.stdout.isEmpty && r.stderr.isEmpty, "\(arguments): '\(r.stdout)' '\(r.stderr)'")
        }
        // Errors are still printed, with a failing status.
        let bad = try Fixtures.write("version: 1\nnodes:\n  - { name: x, kind: wobble }\n", to: "bad.yaml", in: dir)
        let failures: [([String], String)] = [
            (["check", bad, "--quiet"], "unknown node kind 'wobble'"),
            (["render", bad, "--out", wav, "--duration", "1", "-q"], "unknown node kind 'wobble'"),
            (["convert", dir.appendingPathComponent("none.wav").path, flac, "-q"], "none.wav"),
            (["info", bad, "--quiet"], "bad.yaml"),
            (["run", bad, "--quiet"], "unknown node kind 'wobble'")
        ]
        for (arguments, needle) in failures {
            let r = try Fixtures.run(exe, arguments)
            #expect(r.status != 0, "\(arguments)")
            #expect(r.stdout.isEmpty && r.stderr.contains(needle), "\(arguments): '\(r.stdout)' '\(r.stderr)'")
        }
    }

    @Test func runQuietPrintsNothingWhilePlaying() throws {
        let server = "ss_quiet_\(getpid())_\(UInt32.random(in: 0..<UInt32.max))"
        let jackd = try Fixtures.startJackd(named: server)
        defer { jackd.terminate(); jackd.waitUntilExit() }
        let arguments = [
            "run", Self.hello, "--server", server, "--duration", "0.5", "--osc-port", "0", "--no-start-server"
        ]
        let loud = try Fixtures.run(Fixtures.executable, arguments)
        #expect(loud.status == 0 && loud.stdout.contains("JACK client"), "\(loud.stdout) \(loud.stderr)")
        let r = try Fixtures.run(Fixtures.executable, arguments + ["--quiet"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.isEmpty && r.stderr.isEmpty, "'\(r.stdout)' '\(r.stderr)'")
    }

    @Test func renderDrawsAProgressBarOnATerminalOnly() throws {
        let dir = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let out = dir.appendingPathComponent("p.wav").path
        let render = "'\(Fixtures.executable)' render '\(Self.hello)' --out '\(out)' --duration 20"
        // Standard error a pipe: no bar, no control characters.
        let piped = try Fixtures.run("/bin/sh", ["-c", render])
        #expect(piped.status == 0, "\(piped.stderr)")
        #expect(piped.stderr.isEmpty && !piped.stdout.contains("\r"), "'\(piped.stderr)'")
        // A pseudo-terminal (script from util-linux): the bar is drawn, reaches 100 % and is cleared.
        let terminal = try Fixtures.run("/usr/bin/script", ["-q", "-e", "-c", render, "/dev/null"])
        #expect(terminal.status == 0, "\(terminal.stderr)")
        #expect(terminal.stdout.contains("\r[------------------------------]   0% rendering"), "\(terminal.stdout)")
        #expect(terminal.stdout.contains("\r[##############################] 100% rendering"), "\(terminal.stdout)")
        #expect(terminal.stdout.contains("\r\u{1B}[Kwrote \(out): 960000 frames"), "\(terminal.stdout)")
        let quiet = try Fixtures.run("/usr/bin/script", ["-q", "-e", "-c", render + " --quiet", "/dev/null"])
        #expect(quiet.status == 0 && quiet.stdout.isEmpty, "'\(quiet.stdout)'")
    }
}

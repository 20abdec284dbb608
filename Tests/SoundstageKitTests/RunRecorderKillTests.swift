import Foundation
import Testing

/// A `soundstage run` process recording its patch's `recorders:` in every format, on a private dummy
/// JACK server, killed with SIGKILL: every take must read back to within a second of the kill.
@Suite(.serialized) struct RunRecorderKillTests {
    /// Recorder lines for the patch, one per format (`alac` is ALAC in M4A).
    static let recorders: [(name: String, file: String, format: String)] = [
        ("wav", "take.wav", "wav"), ("aiff", "take.aiff", "aiff"), ("caf", "take.caf", "caf"),
        ("flac", "take.flac", "flac"), ("ogg", "take.ogg", "ogg"), ("opus", "take.opus", "opus"),
        ("mp3", "take.mp3", "mp3"), ("aac", "take.m4a", "m4a"), ("alac", "take-alac.m4a", "alac"),
        ("adts", "take.aac", "aac")
    ]

    @Test func aRunKilledWithSIGKILLLeavesEveryRecordingReadable() throws {
        let dir = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let lines = Self.recorders.map {
            "  - { name: \($0.name), node: main, path: \($0.file), format: \($0.format) }"
        }
        let patch = try Fixtures.write(
            """
            version: 1
            buffers:
              - { name: tone, generate: { waveform: saw, frequency: 300, duration: 0.5, amplitude: 0.4 } }
            nodes:
              - { name: p, kind: player, params: { buffer: tone, loop: true, playing: true } }
            connections:
              - { from: p, to: main }
            recorders:
            \(lines.joined(separator: "\n"))
            """, to: "takes.yaml", in: dir)

        let server = "ss_kill_\(getpid())_\(UInt32.random(in: 0..<UInt32.max))"
        let jackd = try Fixtures.startJackd(named: server)
        defer {
            kill(jackd.processIdentifier, SIGTERM)
            jackd.waitUntilExit()
        }

        let log = dir.appendingPathComponent("run.log")
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        let run = Process()
        run.executableURL = URL(fileURLWithPath: Fixtures.executable)
        run.arguments = ["run", patch, "--server", server, "--no-start-server", "--osc-port", "0"]
        run.standardOutput = try FileHandle(forWritingTo: log)
        run.standardError = FileHandle.nullDevice
        try run.run()
        // The recorders start once the client is up; `run` then names each one.
        var started: Date?
        let deadline = Date().addingTimeInterval(30)
        while started == nil, run.isRunning, Date() < deadline {
            let text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
            if Self.recorders.allSatisfy({ text.contains("recorder \($0.name): main → ") }) { started = Date() }
            usleep(10_000)
        }
        let start = try #require(started, "the recorders never started")
        usleep(4_000_000)
        let elapsed = Date().timeIntervalSince(start)
        kill(run.processIdentifier, SIGKILL)
        run.waitUntilExit()
        #expect(run.terminationReason == .uncaughtSignal)

        // `start` is seen up to one poll late: allow a little more than the elapsed time.
        let range = (elapsed - 1) * 48_000...(elapsed + 0.3) * 48_000
        for recorder in Self.recorders {
            let readBack = ReadBack(path: dir.appendingPathComponent(recorder.file).path, directory: dir)
            for (reader, frames) in readBack.frameCounts() {
                #expect(
                    frames.map { range.contains(Double($0)) } == true,
                    "\(recorder.file) by \(reader): \(frames.map(String.init) ?? "unreadable") frames, killed after \(elapsed) s"
                )
            }
        }
    }
}

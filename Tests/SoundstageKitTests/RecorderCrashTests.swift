import AudioFiles
import AudioGraph
import DSPTestSupport
import Foundation
import SoundstageKit
import Testing

/// Runs this test bundle again as a child process that records (the `RecorderChildProcess` test), then
/// kills it with SIGKILL or lets it hit a file-size limit, and inspects what it left on disk.
@Suite struct RecorderCrashTests {
    static let formats = ["take.wav", "take.caf", "take.flac"]

    @Test func aRecordingKilledWithSIGKILLIsReadableAndMissesAtMostTheLastSecond() throws {
        let dir = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        // Record for about three seconds of wall time, then kill without warning.
        let elapsed = try RecorderChild.killWithSIGKILL(mode: "kill", directory: dir, afterSeconds: 3)
        let signal = RecorderChild.material()
        for name in Self.formats {
            let path = dir.appendingPathComponent(name).path
            let audio = try AudioFileReader.load(path: path)
            let frames = audio.frameCount
            #expect(
                Double(frames) >= (elapsed - 1) * RecorderFixture.rate,
                "\(name): \(frames) frames after \(elapsed) s")
            #expect(Double(frames) <= (elapsed + 0.1) * RecorderFixture.rate, "\(name): \(frames) frames")
            // What is there is the signal from its first frame, exactly (FLAC: within one int24 step).
            let tolerance: Float = name.hasSuffix(".flac") ? 1.0 / 8_388_608 : 0
            var worst: Float = 0
            for c in 0..<2 {
                for i in 0..<frames {
                    worst = max(worst, abs(audio.channels[c][i] - signal[c][i % signal[c].count]))
                }
            }
            #expect(worst <= tolerance, "\(name): differs by \(worst)")
            // Other readers trust the header alone: it must itself declare the frames (FLAC leaves its
            // length unknown after a kill, which decoders handle by reading to the end).
            if let declared = RecorderChild.declaredFrames(path: path, bytesPerFrame: 8) {
                #expect(
                    Double(declared) >= (elapsed - 1) * RecorderFixture.rate,
                    "\(name): header declares \(declared)")
                #expect(declared == frames, "\(name)")
            } else {
                #expect(name.hasSuffix(".flac"), "\(name): no readable size in the header")
            }
        }
    }

    @Test func aFailingDiskWriteEndsTheRecordingWithAnErrorNamingTheFile() throws {
        let dir = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let child = try RecorderChild.launch(mode: "diskfull", directory: dir)
        let deadline = Date().addingTimeInterval(60)
        while child.isRunning, Date() < deadline { usleep(10_000) }
        if child.isRunning { child.terminate() }
        child.waitUntilExit()
        let report = try String(contentsOf: dir.appendingPathComponent(RecorderChild.report), encoding: .utf8)
        let lines = report.split(separator: "\n").map(String.init)
        let path = dir.appendingPathComponent("full.wav").path
        let errorLine = lines.first { $0.hasPrefix("error ") }
        #expect(errorLine?.contains("Cannot write '\(path)'") == true, "\(report)")
        #expect(lines.contains("finished false"), "\(report)")
        #expect(lines.contains("isRecording false"), "\(report)")
        // What was written before the failure is still a readable file.
        #expect(try AudioFileReader.load(path: path).frameCount > 0)
    }
}

/// The child side. In a normal test run it is skipped; the tests above start the bundle again with
/// `SOUNDSTAGE_RECORDER_CHILD` set, and then only this test runs.
@Suite struct RecorderChildProcess {
    @Test(.enabled(if: RecorderChild.mode != nil, "acts only as the child process of RecorderCrashTests"))
    func actAsChild() throws {
        let directory = try #require(ProcessInfo.processInfo.environment[RecorderChild.directoryVariable])
        switch RecorderChild.mode {
        case "kill": try RecorderChild.recordUntilKilled(in: URL(fileURLWithPath: directory))
        case "diskfull": try RecorderChild.recordIntoAFileSizeLimit(in: URL(fileURLWithPath: directory))
        case "kill-every-format": try RecorderChild.recordEveryFormatUntilKilled(in: URL(fileURLWithPath: directory))
        default: Issue.record("unknown child mode \(RecorderChild.mode ?? "")")
        }
    }
}

enum RecorderChild {
    static let modeVariable = "SOUNDSTAGE_RECORDER_CHILD"
    static let directoryVariable = "SOUNDSTAGE_RECORDER_CHILD_DIR"
    static let startedMarker = "started"
    static let report = "report.txt"

    static var mode: String? { ProcessInfo.processInfo.environment[modeVariable] }

    /// Starts this test bundle (`CommandLine.arguments[0]`) running only `RecorderChildProcess`.
    static func launch(mode: String, directory: URL) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
        process.arguments = ["--testing-library", "swift-testing", "--filter", "RecorderChildProcess"]
        process.environment = ProcessInfo.processInfo.environment.merging([
            modeVariable: mode, directoryVariable: directory.path
        ]) { $1 }
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        return process
    }

    /// Frames the `data` chunk size of a WAV (little-endian UInt32) or CAF (big-endian Int64, minus
    /// the 4-byte edit count) declares; nil for other files or an unknown (-1) CAF size.
    static func declaredFrames(path: String, bytesPerFrame: Int) -> Int? {
        guard let bytes = FileManager.default.contents(atPath: path).map(Array.init), bytes.count > 12 else {
            return nil
        }
        func integer(_ at: Int, _ count: Int, bigEndian: Bool) -> Int {
            let slice = bytes[at..<(at + count)]
            return (bigEndian ? Array(slice) : slice.reversed()).reduce(0) { $0 << 8 | Int($1) }
        }
        let tag = String(decoding: bytes[0..<4], as: UTF8.self)
        if tag == "RIFF" {
            var offset = 12
            while offset + 8 <= bytes.count {
                let size = integer(offset + 4, 4, bigEndian: false)
                if String(decoding: bytes[offset..<(offset + 4)], as: UTF8.self) == "data" {
                    return size / bytesPerFrame
                }
                offset += 8 + size + (size & 1)
            }
        } else if tag == "caff" {
            var offset = 8
            while offset + 12 <= bytes.count {
                let size = integer(offset + 4, 8, bigEndian: true)
                if String(decoding: bytes[offset..<(offset + 4)], as: UTF8.self) == "data" {
                    return size < 0 ? nil : (size - 4) / bytesPerFrame
                }
                guard size >= 0 else { return nil }
                offset += 12 + size
            }
        }
        return nil
    }

    /// CLOCK_MONOTONIC in nanoseconds: the same clock in parent and child.
    static func monotonicNanoseconds() -> Int64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec)
    }

    /// The recorded material: one second of stereo noise, looped by the player.
    static func material() -> [[Float]] { RecorderFixture.noise(frames: 48_000, seed: 2024) }

    /// Records the looping signal to WAV, CAF and FLAC at once, rendering in real time (10 ms blocks,
    /// polled after each), until the parent kills the process (or 60 s pass).
    static func recordUntilKilled(in directory: URL) throws {
        let engine = try RecorderFixture.engine(playing: material())
        let recorders = try RecorderCrashTests.formats.map {
            try Recorder(engine: engine, node: "p", path: directory.appendingPathComponent($0).path)
        }
        try recordInRealTime(engine, recorders, markingStartIn: directory)
    }

    /// Starts `recorders`, writes the start time to the marker file, then renders `engine` in real
    /// time (10 ms blocks, polled after each) until the parent kills the process (or 60 s pass).
    static func recordInRealTime(_ engine: Engine, _ recorders: [Recorder], markingStartIn directory: URL) throws {
        for recorder in recorders { try recorder.record() }
        let start = monotonicNanoseconds()
        try "\(start)\n".write(to: directory.appendingPathComponent(startedMarker), atomically: true, encoding: .utf8)
        let renderer = OfflineRenderer(engine: engine, pollInterval: 480)
        var rendered: Int64 = 0
        while rendered < 60 * 48_000 {
            renderer.render(frameCount: 480, hostBlockFrames: 480) { _ in }
            rendered += 480
            let due = start + rendered * 1_000_000_000 / 48_000
            let now = monotonicNanoseconds()
            if due > now { usleep(UInt32((due - now) / 1_000)) }
        }
    }

    /// Launches the child in `mode`, waits until it reports its start, kills it with SIGKILL
    /// `seconds` later and returns the seconds it recorded.
    static func killWithSIGKILL(mode: String, directory: URL, afterSeconds seconds: Double) throws -> Double {
        let child = try launch(mode: mode, directory: directory)
        let marker = directory.appendingPathComponent(startedMarker).path
        let deadline = Date().addingTimeInterval(60)
        while !FileManager.default.fileExists(atPath: marker), child.isRunning, Date() < deadline { usleep(5_000) }
        let startText = try String(contentsOfFile: marker, encoding: .utf8)
        let start = try #require(Int64(startText.trimmingCharacters(in: .whitespacesAndNewlines)))
        while monotonicNanoseconds() < start + Int64(seconds * 1e9) { usleep(5_000) }
        let killedAt = monotonicNanoseconds()
        kill(child.processIdentifier, SIGKILL)
        child.waitUntilExit()
        #expect(child.terminationReason == .uncaughtSignal && child.terminationStatus == SIGKILL)
        return Double(killedAt - start) / 1e9
    }

    /// Limits the file size to 100 kB (about 0.26 s of stereo float WAV), records a second, and writes
    /// what the recorder reported to `report.txt`.
    static func recordIntoAFileSizeLimit(in directory: URL) throws {
        let engine = try RecorderFixture.engine(playing: material())
        let recorder = try Recorder(engine: engine, node: "p", path: directory.appendingPathComponent("full.wav").path)
        let log = RecorderEventLog(recorder)
        var original = rlimit()
        getrlimit(__rlimit_resource_t(RLIMIT_FSIZE.rawValue), &original)
        var limited = original
        limited.rlim_cur = 100_000
        signal(SIGXFSZ, SIG_IGN)  // a write past the limit then fails with EFBIG instead of killing us
        setrlimit(__rlimit_resource_t(RLIMIT_FSIZE.rawValue), &limited)
        try recorder.record()
        _ = RecorderFixture.render(engine, frames: 48_000)
        _ = log.waitForFinish()
        let stillRecording = recorder.isRecording
        recorder.stop()
        setrlimit(__rlimit_resource_t(RLIMIT_FSIZE.rawValue), &original)
        var lines = log.errors.map { "error \($0.description)" }
        lines += log.finishes.map { "finished \($0)" }
        lines.append("isRecording \(stillRecording)")
        try lines.joined(separator: "\n").write(
            to: directory.appendingPathComponent(report), atomically: true, encoding: .utf8)
    }
}

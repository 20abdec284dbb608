import AudioFiles
import Foundation
import Testing

/// `convert` and `render` outputs: devices and FIFOs are written through, `-` is standard output, a
/// symbolic link's target is written, and a regular file is replaced only when complete.
@Suite struct OutputCommandTests {
    /// A folder with `in.wav`: one second of stereo noise at 48 kHz.
    private static func folderWithInput() throws -> URL {
        let dir = try Fixtures.temporaryDirectory()
        try AudioFileWriter.write(
            AudioData(channels: RecorderFixture.noise(frames: 48_000), sampleRate: 48_000),
            to: dir.appendingPathComponent("in.wav").path, encoding: .int16)
        return dir
    }

    /// The file type bits of `path` (not following a link).
    private static func type(_ path: String) -> mode_t {
        var status = stat()
        return lstat(path, &status) == 0 ? status.st_mode & S_IFMT : 0
    }

    /// Runs `script` with /bin/sh in `dir` (for pipelines).
    private static func shell(_ script: String, in dir: URL) throws -> Fixtures.Result {
        try Fixtures.run("/bin/sh", ["-c", "cd '\(dir.path)' || exit 1\n\(script)"])
    }

    /// Frames of `path` by Soundstage's reader, sox and ffmpeg (each must read it).
    private static func expectFrames(_ expected: Int, _ path: String, in dir: URL) {
        for (reader, frames) in ReadBack(path: path, directory: dir).frameCounts() {
            #expect(frames == expected, "\(path) by \(reader): \(frames.map(String.init) ?? "unreadable")")
        }
    }

    @Test(.enabled(if: getuid() == 0, "mknod needs root"))
    func convertWritesThroughACharacterDeviceAndLeavesItADevice() throws {
        let dir = try Self.folderWithInput()
        defer { try? FileManager.default.removeItem(at: dir) }
        let device = dir.appendingPathComponent("null").path
        // A private null device (major 1, minor 3), never the system's.
        try #require(mknod(device, S_IFCHR | 0o666, dev_t(1 << 8 | 3)) == 0)
        let r = try Fixtures.run(
            Fixtures.executable, ["convert", dir.appendingPathComponent("in.wav").path, device, "--format", "wav"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(Self.type(device) == S_IFCHR, "the device was replaced")
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasPrefix(".") }
        #expect(leftovers.isEmpty, "\(leftovers)")
    }

    @Test func convertWritesThroughAFIFOToItsReader() throws {
        let dir = try Self.folderWithInput()
        defer { try? FileManager.default.removeItem(at: dir) }
        try #require(mkfifo(dir.appendingPathComponent("pipe").path, 0o666) == 0)
        let r = try Self.shell(
            "cat pipe > received.flac 2>/dev/null & reader=$!; '\(Fixtures.executable)' convert in.wav pipe --format flac && wait $reader",
            in: dir)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(Self.type(dir.appendingPathComponent("pipe").path) == S_IFIFO, "the FIFO was replaced")
        Self.expectFrames(48_000, dir.appendingPathComponent("received.flac").path, in: dir)
    }

    @Test func convertFollowsASymbolicLinkAndKeepsIt() throws {
        let dir = try Self.folderWithInput()
        defer { try? FileManager.default.removeItem(at: dir) }
        try FileManager.default.createDirectory(
            at: dir.appendingPathComponent("takes"), withIntermediateDirectories: true)
        let link = dir.appendingPathComponent("link.flac").path
        // A relative link to a file that does not exist yet.
        try #require(symlink("takes/real.flac", link) == 0)
        let r = try Fixtures.run(Fixtures.executable, ["convert", dir.appendingPathComponent("in.wav").path, link])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(Self.type(link) == S_IFLNK, "the link was replaced")
        Self.expectFrames(48_000, dir.appendingPathComponent("takes/real.flac").path, in: dir)
    }

    @Test func dashMeansStandardInputAndStandardOutput() throws {
        let dir = try Self.folderWithInput()
        defer { try? FileManager.default.removeItem(at: dir) }
        let exe = Fixtures.executable
        let r = try Self.shell(
            "cat in.wav | '\(exe)' convert - - --format flac | sox -t flac - piped.wav", in: dir)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.contains("wrote -: FLAC"), "the status line goes to stderr: \(r.stderr)")
        Self.expectFrames(48_000, dir.appendingPathComponent("piped.wav").path, in: dir)
        let render = try Self.shell(
            "'\(exe)' render '\(Fixtures.patches.path)/hello.yaml' --out - --duration 0.5 | ffmpeg -v error -y -f wav -i - rendered.wav",
            in: dir)
        #expect(render.status == 0, "\(render.stderr)")
        Self.expectFrames(24_000, dir.appendingPathComponent("rendered.wav").path, in: dir)
        let noFormat = try Fixtures.run(exe, ["convert", dir.appendingPathComponent("in.wav").path, "-"])
        #expect(
            noFormat.status != 0 && noFormat.stderr.contains("standard output") && noFormat.stderr.contains("--format"),
            "\(noFormat.stderr)")
    }

    @Test func aFailedConvertLeavesTheOldFileUntouched() throws {
        let dir = try Self.folderWithInput()
        defer { try? FileManager.default.removeItem(at: dir) }
        let out = dir.appendingPathComponent("out.wav").path
        let old = Data("the only copy".utf8)
        try old.write(to: URL(fileURLWithPath: out))
        let bad = try Fixtures.write("not audio", to: "bad.wav", in: dir)
        let r = try Fixtures.run(Fixtures.executable, ["convert", bad, out])
        #expect(r.status != 0)
        #expect(FileManager.default.contents(atPath: out) == old)
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasPrefix(".") }
        #expect(leftovers.isEmpty, "\(leftovers)")
    }

    /// Runs a day-long `render` of hello.yaml to `out` in `dir` (TMPDIR too), waits until a working
    /// file whose name starts with `workingPrefix` appears in `dir`, sends `signalNumber`, and
    /// returns the exit status, what the command wrote to stderr, and the working files left.
    private static func interruptRender(
        out: String, in dir: URL, workingPrefix: String, signal signalNumber: Int32, stdout: FileHandle? = nil
    ) throws -> (status: Int32, stderr: String, leftovers: [String]) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Fixtures.executable)
        process.arguments = [
            "render", Fixtures.patches.appendingPathComponent("hello.yaml").path, "--out", out, "--duration", "86400"
        ]
        process.environment = ProcessInfo.processInfo.environment.merging(["TMPDIR": dir.path]) { $1 }
        process.standardOutput = stdout ?? FileHandle.nullDevice
        let errors = Pipe()
        process.standardError = errors
        let stderr = Fixtures.ReadBox(errors.fileHandleForReading)
        try process.run()
        func working() -> [String] {
            ((try? FileManager.default.contentsOfDirectory(atPath: dir.path)) ?? []).filter {
                $0.hasPrefix(workingPrefix)
            }
        }
        let deadline = Date().addingTimeInterval(30)
        while working().isEmpty, process.isRunning, Date() < deadline { usleep(10_000) }
        usleep(300_000)
        kill(process.processIdentifier, signalNumber)
        process.waitUntilExit()
        return (process.terminationStatus, stderr.text(), working())
    }

    @Test(arguments: [SIGINT, SIGTERM])
    func anInterruptedRenderLeavesTheOldFileAndSaysSo(signalNumber: Int32) throws {
        let dir = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let out = dir.appendingPathComponent("long.wav").path
        let old = Data("an earlier render".utf8)
        try old.write(to: URL(fileURLWithPath: out))
        let result = try Self.interruptRender(
            out: out, in: dir, workingPrefix: ".long.wav.partial", signal: signalNumber)
        #expect(result.status == 128 + signalNumber)
        #expect(result.stderr.contains("interrupted; '\(out)' was not written and is left as it was"))
        #expect(FileManager.default.contents(atPath: out) == old)
        #expect(result.leftovers.isEmpty)
    }

    @Test func anInterruptedRenderToStandardOutputWritesNothingAndLeavesNoSpool() throws {
        let dir = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let received = dir.appendingPathComponent("stdout.bin")
        _ = FileManager.default.createFile(atPath: received.path, contents: nil)
        let result = try Self.interruptRender(
            out: "-", in: dir, workingPrefix: "soundstage-spool-", signal: SIGTERM,
            stdout: try FileHandle(forWritingTo: received))
        #expect(result.status == 128 + SIGTERM)
        #expect(result.stderr.contains("interrupted; nothing was written to '-'"))
        #expect(FileManager.default.contents(atPath: received.path)?.isEmpty == true)
        #expect(result.leftovers.isEmpty)
    }
}

import DSPTestSupport
import Foundation

/// Paths and helpers shared by the kit and CLI tests.
enum Fixtures {
    /// The package root (two levels above this file's folder).
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    static let patches = root.appendingPathComponent("patches")

    /// A fresh temporary folder.
    static func temporaryDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("soundstage-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// Writes `text` to `name` in `dir` and returns the path.
    static func write(_ text: String, to name: String, in dir: URL) throws -> String {
        let url = dir.appendingPathComponent(name)
        try text.write(to: url, atomically: true, encoding: .utf8)
        return url.path
    }

    /// The `soundstage` executable built beside the test bundle.
    static var executable: String {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("soundstage")
            .path
    }

    /// Starts a private dummy JACK server (48 kHz, 256 frames, no real-time) named `server` and
    /// waits until it accepts clients. The caller stops it (`terminate()`, then `waitUntilExit()`).
    static func startJackd(named server: String) throws -> Process {
        try JackServerStartLock.starting { try launchJackd(named: server) }
    }

    private static func launchJackd(named server: String) throws -> Process {
        let jackd = Process()
        jackd.executableURL = URL(fileURLWithPath: "/usr/bin/jackd")
        jackd.arguments = ["-n", server, "--no-realtime", "-d", "dummy", "-r", "48000", "-p", "256"]
        jackd.standardOutput = FileHandle.nullDevice
        jackd.standardError = FileHandle.nullDevice
        try jackd.run()
        do {
            _ = try run("/usr/bin/jack_wait", ["-s", server, "-w", "-t", "30"], timeout: 35)
        } catch {
            jackd.terminate()
            jackd.waitUntilExit()
            throw error
        }
        return jackd
    }

    struct Result {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    /// Runs a program to completion (with a timeout) and captures its output.
    static func run(_ path: String, _ arguments: [String], environment: [String: String]? = nil, timeout: Double = 60)
        throws -> Result
    {
        // `soundstage run` without --no-start-server may start a JACK server (see JackServerStartLock).
        if arguments.first == "run" && !arguments.contains("--no-start-server") && path.hasSuffix("soundstage") {
            return try JackServerStartLock.starting { try runToCompletion(path, arguments, environment, timeout) }
        }
        return try runToCompletion(path, arguments, environment, timeout)
    }

    private static func runToCompletion(
        _ path: String, _ arguments: [String], _ environment: [String: String]?, _ timeout: Double
    ) throws -> Result {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        if let environment {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let deadline = Date().addingTimeInterval(timeout)
        let outData = ReadBox(out.fileHandleForReading)
        let errData = ReadBox(err.fileHandleForReading)
        while process.isRunning && Date() < deadline { usleep(20_000) }
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
        return Result(status: process.terminationStatus, stdout: outData.text(), stderr: errData.text())
    }

    /// Reads a pipe to the end on a background thread so a chatty child never blocks.
    final class ReadBox: @unchecked Sendable {
        private var data = Data()
        private let done = DispatchSemaphore(value: 0)
        init(_ handle: FileHandle) {
            Thread.detachNewThread { [self] in
                data = handle.readDataToEndOfFile()
                done.signal()
            }
        }
        func text() -> String {
            done.wait()
            return String(decoding: data, as: UTF8.self)
        }
    }
}

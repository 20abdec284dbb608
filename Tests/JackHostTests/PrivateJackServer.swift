// Test fixture. A private jackd (dummy backend, no realtime) under a unique server name, stopped by
// its own PID. Never touches any other server.
import DSPTestSupport
import Foundation
import JackHost
import Synchronization

/// A `jackd -n <unique> --no-realtime -d dummy -r 48000 -p <period> -C 2 -P 2` child process.
final class PrivateJackServer: @unchecked Sendable {
    private static let counter = Atomic<Int>(0)

    /// Unique per test process and instance: `ss_test_<pid>_<n>`.
    static func uniqueName(prefix: String = "ss_test") -> String {
        // Relaxed: only uniqueness matters.
        "\(prefix)_\(getpid())_\(counter.add(1, ordering: .relaxed).newValue)"
    }

    let name: String
    let pid: Int32
    let logPath: String
    private let process: Process
    private let stopped = Mutex(false)
    private let wasKilled = Mutex(false)

    /// Starts the server (under `name`, default a fresh unique one) and waits (`jack_wait -w -t 10`)
    /// until it accepts clients.
    init(name: String? = nil, period: Int = 256, sampleRate: Int = 48_000) throws {
        let name = name ?? Self.uniqueName()
        self.name = name
        let logPath = NSTemporaryDirectory() + "\(name).log"
        self.logPath = logPath
        _ = FileManager.default.createFile(atPath: logPath, contents: nil)
        // JACK keeps a per-user table of 8 servers; while other suites' servers fill it, jackd refuses
        // to start ("Too many servers already active"): try again for a while before giving up.
        var attempt = 0
        var launched = Process()
        var wait: (status: Int32, output: String) = (0, "")
        // Under the shared lock: a server start wipes the user's JACK metadata (JackServerStartLock).
        try JackServerStartLock.starting {
            repeat {
                attempt += 1
                _ = FileManager.default.createFile(atPath: logPath, contents: nil)
                launched = Process()
                launched.executableURL = URL(fileURLWithPath: "/usr/bin/jackd")
                launched.arguments = [
                    "-n", name, "--no-realtime", "-d", "dummy", "-r", String(sampleRate),
                    "-p", String(period), "-C", "2", "-P", "2"
                ]
                let log = FileHandle(forWritingAtPath: logPath)
                launched.standardOutput = log
                launched.standardError = log
                launched.standardInput = FileHandle.nullDevice
                try launched.run()
                wait = try Self.runTool("/usr/bin/jack_wait", ["-s", name, "-w", "-t", "10"])
                if wait.status != 0 && launched.isRunning {
                    // Under heavy load (many suites start servers at once) jackd can take longer to accept
                    // clients: give a running server a second, longer chance.
                    wait = try Self.runTool("/usr/bin/jack_wait", ["-s", name, "-w", "-t", "20"])
                }
                let full = (try? String(contentsOfFile: logPath, encoding: .utf8))?.contains("Too many servers") == true
                guard wait.status != 0, full, attempt < 20 else { break }
                launched.waitUntilExit()
                usleep(500_000)
            } while true
        }
        process = launched
        pid = launched.processIdentifier
        guard wait.status == 0 else {
            stop()
            throw FixtureError("jackd '\(name)' did not come up: \(wait.output)\n\(logTail())")
        }
    }

    /// SIGTERM, then SIGKILL after 3 s; reaps the process. Idempotent. After a SIGKILL, also reclaims the
    /// server's registry slot (see `reclaimRegistrySlot`).
    func stop() {
        let already = stopped.withLock { value in
            defer { value = true }
            return value
        }
        if already { return }
        var killed = false
        // Under the shared lock: a clean exit deletes the user's JACK metadata (JackServerStartLock).
        JackServerStartLock.starting {
            if process.isRunning {
                kill(pid, SIGTERM)
                let deadline = Date().addingTimeInterval(3)
                while process.isRunning && Date() < deadline { usleep(20_000) }
                if process.isRunning {
                    kill(pid, SIGKILL)
                    killed = true
                }
            }
            process.waitUntilExit()
        }
        if killed { reclaimRegistrySlot() }
    }

    /// SIGKILL (as a crash would) and reap. The registry slot is reclaimed when the fixture is stopped.
    func kill9() {
        let already = stopped.withLock { value in
            defer { value = true }
            return value
        }
        if already { return }
        kill(pid, SIGKILL)
        process.waitUntilExit()
        wasKilled.withLock { $0 = true }
    }

    deinit {
        stop()
        if wasKilled.withLock({ $0 }) { reclaimRegistrySlot() }
        try? FileManager.default.removeItem(atPath: logPath)
    }

    /// jackd registers each server name in a per-user table of 8 slots (/dev/shm/jack-shm-registry);
    /// a killed server keeps its slot until a server with the same name starts again. So after a kill
    /// this starts the same name once more and stops it with SIGTERM, which frees the slot and the
    /// server's files. Skipped when a server with this name is running (its own exit will clean up).
    private func reclaimRegistrySlot() {
        if JackServerLauncher.isServerRunning(name: name) { return }
        let again = Process()
        again.executableURL = URL(fileURLWithPath: "/usr/bin/jackd")
        again.arguments = ["-n", name, "--no-realtime", "-d", "dummy", "-r", "48000", "-p", "256"]
        again.standardOutput = FileHandle.nullDevice
        again.standardError = FileHandle.nullDevice
        again.standardInput = FileHandle.nullDevice
        let started = JackServerStartLock.starting { () -> Bool in
            guard (try? again.run()) != nil else { return false }
            _ = try? Self.runTool("/usr/bin/jack_wait", ["-s", name, "-w", "-t", "10"])
            return true
        }
        guard started else { return }
        kill(again.processIdentifier, SIGTERM)
        again.waitUntilExit()
        // Semaphores of the clients that were connected when the server was killed.
        let prefix = "jack_sem.\(getuid())_\(name)_"
        for file in (try? FileManager.default.contentsOfDirectory(atPath: "/dev/shm")) ?? []
        where file.hasPrefix(prefix) {
            try? FileManager.default.removeItem(atPath: "/dev/shm/" + file)
        }
    }

    var isRunning: Bool { process.isRunning }

    /// `jack_lsp -s NAME args…` output.
    func lsp(_ arguments: [String] = []) throws -> String {
        try Self.runTool("/usr/bin/jack_lsp", ["-s", name] + arguments).output
    }

    /// Runs a JACK tool that takes no `-s` (jack_bufsize…) against this server.
    func runWithDefaultServer(_ tool: String, _ arguments: [String]) throws -> (status: Int32, output: String) {
        try Self.runTool(tool, arguments, environment: ["JACK_DEFAULT_SERVER": name, "JACK_NO_START_SERVER": "1"])
    }

    func logTail() -> String {
        guard let data = FileManager.default.contents(atPath: logPath) else { return "" }
        return String(decoding: data.suffix(2000), as: UTF8.self)
    }

    /// Runs `path` to completion; returns its exit status and combined output. A tool whose client
    /// could not open is run again (up to three times): another test's server starting at that
    /// moment recreates the user's metadata store, which a client opening then can fail on.
    static func runTool(_ path: String, _ arguments: [String], environment: [String: String] = [:]) throws
        -> (status: Int32, output: String)
    {
        var result = try runToolOnce(path, arguments, environment: environment)
        for _ in 0..<2 where result.status != 0 && result.output.contains("Cannot open") {
            usleep(200_000)
            result = try runToolOnce(path, arguments, environment: environment)
        }
        return result
    }

    private static func runToolOnce(_ path: String, _ arguments: [String], environment: [String: String]) throws
        -> (status: Int32, output: String)
    {
        let tool = Process()
        tool.executableURL = URL(fileURLWithPath: path)
        tool.arguments = arguments
        var env = ProcessInfo.processInfo.environment
        env["JACK_NO_START_SERVER"] = "1"
        for (key, value) in environment { env[key] = value }
        tool.environment = env
        let pipe = Pipe()
        tool.standardOutput = pipe
        tool.standardError = pipe
        tool.standardInput = FileHandle.nullDevice
        try tool.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        tool.waitUntilExit()
        return (tool.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    /// PIDs of processes whose command line contains `text` (reads /proc).
    static func processes(commandLineContaining text: String) -> [Int32] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap { entry -> Int32? in
            guard let pid = Int32(entry),
                let data = FileManager.default.contents(atPath: "/proc/\(entry)/cmdline")
            else { return nil }
            let commandLine = String(decoding: data.map { $0 == 0 ? 0x20 : $0 }, as: UTF8.self)
            return commandLine.contains(text) ? pid : nil
        }
    }
}

struct FixtureError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

// Test support for the external-client, scenario and fuzz tests: child processes stopped by their own
// PID (a private dummy jackd, `soundstage run`, oscdump, jack_rec), free loopback UDP ports, oscsend,
// and oscdump's output parsed into lines.
import AudioFiles
import DSPTestSupport
import Foundation
import Glibc
import Synchronization
import Testing

/// The heavy external tests (the 20× scenario, the 100k-packet fuzz) and every test that starts a private
/// jackd run one after another, so none disturbs another's timing on a small machine and at most one of
/// them holds a slot of JACK's per-user server registry.
@Suite(.serialized) struct OSCExternalSerialSuites {}

extension Trait where Self == ToolRequirement {
    /// Runs only where jackd and the `soundstage` executable exist (required under scripts/test.sh).
    static var needsJackAndSoundstage: Self {
        .requiresTool(
            "jackd and the soundstage executable", DummyJackServer.isAvailable && SoundstageRun.isAvailable,
            "needs jackd and the soundstage executable")
    }

    /// Runs only where a private PipeWire can be started (required under scripts/test.sh).
    static var needsPipeWireAndSoundstage: Self {
        .requiresTool(
            "pipewire, wireplumber, pw-jack, dbus-daemon and the soundstage executable",
            PrivatePipeWire.isAvailable && SoundstageRun.isAvailable,
            "needs PipeWire (pipewire, pipewire-jack, wireplumber, dbus-daemon) and the soundstage executable")
    }
}

/// Patches the external tests run.
enum ExternalPatches {
    /// A click (one full-scale sample, then silence) played by `a` hard left and `b` hard right; both stopped.
    static let twoClicks = """
        version: 1
        engine: { sampleRate: 48000, outputs: 2 }
        buffers:
          - name: click
            generate: { waveform: click, duration: 0.05, amplitude: 1.0 }
        nodes:
          - { name: a, kind: player, params: { buffer: click, pan: -1 } }
          - { name: b, kind: player, params: { buffer: click, pan: 1 } }
        connections:
          - { from: a, to: main }
          - { from: b, to: main }

        """

    /// The same click buffer and two players with no material of their own: they play only what is
    /// enqueued on them.
    static let twoEmptyPlayers =
        twoClicks
        .replacingOccurrences(of: "params: { buffer: click, pan: -1 } ", with: "")
        .replacingOccurrences(of: "params: { buffer: click, pan: 1 } ", with: "")
}

/// Why an external test could not set itself up.
struct ExternalSetupError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// A child process with standard output and error appended to a log file (so a chatty child never
/// blocks on a full pipe). Stopped with SIGTERM, then SIGKILL, by its own PID; always reaped.
///
/// Spawned with posix_spawn and an empty signal mask: Foundation's `Process` passes on the spawning
/// thread's mask, and test threads block SIGTERM, so a tool such as oscdump would ignore SIGTERM.
final class ChildProcess: @unchecked Sendable {
    let name: String
    let logPath: String
    let pid: pid_t
    private let exitStatus = Mutex<Int32?>(nil)
    private let stopped = Mutex(false)

    init(_ executable: String, _ arguments: [String], environment: [String: String] = [:]) throws {
        name = URL(fileURLWithPath: executable).lastPathComponent
        logPath = NSTemporaryDirectory() + "osct-\(name)-\(UUID().uuidString).log"
        var env = ProcessInfo.processInfo.environment
        env["JACK_NO_START_SERVER"] = "1"
        // A crash report of the crashed thread alone, so the tail a failed expectation quotes holds its
        // frames rather than every thread's registers and the loaded images.
        if env["SWIFT_BACKTRACE"] == nil { env["SWIFT_BACKTRACE"] = "threads=crashed,registers=none,images=none" }
        for (key, value) in environment { env[key] = value }

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, logPath, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        // No inherited descriptors (liblo sockets, JACK connections of the test process). Closing one
        // that was closed in the meantime is not an error for glibc's posix_spawn.
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? [] {
            if let fd = Int32(entry), fd > 2 { posix_spawn_file_actions_addclose(&actions, fd) }
        }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var mask = sigset_t()
        sigemptyset(&mask)
        posix_spawnattr_setsigmask(&attributes, &mask)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGPIPE, SIGCHLD] { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = env.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            for p in argv { free(p) }
            for p in envp { free(p) }
        }
        var child: pid_t = 0
        let result = posix_spawn(&child, executable, &actions, &attributes, argv, envp)
        guard result == 0 else {
            throw ExternalSetupError("posix_spawn \(executable) failed: \(String(cString: strerror(result)))")
        }
        pid = child
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(atPath: logPath)
    }

    /// Reaps the child if it has exited (blocking: waits for it).
    private func reap(blocking: Bool) -> Int32? {
        exitStatus.withLock { status in
            if let status { return status }
            var raw: Int32 = 0
            let r = waitpid(pid, &raw, blocking ? 0 : WNOHANG)
            guard r == pid else {
                // ECHILD: somebody else reaped it; report it as gone.
                if r < 0 && errno == ECHILD { status = -1 }
                return status
            }
            // WIFEXITED / WEXITSTATUS / WTERMSIG, spelled out (C macros).
            status = raw & 0x7F == 0 ? (raw >> 8) & 0xFF : 128 + (raw & 0x7F)
            return status
        }
    }

    var isRunning: Bool { reap(blocking: false) == nil }

    /// Everything the child wrote so far.
    var output: String {
        guard let data = FileManager.default.contents(atPath: logPath) else { return "" }
        return String(decoding: data, as: UTF8.self)
    }

    /// Waits until the output contains `text` (nil when the child exits or time runs out first).
    func waitForOutput(containing text: String, timeout: Double) -> String? {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            let now = output
            if now.contains(text) { return now }
            if !isRunning { return output.contains(text) ? output : nil }
            usleep(20_000)
        }
        return nil
    }

    /// Waits for the child to exit on its own; returns its exit status (128 + signal when killed), or
    /// nil on timeout.
    func waitForExit(timeout: Double) -> Int32? {
        let deadline = Date().addingTimeInterval(timeout)
        while isRunning && Date() < deadline { usleep(10_000) }
        guard let status = reap(blocking: false) else { return nil }
        stopped.withLock { $0 = true }
        return status
    }

    /// SIGTERM (or `signal`), then SIGKILL after `grace` seconds; reaps the child. Idempotent. Returns
    /// true when SIGKILL was needed.
    @discardableResult
    func stop(signal: Int32 = SIGTERM, grace: Double = 3) -> Bool {
        let already = stopped.withLock { value in
            defer { value = true }
            return value
        }
        if already { return false }
        var killed = false
        if isRunning {
            kill(pid, signal)
            let deadline = Date().addingTimeInterval(grace)
            while isRunning && Date() < deadline { usleep(10_000) }
            if isRunning {
                kill(pid, SIGKILL)
                killed = true
            }
        }
        _ = reap(blocking: true)
        return killed
    }

    /// The exit status once the child has exited (128 + signal when killed).
    var terminationStatus: Int32 { reap(blocking: false) ?? -1 }

    /// Runs `executable` to completion (killed after `timeout`); returns its status and combined output.
    static func run(
        _ executable: String, _ arguments: [String], environment: [String: String] = [:],
        timeout: Double = 30
    ) -> (status: Int32, output: String) {
        guard let child = try? ChildProcess(executable, arguments, environment: environment) else {
            return (-1, "could not start \(executable)")
        }
        guard let status = child.waitForExit(timeout: timeout) else {
            child.stop(signal: SIGKILL, grace: 1)
            return (-1, "timed out: " + child.output)
        }
        return (status, child.output)
    }
}

/// Loopback UDP helpers.
enum LoopbackUDP {
    /// A port that was free a moment ago (bound to 127.0.0.1:0 and closed again).
    static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        guard fd >= 0 else { throw ExternalSetupError("socket() failed") }
        defer { close(fd) }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = 0
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(fd, pointer, length) == 0 && getsockname(fd, pointer, &length) == 0
            }
        }
        guard bound else { throw ExternalSetupError("bind() failed") }
        return Int(UInt16(bigEndian: addr.sin_port))
    }

    /// Packets the kernel dropped for the UDP socket bound to `port` on 127.0.0.1 because its receive
    /// buffer was full (the `drops` column of /proc/net/udp); nil when no such socket exists.
    static func kernelDrops(port: Int) -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/net/udp", encoding: .utf8) else { return nil }
        let wanted = String(format: "0100007F:%04X", port)
        for line in text.split(separator: "\n").dropFirst() {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            if fields.count >= 13, fields[1] == wanted { return Int(fields[12]) }
        }
        return nil
    }
}

/// `oscsend` from liblo-tools: a fresh socket per call, never listening.
enum OSCSend {
    static let path = "/usr/bin/oscsend"
    static var isAvailable: Bool { FileManager.default.isExecutableFile(atPath: path) }

    /// `oscsend 127.0.0.1 PORT ADDRESS [TYPES ARGS…]`, or over TCP with `tcp: true`.
    @discardableResult
    static func send(
        port: Int, _ address: String, _ types: String = "", _ arguments: [String] = [],
        tcp: Bool = false
    ) -> (status: Int32, output: String) {
        let target = tcp ? ["osc.tcp://127.0.0.1:\(port)"] : ["127.0.0.1", String(port)]
        let typed = types.isEmpty ? [] : [types] + arguments
        return ChildProcess.run(path, target + [address] + typed, timeout: 10)
    }
}

/// One line of `oscdump` output: `<timetag> /address types arg…` (strings in double quotes).
struct OSCDumpLine: Equatable, CustomStringConvertible {
    let timetag: String
    let address: String
    let types: String
    /// Arguments as printed: strings without their quotes, numbers as written.
    let arguments: [String]

    var description: String { ([timetag, address, types] + arguments).joined(separator: " ") }

    init?(_ line: Substring) {
        var tokens: [String] = []
        var current = ""
        var quoted = false
        var inToken = false
        for character in line {
            if quoted {
                if character == "\"" { quoted = false } else { current.append(character) }
            } else if character == "\"" {
                quoted = true
                inToken = true
            } else if character == " " {
                if inToken { tokens.append(current) }
                current = ""
                inToken = false
            } else {
                current.append(character)
                inToken = true
            }
        }
        if inToken { tokens.append(current) }
        guard tokens.count >= 2, tokens[1].hasPrefix("/") else { return nil }
        timetag = tokens[0]
        address = tokens[1]
        // A message without arguments prints no type string.
        types = tokens.count > 2 ? tokens[2] : ""
        arguments = tokens.count > 3 ? Array(tokens[3...]) : []
    }
}

/// `oscdump -L PORT` (liblo-tools) on a free loopback port, as a reply or notification target.
final class OSCDump {
    static let path = "/usr/bin/oscdump"
    static var isAvailable: Bool { FileManager.default.isExecutableFile(atPath: path) }

    let port: Int
    let child: ChildProcess
    var url: String { "osc.udp://127.0.0.1:\(port)/" }

    /// Starts oscdump and waits until it prints a probe message sent to it.
    init() throws {
        var lastError = ""
        for _ in 0..<5 {
            let port = try LoopbackUDP.freePort()
            let child = try ChildProcess(Self.path, ["-L", String(port)])
            for attempt in 0..<50 {
                OSCSend.send(port: port, "/osct/probe", "i", [String(attempt)])
                if child.waitForOutput(containing: "/osct/probe", timeout: 0.1) != nil {
                    self.port = port
                    self.child = child
                    return
                }
                if !child.isRunning { break }
            }
            lastError = child.output
            child.stop()
        }
        throw ExternalSetupError("oscdump did not come up: \(lastError)")
    }

    deinit { child.stop() }

    /// Every message line printed so far (probes left out).
    var lines: [OSCDumpLine] {
        child.output.split(separator: "\n").compactMap(OSCDumpLine.init).filter { $0.address != "/osct/probe" }
    }

    /// Waits for a line matching `predicate`.
    @discardableResult
    func waitFor(timeout: Double = 3, _ predicate: (OSCDumpLine) -> Bool) -> OSCDumpLine? {
        let deadline = Date().addingTimeInterval(timeout)
        repeat {
            if let hit = lines.first(where: predicate) { return hit }
            usleep(20_000)
        } while Date() < deadline
        return nil
    }

    /// Lines with this address.
    func lines(_ address: String) -> [OSCDumpLine] { lines.filter { $0.address == address } }
}

/// A private jackd (`-d dummy`, no realtime) under a unique name, stopped only by its own PID; after a
/// SIGKILL it reclaims the server's registry slot (same recipe as JackHostTests' PrivateJackServer).
final class DummyJackServer: @unchecked Sendable {
    private static let counter = Atomic<Int>(0)
    static var isAvailable: Bool { FileManager.default.isExecutableFile(atPath: "/usr/bin/jackd") }

    let name: String
    private(set) var sampleRate: Int
    let period: Int
    private var child: ChildProcess

    /// Starts the server and waits (`jack_wait -w`) until it accepts clients. Tries three names: on a
    /// shared machine another user of the 8 per-user registry slots may make one start fail.
    /// `realtime`: the server runs real-time (`-R -P 70`) and asks its clients to.
    init(period: Int = 256, sampleRate: Int = 48_000, realtime: Bool = false) throws {
        self.sampleRate = sampleRate
        self.period = period
        var failures: [String] = []
        for _ in 0..<3 {
            // Relaxed: only uniqueness matters.
            let name = "ss_osct_\(getpid())_\(Self.counter.add(1, ordering: .relaxed).newValue)"
            // Under the shared lock: a server start wipes the user's JACK metadata (JackServerStartLock).
            let (child, wait) = try JackServerStartLock.starting {
                let child = try ChildProcess(
                    "/usr/bin/jackd",
                    ["-n", name] + (realtime ? ["-R", "-P", "70"] : ["--no-realtime"]) + [
                        "-d", "dummy", "-r", String(sampleRate), "-p", String(period), "-C", "2", "-P", "2"
                    ])
                return (child, ChildProcess.run("/usr/bin/jack_wait", ["-s", name, "-w", "-t", "10"], timeout: 15))
            }
            if wait.status == 0 && child.isRunning {
                self.name = name
                self.child = child
                return
            }
            if child.stop() { Self.reclaimRegistrySlot(name: name, sampleRate: sampleRate, period: period) }
            failures.append("\(name): \(wait.output.suffix(300))\n\(child.output.suffix(1200))")
            usleep(300_000)
        }
        throw ExternalSetupError("jackd did not come up:\n" + failures.joined(separator: "\n---\n"))
    }

    deinit { stop() }

    /// Ends the server with `signal` (SIGKILL as a crash, SIGTERM as a shutdown) and reaps it.
    func kill(signal: Int32) {
        // Under the shared lock: a clean exit deletes the user's JACK metadata (JackServerStartLock).
        JackServerStartLock.starting { _ = child.stop(signal: signal, grace: 5) }
    }

    /// Starts a server under the same name again (at `period` frames) and waits until it accepts clients.
    func startAgain(period: Int, sampleRate rate: Int? = nil) throws {
        if let rate { sampleRate = rate }
        let sampleRate = self.sampleRate
        let (started, wait) = try JackServerStartLock.starting {
            let started = try ChildProcess(
                "/usr/bin/jackd",
                [
                    "-n", name, "--no-realtime", "-d", "dummy", "-r", String(sampleRate), "-p", String(period),
                    "-C", "2", "-P", "2"
                ])
            return (started, ChildProcess.run("/usr/bin/jack_wait", ["-s", name, "-w", "-t", "10"], timeout: 15))
        }
        child = started
        guard wait.status == 0 && child.isRunning else {
            throw ExternalSetupError("jackd '\(name)' did not come back: \(wait.output)\n\(child.output.suffix(1200))")
        }
    }

    /// Environment for JACK tools that take no server option (jack_rec).
    var environment: [String: String] { ["JACK_DEFAULT_SERVER": name, "JACK_NO_START_SERVER": "1"] }

    func stop() {
        if JackServerStartLock.starting({ child.stop() }) {
            Self.reclaimRegistrySlot(name: name, sampleRate: sampleRate, period: period)
        }
    }

    /// `jack_lsp -s NAME -c`: ports with their connections indented below them.
    /// Run again (up to three times) when its client could not open: another test's server exiting
    /// at that moment deletes the user's metadata store, which a client opening then can fail on.
    func connections() -> String {
        var result = ChildProcess.run("/usr/bin/jack_lsp", ["-s", name, "-c"], timeout: 10)
        for _ in 0..<2 where result.status != 0 && result.output.contains("Cannot open") {
            usleep(200_000)
            result = ChildProcess.run("/usr/bin/jack_lsp", ["-s", name, "-c"], timeout: 10)
        }
        return result.output
    }

    /// True when `port` is connected to `other` (as `jack_lsp -c` lists it).
    func isConnected(_ port: String, to other: String) -> Bool {
        var current = ""
        for line in connections().split(separator: "\n") {
            if line.hasPrefix(" ") || line.hasPrefix("\t") {
                if current == port && line.trimmingCharacters(in: .whitespaces) == other { return true }
            } else {
                current = String(line)
            }
        }
        return false
    }

    /// A killed jackd keeps its slot in the per-user registry of 8 until the same name starts again:
    /// start it once more and stop it with SIGTERM, then drop the killed clients' semaphores.
    static func reclaimRegistrySlot(name: String, sampleRate: Int, period: Int) {
        let arguments = ["-n", name, "--no-realtime", "-d", "dummy", "-r", String(sampleRate), "-p", String(period)]
        let started = JackServerStartLock.starting { () -> ChildProcess? in
            guard let again = try? ChildProcess("/usr/bin/jackd", arguments) else { return nil }
            _ = ChildProcess.run("/usr/bin/jack_wait", ["-s", name, "-w", "-t", "10"], timeout: 15)
            return again
        }
        guard let again = started else { return }
        again.stop()
        let prefix = "jack_sem.\(getuid())_\(name)_"
        let files = (try? FileManager.default.contentsOfDirectory(atPath: "/dev/shm")) ?? []
        for file in files where file.hasPrefix(prefix) {
            try? FileManager.default.removeItem(atPath: "/dev/shm/" + file)
        }
    }
}

/// `soundstage run PATCH --server NAME --osc-port 0 --no-start-server` on a private server.
final class SoundstageRun {
    /// The executable `swift build` puts beside the test bundle ($SOUNDSTAGE_BIN overrides).
    static var executable: String {
        if let custom = ProcessInfo.processInfo.environment["SOUNDSTAGE_BIN"] { return custom }
        return URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
            .appendingPathComponent("soundstage").path
    }

    static var isAvailable: Bool { FileManager.default.isExecutableFile(atPath: executable) }

    let child: ChildProcess
    let port: Int
    /// The web server's port (OSCQuery and the web view), from run's "web view: http://…" line.
    let httpPort: Int?
    let clientName: String

    /// Starts and waits for the "OSC: udp and tcp on 127.0.0.1:PORT" line.
    convenience init(
        patch: String, server: DummyJackServer, clientName: String, duration: Double = 300,
        extraArguments: [String] = [], environment: [String: String] = [:]
    ) throws {
        try self.init(
            child: ChildProcess(
                Self.executable,
                [
                    "run", patch, "--server", server.name, "--name", clientName,
                    "--osc-port", "0", "--no-start-server",
                    "--duration", String(duration)
                ] + extraArguments, environment: environment),
            clientName: clientName)
    }

    /// `soundstage run PATCH --name NAME --osc-port 0 --no-start-server` through PipeWire's libjack
    /// (`pw-jack`) on a private PipeWire.
    convenience init(patch: String, pipeWire: PrivatePipeWire, clientName: String, duration: Double = 300) throws {
        try self.init(
            child: ChildProcess(
                "/usr/bin/pw-jack",
                [
                    Self.executable, "run", patch, "--name", clientName, "--osc-port", "0", "--no-start-server",
                    "--duration", String(duration)
                ], environment: pipeWire.environment),
            clientName: clientName)
    }

    /// Takes a started `soundstage run` child.
    init(child: ChildProcess, clientName: String) throws {
        self.clientName = clientName
        self.child = child
        guard let output = child.waitForOutput(containing: "playing for", timeout: 20),
            let range = output.range(of: #"OSC: udp and tcp on 127\.0\.0\.1:(\d+)"#, options: .regularExpression),
            let port = Int(output[range].split(separator: ":").last ?? "")
        else {
            child.stop()
            throw ExternalSetupError("soundstage run did not start:\n\(child.output.suffix(2000))")
        }
        self.port = port
        httpPort = output.range(of: #"web view: http://127\.0\.0\.1:(\d+)/"#, options: .regularExpression)
            .flatMap { Int(output[$0].dropFirst("web view: http://127.0.0.1:".count).dropLast()) }
    }

    deinit { child.stop() }

    /// Full JACK names of the output ports.
    func outputPort(_ n: Int) -> String { "\(clientName):out_\(n)" }
}

/// `jack_rec` capturing ports of a private server into a 32-bit WAV for a fixed duration.
final class JackRecCapture {
    let path: String
    let child: ChildProcess
    let seconds: Double

    /// Starts the capture and waits until jack_rec's inputs are connected to `ports`.
    convenience init(server: DummyJackServer, ports: [String], seconds: Double) throws {
        try self.init(
            command: ["/usr/bin/jack_rec"], environment: server.environment, ports: ports, seconds: seconds,
            isConnected: { server.isConnected($0, to: $1) })
    }

    /// The same on a private PipeWire, through its libjack.
    convenience init(pipeWire: PrivatePipeWire, ports: [String], seconds: Double) throws {
        try self.init(
            command: ["/usr/bin/pw-jack", "jack_rec"], environment: pipeWire.environment, ports: ports,
            seconds: seconds,
            isConnected: { port, other in
                let listing = pipeWire.lsp(["-c", port])
                return listing.split(separator: "\n").contains { $0.trimmingCharacters(in: .whitespaces) == other }
            })
    }

    private init(
        command: [String], environment: [String: String], ports: [String], seconds: Double,
        isConnected: (String, String) -> Bool
    ) throws {
        path = NSTemporaryDirectory() + "osct-rec-\(UUID().uuidString).wav"
        self.seconds = seconds
        child = try ChildProcess(
            command[0], Array(command.dropFirst()) + ["-f", path, "-d", String(seconds), "-b", "32"] + ports,
            environment: environment)
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            let connected = ports.enumerated().allSatisfy { isConnected($0.element, "jackrec:input\($0.offset + 1)") }
            if connected { return }
            if !child.isRunning { break }
            usleep(50_000)
        }
        child.stop()
        throw ExternalSetupError("jack_rec did not connect to \(ports): \(child.output)")
    }

    deinit {
        child.stop()
        try? FileManager.default.removeItem(atPath: path)
    }

    /// Waits for jack_rec to finish its duration and reads the capture (one array per port).
    func finish() throws -> [[Float]] {
        guard child.waitForExit(timeout: seconds + 15) != nil else {
            throw ExternalSetupError("jack_rec did not finish: \(child.output)")
        }
        if child.output.contains("jackrec failed with") {
            throw ExternalSetupError("jack_rec reported overruns: \(child.output)")
        }
        return try AudioFileReader.load(path: path).channels
    }

    /// Frames where `samples` first exceeds `threshold` in magnitude after at least `gap` quiet frames
    /// (so one click is one onset).
    static func onsets(_ samples: [Float], threshold: Float = 0.5, gap: Int = 1000) -> [Int] {
        var result: [Int] = []
        var last = -gap - 1
        for (i, x) in samples.enumerated() where abs(x) > threshold {
            if i - last > gap { result.append(i) }
            last = i
        }
        return result
    }
}

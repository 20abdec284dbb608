// Control side. Detecting and starting a JACK server ourselves (never through libjack's autostart).
// Used by the CLI's `run` command only; hosts always open with JackNoStartServer.
import CJack
import Foundation
import Locking

/// Why a server could not be started.
public enum JackServerLauncherError: Error, Sendable, Equatable, CustomStringConvertible {
    /// No `jackd` executable on `$PATH`.
    case jackdNotFound
    /// A server with this name already accepts clients.
    case alreadyRunning(name: String)
    /// `jackd` could not be spawned.
    case spawnFailed(String)
    /// `jackd` exited before accepting clients; `log` is the end of its output.
    case exitedEarly(status: Int32, log: String)
    /// `jackd` did not accept clients within the timeout (it was stopped again).
    case timedOut(seconds: Double, log: String)
    /// This process runs on PipeWire's libjack (`pw-jack`): PipeWire serves JACK clients itself, and a
    /// jackd started from here would load PipeWire's library and die.
    case underPipeWire(name: String)

    public var description: String {
        switch self {
        case .jackdNotFound:
            return "jackd was not found on $PATH; install JACK 2 with `sudo apt-get install jackd2`"
        case .alreadyRunning(let name):
            return "a JACK server named '\(name)' is already running"
        case .spawnFailed(let why):
            return "could not start jackd: \(why)"
        case .exitedEarly(let status, let log):
            return "jackd exited with status \(status) before accepting clients:\n\(log)"
        case .timedOut(let seconds, let log):
            return "jackd did not accept clients within \(seconds) s:\n\(log)"
        case .underPipeWire(let name):
            return "no JACK server named '\(name)' answers through PipeWire's libjack (pw-jack), and no jackd is "
                + "started from it; leave out --server to play through PipeWire, or run without pw-jack to use jackd"
        }
    }
}

/// Starts and probes JACK servers.
///
/// Policy: `jackd` runs with `--no-realtime` unless `$SOUNDSTAGE_JACK_REALTIME` is `1` (realtime
/// scheduling needs rtprio limits most headless machines and containers do not grant, and jackd
/// refuses to start without them). The backend is ALSA when the machine has a sound card, else the
/// dummy backend (`-d dummy`), which clocks itself and has 2 capture and 2 playback ports.
public enum JackServerLauncher {
    /// True when a server named `name` (nil: `$JACK_DEFAULT_SERVER` or "default") accepts clients. Opens
    /// and closes a probe client with `JackNoStartServer`, so it never starts a server. Control side;
    /// takes a few ms. libjack's "Cannot connect to server" chatter is silenced during the probe (a
    /// missing server is an answer here, not an error).
    public static func isServerRunning(name: String?) -> Bool {
        let server = JackHostConfiguration.resolveServerName(name)
        var status = jack_status_t(rawValue: 0)
        let options = jack_options_t(rawValue: JackNoStartServer.rawValue)
        guard let client = JackLibraryMessages.silenced({ jackshim_client_open("ss_probe", options, &status, server) })
        else { return false }
        _ = jack_client_close(client)
        return true
    }

    /// True when ALSA lists a sound card (`/proc/asound/cards`) or a PCM playback device exists.
    public static func hasSoundCard() -> Bool {
        if let cards = try? String(contentsOfFile: "/proc/asound/cards", encoding: .utf8),
            !cards.contains("no soundcards"), cards.contains(where: { $0.isNumber })
        {
            return true
        }
        let devices = (try? FileManager.default.contentsOfDirectory(atPath: "/dev/snd")) ?? []
        return devices.contains { $0.hasPrefix("pcmC") && $0.hasSuffix("p") }
    }

    /// Full path of `jackd` on `$PATH` (plus /usr/bin and /usr/local/bin), or nil.
    public static func jackdPath() -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        let directories = path.split(separator: ":").map(String.init) + ["/usr/bin", "/usr/local/bin"]
        for directory in directories where !directory.isEmpty {
            let candidate = directory + "/jackd"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }

    /// The arguments `start` passes to jackd.
    public static func arguments(
        name: String?, backend: String, sampleRate: Int, period: Int,
        realtime: Bool
    ) -> [String] {
        var arguments: [String] = []
        if let name, !name.isEmpty { arguments += ["-n", name] }
        // Server options come before -d; spelled out because `-r` means --no-realtime there.
        if !realtime { arguments.append("--no-realtime") }
        arguments += ["-d", backend, "-r", String(sampleRate), "-p", String(period)]
        return arguments
    }

    /// Control side; blocks until the server accepts clients (up to `timeout` seconds). Spawns `jackd`
    /// (`-n name` when given) and returns its handle; the server lives until `stop()` or the handle's
    /// deinit. jackd's output goes to a log file in the temporary directory (`logPath`).
    public static func start(
        name: String?, sampleRate: Int = 48_000, period: Int = 256,
        timeout: Double = 10
    ) throws(JackServerLauncherError) -> JackServerProcess {
        guard let jackd = jackdPath() else { throw .jackdNotFound }
        let server = JackHostConfiguration.resolveServerName(name)
        if JackLibraryKind.current == .pipeWire { throw .underPipeWire(name: server) }
        if isServerRunning(name: server) { throw .alreadyRunning(name: server) }
        let backend = hasSoundCard() ? "alsa" : "dummy"
        let realtime = ProcessInfo.processInfo.environment["SOUNDSTAGE_JACK_REALTIME"] == "1"
        let logPath = NSTemporaryDirectory() + "soundstage-jackd-\(server)-\(getpid()).log"
        _ = FileManager.default.createFile(atPath: logPath, contents: nil)

        let process = Process()
        process.executableURL = URL(fileURLWithPath: jackd)
        // `-n` whenever the resolved name is not jackd's default, so $JACK_DEFAULT_SERVER is honoured too.
        process.arguments = arguments(
            name: server == "default" ? nil : server, backend: backend,
            sampleRate: sampleRate, period: period, realtime: realtime)
        if let log = FileHandle(forWritingAtPath: logPath) {
            process.standardOutput = log
            process.standardError = log
        }
        process.standardInput = FileHandle.nullDevice
        // Never PipeWire's libjack in a jackd (it would die: "jackctl_server_create2() not implemented").
        var environment = ProcessInfo.processInfo.environment
        environment["LD_LIBRARY_PATH"] = JackLibraryKind.libraryPathWithoutPipeWire(environment["LD_LIBRARY_PATH"])
        process.environment = environment
        do {
            try process.run()
        } catch {
            throw .spawnFailed(String(describing: error))
        }
        let handle = JackServerProcess(process: process, name: server, backend: backend, logPath: logPath)
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if !process.isRunning {
                process.waitUntilExit()
                throw .exitedEarly(status: process.terminationStatus, log: handle.logTail())
            }
            if isServerRunning(name: server) { return handle }
            usleep(100_000)
        }
        let log = handle.logTail()
        handle.stop()
        throw .timedOut(seconds: timeout, log: log)
    }
}

/// A `jackd` started by `JackServerLauncher`. Stopping it is idempotent; deinit stops it too, so keep
/// the handle as long as the server should live.
public final class JackServerProcess: Sendable {
    /// The server name clients use.
    public let name: String
    /// "alsa" or "dummy".
    public let backend: String
    public let pid: Int32
    /// Where jackd's stdout and stderr go.
    public let logPath: String
    private let process: Locked<Process?>

    init(process: Process, name: String, backend: String, logPath: String) {
        self.name = name
        self.backend = backend
        self.pid = process.processIdentifier
        self.logPath = logPath
        self.process = Locked(process)
    }

    deinit {
        stop()
    }

    /// True until the process exits.
    public var isRunning: Bool { process.withLock { $0?.isRunning ?? false } }

    /// Control side; blocks up to about 3 s. SIGTERM, wait up to `gracePeriod`, then SIGKILL; waits for
    /// the process to be reaped. Clients of the server receive their shutdown callbacks.
    public func stop(gracePeriod: Double = 3) {
        guard
            let process = process.withLock({ value -> Process? in
                let taken = value
                value = nil
                return taken
            })
        else { return }
        if process.isRunning {
            kill(pid, SIGTERM)
            let deadline = Date().addingTimeInterval(gracePeriod)
            while process.isRunning && Date() < deadline { usleep(20_000) }
            if process.isRunning { kill(pid, SIGKILL) }
        }
        process.waitUntilExit()
    }

    /// The last `maxBytes` of jackd's log.
    public func logTail(maxBytes: Int = 2_000) -> String {
        guard let data = FileManager.default.contents(atPath: logPath) else { return "" }
        return String(decoding: data.suffix(maxBytes), as: UTF8.self)
    }
}

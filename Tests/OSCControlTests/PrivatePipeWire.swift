// Test fixture. A private, headless PipeWire: its own runtime folder and session bus, pipewire,
// WirePlumber and a null sink (`nullsink`, FL/FR), reached by JACK programs through PipeWire's libjack
// (`pw-jack`). Stopped by its own PIDs; never touches another PipeWire.
import Foundation
import Glibc

final class PrivatePipeWire {
    static var isAvailable: Bool {
        ["/usr/bin/pipewire", "/usr/bin/wireplumber", "/usr/bin/pw-cli", "/usr/bin/pw-jack", "/usr/bin/dbus-daemon"]
            .allSatisfy { FileManager.default.isExecutableFile(atPath: $0) }
    }

    let runtime: String
    private let bus: ChildProcess
    private var pipewire: ChildProcess
    private var wireplumber: ChildProcess

    /// What a child needs to reach this PipeWire.
    var environment: [String: String] {
        [
            "XDG_RUNTIME_DIR": runtime, "PIPEWIRE_RUNTIME_DIR": runtime,
            "DBUS_SESSION_BUS_ADDRESS": "unix:path=\(runtime)/bus", "JACK_NO_START_SERVER": "1"
        ]
    }

    init() throws {
        var template = Array((NSTemporaryDirectory() + "ss-pw-XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else { throw ExternalSetupError("mkdtemp failed") }
        runtime = String(cString: made)
        bus = try ChildProcess(
            "/usr/bin/dbus-daemon", ["--session", "--address=unix:path=\(runtime)/bus", "--nofork", "--nopidfile"])
        let environment = [
            "XDG_RUNTIME_DIR": runtime, "PIPEWIRE_RUNTIME_DIR": runtime,
            "DBUS_SESSION_BUS_ADDRESS": "unix:path=\(runtime)/bus"
        ]
        guard Self.waitForFile(runtime + "/bus", timeout: 5) else {
            throw ExternalSetupError("dbus-daemon did not come up: \(bus.output)")
        }
        (pipewire, wireplumber) = try Self.startDaemons(environment: environment, runtime: runtime)
    }

    deinit { stop() }

    /// pipewire, then WirePlumber, then the null sink; waits until a JACK client sees its ports.
    private static func startDaemons(environment: [String: String], runtime: String) throws
        -> (ChildProcess, ChildProcess)
    {
        let pipewire = try ChildProcess("/usr/bin/pipewire", [], environment: environment)
        guard waitForFile(runtime + "/pipewire-0", timeout: 5) else {
            throw ExternalSetupError("pipewire did not come up: \(pipewire.output)")
        }
        var wireplumber = try ChildProcess("/usr/bin/wireplumber", [], environment: environment)
        var wireplumberStarts = 1
        var made = false
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            // On a loaded machine WirePlumber once failed to connect to the pipewire still starting
            // ("Failed to connect to PipeWire") and exited: it is started again.
            if !wireplumber.isRunning {
                wireplumber = try ChildProcess("/usr/bin/wireplumber", [], environment: environment)
                wireplumberStarts += 1
            }
            // One sink: made again only when pw-cli failed (a lingering node made twice shows as a
            // second `nullsink` with suffixed port names).
            if !made {
                made =
                    ChildProcess.run(
                        "/usr/bin/pw-cli",
                        [
                            "create-node", "adapter",
                            "{ factory.name=support.null-audio-sink node.name=nullsink media.class=Audio/Sink "
                                + "object.linger=true audio.position=[FL FR] }"
                        ], environment: environment, timeout: 10
                    ).status == 0
            }
            if made && lsp(environment).contains("nullsink:playback_FL") {
                return (pipewire, wireplumber)
            }
            usleep(200_000)
        }
        throw ExternalSetupError(
            "no null sink on the private PipeWire (sink made: \(made), WirePlumber started \(wireplumberStarts) times): "
                + "\(pipewire.output)\n\(wireplumber.output)")
    }

    private static func waitForFile(_ path: String, timeout: Double) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if FileManager.default.fileExists(atPath: path) { return true }
            usleep(20_000)
        }
        return false
    }

    private static func lsp(_ environment: [String: String], _ arguments: [String] = []) -> String {
        ChildProcess.run("/usr/bin/pw-jack", ["jack_lsp"] + arguments, environment: environment, timeout: 10).output
    }

    /// `jack_lsp` through PipeWire's libjack.
    func lsp(_ arguments: [String] = []) -> String { Self.lsp(environment, arguments) }

    /// A JACK tool run through PipeWire's libjack.
    func run(_ tool: String, _ arguments: [String]) -> (status: Int32, output: String) {
        ChildProcess.run("/usr/bin/pw-jack", [tool] + arguments, environment: environment, timeout: 10)
    }

    /// Ends pipewire with `signal` (WirePlumber, left without it, is stopped too).
    func kill(signal: Int32) {
        pipewire.stop(signal: signal, grace: 5)
        wireplumber.stop(signal: SIGTERM, grace: 2)
    }

    /// pipewire, WirePlumber and the null sink again, in the same runtime folder.
    func startAgain() throws {
        (pipewire, wireplumber) = try Self.startDaemons(environment: environment, runtime: runtime)
    }

    func stop() {
        wireplumber.stop()
        pipewire.stop()
        bus.stop()
        try? FileManager.default.removeItem(atPath: runtime)
    }
}

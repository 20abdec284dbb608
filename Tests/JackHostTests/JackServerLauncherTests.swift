// Starting and detecting servers ourselves (libjack's autostart is never used).
import AudioGraph
import DSPTestSupport
import Foundation
import JackHost
import Testing

extension JackHostTests {
    @Suite("Server launcher")
    struct Launcher {
        @Test func startsAServerOnTheAvailableBackendAndStopsIt() throws {
            let name = PrivateJackServer.uniqueName(prefix: "ss_launch")
            #expect(!JackServerLauncher.isServerRunning(name: name))
            let began = Date()
            let server = try JackServerStartLock.starting {
                try JackServerLauncher.start(name: name, sampleRate: 48_000, period: 256)
            }
            let startup = Date().timeIntervalSince(began)
            #expect(server.name == name)
            #expect(server.backend == (JackServerLauncher.hasSoundCard() ? "alsa" : "dummy"))
            #expect(server.pid > 0 && server.isRunning)
            #expect(JackServerLauncher.isServerRunning(name: name))
            #expect(startup < 10)
            #expect(throws: JackServerLauncherError.alreadyRunning(name: name)) {
                _ = try JackServerLauncher.start(name: name)
            }
            let host = JackHost(
                configuration: JackHostConfiguration(serverName: name),
                renderEngine: RenderEngine(maxBlockFrames: 64))
            let report = try host.start()
            #expect(report.sampleRate == 48_000 && report.bufferSize == 256)
            host.stop()
            server.stop()
            #expect(!server.isRunning)
            #expect(kill(server.pid, 0) != 0, "jackd \(server.pid) was not reaped")
            #expect(!JackServerLauncher.isServerRunning(name: name))
            server.stop()
            try? FileManager.default.removeItem(atPath: server.logPath)
        }

        @Test func serverOptionsComeBeforeTheDriver() {
            #expect(
                JackServerLauncher.arguments(
                    name: "x", backend: "dummy", sampleRate: 44_100, period: 128,
                    realtime: false)
                    == ["-n", "x", "--no-realtime", "-d", "dummy", "-r", "44100", "-p", "128"])
            #expect(
                JackServerLauncher.arguments(
                    name: nil, backend: "alsa", sampleRate: 48_000, period: 256,
                    realtime: true)
                    == ["-d", "alsa", "-r", "48000", "-p", "256"])
        }

        @Test func probingAnAbsentServerStartsNothing() {
            let name = PrivateJackServer.uniqueName(prefix: "ss_probe_absent")
            #expect(!JackServerLauncher.isServerRunning(name: name))
            usleep(200_000)
            #expect(PrivateJackServer.processes(commandLineContaining: name).isEmpty)
        }

        @Test func missingJackdErrorTellsHowToInstallIt() {
            #expect(String(describing: JackServerLauncherError.jackdNotFound).contains("apt-get install jackd2"))
        }
    }
}

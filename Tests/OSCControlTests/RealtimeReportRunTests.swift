// `soundstage run` says whether its JACK process thread got real-time scheduling: at start on its
// output (a service's journal) and in `/status/realtime`. Three cases on private dummy servers: a
// server without real-time, a real-time server whose client may use it, and one whose client may not
// (the process started without CAP_SYS_NICE and with no rtprio limit, as a user outside the audio group).
import Foundation
@testable import OSCControl
import Testing

extension OSCExternalSerialSuites {
    @Suite struct RealtimeReportRunTests {}
}

extension OSCExternalSerialSuites.RealtimeReportRunTests {
    /// True when this process may use SCHED_FIFO (root, CAP_SYS_NICE or an rtprio limit), as chrt finds.
    static var mayUseRealtime: Bool {
        ChildProcess.run("/usr/bin/chrt", ["-f", "1", "/bin/true"], timeout: 10).status == 0
    }

    private func patch() throws -> (String, URL) {
        let folder = URL(fileURLWithPath: NSTemporaryDirectory() + "osct-rt-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let path = folder.appendingPathComponent("rt.yaml").path
        try OSCExternalSerialSuites.HotReloadRunTests.patch(toneVolume: 0.25, right: nil).write(
            toFile: path, atomically: true, encoding: .utf8)
        return (path, folder)
    }

    private func realtime(_ run: SoundstageRun) -> [OSCArgument]? {
        OSCTestClient(port: run.port).request("/status/realtime", reply: "/status/realtime.reply")?.arguments
    }

    @Test(.needsJackAndSoundstage, .timeLimit(.minutes(1)))
    func aServerWithoutRealtimeIsSaid() throws {
        let server = try DummyJackServer()
        let (path, folder) = try patch()
        defer { try? FileManager.default.removeItem(at: folder) }
        let run = try SoundstageRun(patch: path, server: server, clientName: "ss_rt_off")
        #expect(run.child.output.contains("real-time scheduling: no: the JACK server runs without real-time"))
        #expect(realtime(run) == [.string("not-realtime"), .string("SCHED_OTHER"), .int32(0)])
    }

    @Test(.needsJackAndSoundstage, .timeLimit(.minutes(1)))
    func aRealtimeServerGivesItsClientRealtimeWhereAllowedAndTheRefusalIsSaid() throws {
        let server = try DummyJackServer(realtime: true)
        let (path, folder) = try patch()
        defer { try? FileManager.default.removeItem(at: folder) }
        if Self.mayUseRealtime {
            let run = try SoundstageRun(patch: path, server: server, clientName: "ss_rt_on")
            #expect(run.child.output.contains("real-time scheduling: yes (SCHED_"), "\(run.child.output.suffix(1500))")
            let reply = realtime(run)
            #expect(reply?.first == .string("realtime"), "\(String(describing: reply))")
            if case .int32(let priority) = reply?.last { #expect(priority > 0) } else { Issue.record("no priority") }
        }
        // With no rtprio limit and without CAP_SYS_NICE (root loses it from the bounding set), the client
        // cannot follow the server; run says so on standard error.
        let dropCapability = getuid() == 0 ? ["/usr/bin/setpriv", "--bounding-set=-sys_nice", "--"] : []
        let child = try ChildProcess(
            "/usr/bin/prlimit",
            ["--rtprio=0"] + dropCapability + [
                SoundstageRun.executable, "run", path, "--server", server.name, "--name", "ss_rt_denied",
                "--osc-port", "0", "--no-start-server", "--duration", "300"
            ])
        let run = try SoundstageRun(child: child, clientName: "ss_rt_denied")
        #expect(
            run.child.output.contains("real-time scheduling: NO: the server is real-time"),
            "\(run.child.output.suffix(1500))")
        #expect(realtime(run)?.prefix(2) == [.string("denied"), .string("SCHED_OTHER")])
    }
}

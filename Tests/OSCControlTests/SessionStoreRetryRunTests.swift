// Two `soundstage run` sessions on one private jackd whose metadata store was deleted under them, so each
// reads the other through `jack_property -l`. When that read fails (the tool refused or too slow under
// load), no callback will come to say the store still holds something new: the session must read again
// by itself. A `jack_property` placed first on one engine's PATH refuses `-l` while a marker file exists.
import Foundation
import DSPTestSupport
@testable import OSCControl
import Testing

extension OSCExternalSerialSuites {
    @Suite struct SessionStoreRetryRunTests {}
}

/// The three-session test's patch (a looping tone) and failure journals.
private typealias SessionSharing = OSCExternalSerialSuites.SessionSharingRunTests

extension OSCExternalSerialSuites.SessionStoreRetryRunTests {
    @Test(.needsJackAndSoundstage, .timeLimit(.minutes(2)))
    func aFailedReadOfTheOthersIsTriedAgain() throws {
        // The test deletes the user's metadata store; no other server may start or stop meanwhile.
        try JackServerStartLock.exclusively { try readsAgainAfterAFailure() }
    }

    private func readsAgainAfterAFailure() throws {
        let server = try DummyJackServer()
        let folder = NSTemporaryDirectory() + "osct-storeretry-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let marker = folder + "/refuse-listing"
        let tool = folder + "/bin/jack_property"
        try FileManager.default.createDirectory(atPath: folder + "/bin", withIntermediateDirectories: true)
        try """
        #!/bin/sh
        if [ "$1" = "-l" ] && [ -e '\(marker)' ]; then exit 1; fi
        exec /usr/bin/jack_property "$@"

        """.write(toFile: tool, atomically: true, encoding: .utf8)
        chmod(tool, 0o755)
        let path = folder + "/bin:" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")

        var runs: [SoundstageRun] = []
        for (name, session, environment) in [
            ("ss_retry_music", "category: playback, active: true", ["PATH": path]),
            ("ss_retry_radio", "category: playback", [:])
        ] {
            let file = "\(folder)/\(name).yaml"
            try SessionSharing.patch(session: session).write(toFile: file, atomically: true, encoding: .utf8)
            runs.append(try SoundstageRun(patch: file, server: server, clientName: name, environment: environment))
        }
        let music = OSCTestClient(port: runs[0].port)
        let radio = OSCTestClient(port: runs[1].port)
        func journals() -> String { SessionSharing.journals(runs) }

        // Another server of the user exits cleanly: both sessions now read the store out of process.
        try DummyJackServer().stop()
        usleep(1_500_000)
        #expect(music.command("/notify", [.int32(1)])?.address == "/done")
        _ = music.takeAll()

        // The music session's reads fail while the radio activates: it cannot know yet.
        #expect(FileManager.default.createFile(atPath: marker, contents: Data()))
        #expect(radio.command("/session/activate")?.address == "/done")
        // Other notifications (an xrun on a loaded machine) may come meanwhile; only an interruption counts.
        let unseen = music.receive(timeout: 2) { $0.address == "/session/interruption" }
            .filter { $0.address == "/session/interruption" }
        #expect(unseen.isEmpty, "read the store through a refusing jack_property: \(unseen)")
        #expect(music.request("/session/state")?.arguments == [.string("active")], "\(journals())")

        // Once the tool works again, the session reads the store by itself (nothing else changes on the
        // server to wake it) and is interrupted.
        try FileManager.default.removeItem(atPath: marker)
        let began = music.receive(timeout: 5) { $0.address == "/session/interruption" }
        #expect(began.contains { $0.arguments == [.string("began")] }, "\(began)\n\(journals())")
        #expect(music.request("/session/state")?.arguments == [.string("interrupted")])
        #expect(music.request("/node/p/playing")?.arguments.first?.boolValue == false)

        for client in [music, radio] { #expect(client.command("/quit")?.address == "/done") }
        for run in runs { #expect(run.child.waitForExit(timeout: 10) == 0, "\(run.child.output.suffix(1500))") }
    }
}

// python-osc (PyPI) as an outside client: request/reply against `soundstage run` on a private JACK server,
// subscriptions (lease, /renew, reply URLs, node and player notifications) and bundles (atomic, nested
// time tags checked in the rendered audio). The scripts are in Python/ext_*.py. Skipped, with the reason,
// when python-osc cannot be imported or installed (PyPI unreachable); a failure instead under
// scripts/test.sh (SOUNDSTAGE_REQUIRE_TOOLS=1, see ToolRequirement).
import AudioGraph
import DSPTestSupport
import Foundation
@testable import OSCControl
import Testing

@Suite struct ExternalPythonOSCTests {
    static let scripts = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Python")

    /// Runs `Python/<name>` with python-osc and expects exit status 0 and "OK"; returns whether it passed.
    @discardableResult
    static func runScript(_ name: String, _ arguments: [String], timeout: Double = 60) throws -> Bool {
        let python = try #require(PythonOSC.interpreter.path, Comment(rawValue: PythonOSC.interpreter.reason))
        let result = PythonOSC.run(python, [scripts.appendingPathComponent(name).path] + arguments, timeout: timeout)
        #expect(result.status == 0, Comment(rawValue: "\(name): \(result.output)"))
        #expect(result.output.hasSuffix("OK\n"), Comment(rawValue: result.output))
        return result.status == 0 && result.output.hasSuffix("OK\n")
    }

    @Test(
        .requiresTool(
            "python-osc", PythonOSC.interpreter.path != nil,
            "python-osc is not available (PyPI unreachable?)"))
    func subscriptionsLeasesAndNotifications() throws {
        let lease = 1.0
        let f = try OSCFixture(lease: lease)
        let click = try f.writeWAV("click.wav", channels: [OSCFixture.click(frames: 4800)])
        try Self.runScript("ext_subscriptions.py", [String(f.port), String(lease), click])
    }

    @Test(
        .requiresTool(
            "python-osc", PythonOSC.interpreter.path != nil,
            "python-osc is not available (PyPI unreachable?)"))
    func bundlesApplyAtomicallyAndOnTheirTimetags() throws {
        let f = try OSCFixture()
        try f.engine.addBuffer(SampleBuffer(name: "clk", channels: [OSCFixture.click(frames: 48)], sampleRate: 48_000))
        let from = f.renderer.frameCount
        try Self.runScript("ext_bundles.py", [String(f.port)])
        // First pair: one immediate bundle, the same frame. Second pair: nested bundles 0.25 s apart.
        let a1 = try #require(f.renderer.onset(channel: 0, from: from))
        let b1 = try #require(f.renderer.onset(channel: 1, from: from))
        #expect(a1 == b1)
        let a2 = try #require(f.renderer.onset(channel: 0, from: a1 + 1))
        let b2 = try #require(f.renderer.onset(channel: 1, from: b1 + 1))
        #expect(b2 - a2 == 12_000)
        #expect(f.renderer.onset(channel: 0, from: a2 + 1) == nil)
        #expect(f.renderer.onset(channel: 1, from: b2 + 1) == nil)
    }
}

extension OSCExternalSerialSuites {
    /// python-osc against `soundstage run` on a private JACK server (serialized with the other JACK tests).
    @Suite struct ExternalPythonOSCRunTests {
        @Test(
            .requiresTool(
                "python-osc", PythonOSC.interpreter.path != nil,
                "python-osc is not available (PyPI unreachable?)"),
            .needsJackAndSoundstage,
            .timeLimit(.minutes(2)))
        func requestReplyAgainstSoundstageRun() throws {
            let server = try DummyJackServer()
            let folder = NSTemporaryDirectory() + "osct-py-run-\(UUID().uuidString)"
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: folder) }
            let patch = folder + "/two-clicks.yaml"
            try ExternalPatches.twoClicks.write(toFile: patch, atomically: true, encoding: .utf8)
            let run = try SoundstageRun(patch: patch, server: server, clientName: "ss_pyreq")
            let arguments = [String(run.port), server.name, run.clientName]
            guard try ExternalPythonOSCTests.runScript("ext_requests.py", arguments) else { return }
            // The script's /quit stops soundstage run cleanly.
            let status = run.child.waitForExit(timeout: 10)
            #expect(status == 0, Comment(rawValue: run.child.output))
            #expect(run.child.output.contains("/quit received over OSC"))
        }
    }
}

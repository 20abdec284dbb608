// python-osc (PyPI) as an independent client: request/reply, coercion, errors, lists, subscriptions,
// bundles, late bundles and meter datagram sizes. Skipped, with the reason, when python-osc cannot be
// found or installed into a test-local virtual environment; a failure instead under scripts/test.sh
// (SOUNDSTAGE_REQUIRE_TOOLS=1, see ToolRequirement).
import DSPTestSupport
import Foundation
@testable import OSCControl
import Testing

enum PythonOSC {
    /// A python3 that can `import pythonosc`: $SOUNDSTAGE_PYTHON, the system one, or a venv created once
    /// under the temporary folder with `pip install python-osc`. Nil (with a reason) otherwise.
    static let interpreter: (path: String?, reason: String) = find()

    private static func find() -> (String?, String) {
        var candidates: [String] = []
        if let custom = ProcessInfo.processInfo.environment["SOUNDSTAGE_PYTHON"] { candidates.append(custom) }
        let venv = NSTemporaryDirectory() + "soundstage-python-osc-venv"
        candidates += [venv + "/bin/python3", "/usr/bin/python3"]
        for python in candidates where canImport(python) { return (python, "") }
        guard run("/usr/bin/python3", ["-m", "venv", venv]).status == 0 else {
            return (nil, "python3 -m venv failed (python3-venv missing?)")
        }
        let pip = run(venv + "/bin/python3", ["-m", "pip", "install", "--quiet", "python-osc"], timeout: 180)
        guard pip.status == 0, canImport(venv + "/bin/python3") else {
            return (nil, "pip install python-osc failed: \(pip.output.suffix(300))")
        }
        return (venv + "/bin/python3", "")
    }

    private static func canImport(_ python: String) -> Bool {
        FileManager.default.isExecutableFile(atPath: python) && run(python, ["-c", "import pythonosc"]).status == 0
    }

    static func run(_ executable: String, _ arguments: [String], timeout: Double = 60) -> (
        status: Int32, output: String
    ) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        do { try process.run() } catch { return (-1, "\(error)") }
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }
}

@Suite struct OSCPythonClientTests {
    @Test(
        .requiresTool(
            "python-osc", PythonOSC.interpreter.path != nil,
            "python-osc is not available (PyPI unreachable?)"))
    func pythonOSCClientPassesItsChecks() throws {
        let python = try #require(PythonOSC.interpreter.path, Comment(rawValue: PythonOSC.interpreter.reason))
        let f = try OSCFixture()
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("Python/python_osc_client.py").path
        let result = PythonOSC.run(python, [script, String(f.port)], timeout: 60)
        #expect(result.status == 0, Comment(rawValue: result.output))
        #expect(result.output.contains("OK"))
    }
}

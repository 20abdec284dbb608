// The python3 the OSCQuery and web view tests drive Soundstage with: python-osc, websockets and
// selenium importable ($SOUNDSTAGE_WEB_PYTHON, or the virtual environment scripts/python-web.sh makes).
import Foundation
import Testing

enum PythonWeb {
    static let interpreter: (path: String?, reason: String) = find()

    private static func find() -> (String?, String) {
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../scripts/python-web.sh").standardized.path
        let result = PythonOSC.run("/bin/bash", [script], timeout: 300)
        let path = result.output.split(separator: "\n").last.map(String.init) ?? ""
        guard result.status == 0, FileManager.default.isExecutableFile(atPath: path) else {
            return (nil, "scripts/python-web.sh failed: \(result.output.suffix(400))")
        }
        return (path, "")
    }

    /// Runs a script of Tests/OSCControlTests/Python with the interpreter.
    static func runScript(_ name: String, _ arguments: [String], timeout: Double = 120) throws -> (
        status: Int32, output: String
    ) {
        let python = try #require(interpreter.path, Comment(rawValue: interpreter.reason))
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("Python/\(name)").path
        return PythonOSC.run(python, [script] + arguments, timeout: timeout)
    }
}

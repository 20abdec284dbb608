// Test support (control side only). Runs external programs: the `ffmpeg` CLI (an independent M4A
// writer, when installed) and the `soundstage` executable built beside the test bundle.

import Foundation
import Testing

/// What a finished process printed and returned.
struct ProcessResult {
    var status: Int32
    var stdout: String
    var stderr: String
}

/// Runs `executable` with `arguments` to completion, capturing both output streams (stderr is a
/// pipe, so it is never a terminal).
func runProcess(_ executable: URL, _ arguments: [String], input: Data? = nil) throws -> ProcessResult {
    let process = Process()
    process.executableURL = executable
    process.arguments = arguments
    if let input {
        // A pipe, as a shell's `|` gives (the input is small enough for the pipe's buffer).
        let pipe = Pipe()
        pipe.fileHandleForWriting.write(input)
        try pipe.fileHandleForWriting.close()
        process.standardInput = pipe
    }
    let directory = FileManager.default.temporaryDirectory
    let outURL = directory.appendingPathComponent("out-\(UUID().uuidString)")
    let errURL = directory.appendingPathComponent("err-\(UUID().uuidString)")
    for url in [outURL, errURL] { _ = FileManager.default.createFile(atPath: url.path, contents: nil) }
    defer {
        try? FileManager.default.removeItem(at: outURL)
        try? FileManager.default.removeItem(at: errURL)
    }
    // Files, not pipes: a chatty child can never block on a full pipe.
    let outHandle = try FileHandle(forWritingTo: outURL)
    let errHandle = try FileHandle(forWritingTo: errURL)
    process.standardOutput = outHandle
    process.standardError = errHandle
    try process.run()
    process.waitUntilExit()
    try outHandle.close()
    try errHandle.close()
    return ProcessResult(
        status: process.terminationStatus,
        stdout: String(decoding: try Data(contentsOf: outURL), as: UTF8.self),
        stderr: String(decoding: try Data(contentsOf: errURL), as: UTF8.self))
}

/// The external `ffmpeg` command, when installed (Debian package `ffmpeg`).
enum FFmpegTool {
    static let executable: URL? = {
        let paths = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":")
        return paths.map { URL(fileURLWithPath: String($0)).appendingPathComponent("ffmpeg") }
            .first { FileManager.default.isExecutableFile(atPath: $0.path) }
    }()

    static var isAvailable: Bool { executable != nil }

    /// Runs `ffmpeg -v error -y <arguments>` and expects success.
    static func run(_ arguments: [String]) throws {
        let url = try #require(executable)
        let result = try runProcess(url, ["-v", "error", "-y"] + arguments)
        #expect(result.status == 0, "ffmpeg \(arguments.joined(separator: " ")) failed: \(result.stderr)")
    }
}

/// The `soundstage` executable that `swift build` puts next to the test bundle.
enum SoundstageTool {
    static let executable = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        .appendingPathComponent("soundstage")

    static var isAvailable: Bool { FileManager.default.isExecutableFile(atPath: executable.path) }

    static func run(_ arguments: [String], input: Data? = nil) throws -> ProcessResult {
        try runProcess(executable, arguments, input: input)
    }
}

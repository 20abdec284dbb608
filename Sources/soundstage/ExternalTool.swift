// Control side. The Debian programs the commands draw with (Graphviz's dot, gnuplot, sox), run as
// child processes with arguments (no shell) and a time limit.
import Foundation
import Locking

/// A program from a Debian package, found on `PATH` (/usr/local/bin and /usr/bin when it is unset).
struct ExternalTool {
    /// The program's name, e.g. "gnuplot".
    var name: String
    /// The Debian package that installs it, e.g. "gnuplot-nox".
    var package: String
    /// What it is needed for, for the message when it is missing ("--plot").
    var purpose: String

    static func gnuplot(for purpose: String) -> Self { Self(name: "gnuplot", package: "gnuplot-nox", purpose: purpose) }
    static func sox(for purpose: String) -> Self { Self(name: "sox", package: "sox", purpose: purpose) }
    static func dot(for purpose: String) -> Self { Self(name: "dot", package: "graphviz", purpose: purpose) }

    /// The program's path.
    ///
    /// - Throws: a failure naming the Debian package to install when it is not there.
    func locate() throws(CommandFailure) -> String {
        let search = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin"
        let folders = search.split(separator: ":").map(String.init).filter { !$0.isEmpty }
        let path = folders.map { $0 + "/" + name }.first { FileManager.default.isExecutableFile(atPath: $0) }
        guard let path else {
            throw CommandFailure("\(purpose) needs \(name), which is not installed (apt-get install \(package))")
        }
        return path
    }

    /// Runs the program with `arguments`, feeding `input` on its standard input, and returns its
    /// standard output. It is stopped (SIGTERM, then SIGKILL) after `timeout` seconds.
    ///
    /// - Throws: a failure with the program's own message when it cannot start, exits non-zero or
    ///   runs out of time.
    func run(_ arguments: [String], input: Data? = nil, timeout: Double = 120) throws(CommandFailure) -> Data {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try locate())
        process.arguments = arguments
        let output = Pipe()
        let errors = Pipe()
        let feed = Pipe()
        process.standardInput = input == nil ? FileHandle.nullDevice : feed
        process.standardOutput = output
        process.standardError = errors
        let finished = DispatchSemaphore(value: 0)
        process.terminationHandler = { _ in finished.signal() }
        do {
            try process.run()
        } catch {
            throw CommandFailure("\(name) could not start: \(error)")
        }
        // Both pipes are drained on their own threads, so that neither can fill and stall the program.
        let collected = ToolOutput()
        let group = DispatchGroup()
        for (pipe, isError) in [(output, false), (errors, true)] {
            DispatchQueue.global().async(group: group) {
                collected.store(pipe.fileHandleForReading.readDataToEndOfFile(), isError: isError)
            }
        }
        if let input {
            DispatchQueue.global().async(group: group) {
                try? feed.fileHandleForWriting.write(contentsOf: input)
                try? feed.fileHandleForWriting.close()
            }
        }
        if finished.wait(timeout: .now() + timeout) == .timedOut {
            process.terminate()
            if finished.wait(timeout: .now() + 2) == .timedOut {
                kill(process.processIdentifier, SIGKILL)
                finished.wait()
            }
            group.wait()
            throw CommandFailure("\(name) did not finish within \(Int(timeout)) s and was stopped")
        }
        group.wait()
        let (stdout, stderr) = collected.result
        guard process.terminationReason == .exit, process.terminationStatus == 0 else {
            let message = String(decoding: stderr, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            let how =
                process.terminationReason == .exit
                ? "exited with status \(process.terminationStatus)"
                : "was killed by signal \(process.terminationStatus)"
            throw CommandFailure("\(name) failed (\(how))" + (message.isEmpty ? "" : ": \(message)"))
        }
        return stdout
    }
}

/// What a program wrote, gathered from the threads that read its pipes.
private final class ToolOutput: Sendable {
    private let state = Locked((output: Data(), errors: Data()))

    func store(_ data: Data, isError: Bool) {
        state.withLock {
            if isError { $0.errors = data } else { $0.output = data }
        }
    }

    var result: (Data, Data) { state.withLock { ($0.output, $0.errors) } }
}

// Control side (the main thread, and handlers it installs). What the commands print: status lines on
// standard output (silenced by --quiet) and errors on standard error (always printed).
import ArgumentParser
import Foundation
import Synchronization

/// The process-wide `--quiet` switch, set once by the command before it prints anything.
enum Console {
    private static let quiet = Atomic<Bool>(false)

    /// True after `--quiet`: `say` and `chatter` print nothing.
    static var isQuiet: Bool {
        get { quiet.load(ordering: .relaxed) }
        set { quiet.store(newValue, ordering: .relaxed) }
    }
}

/// Writes a line to standard output at once (unbuffered), so logs and pipes see each status line
/// when it happens. Nothing with `--quiet`.
func say(_ message: String) {
    guard !Console.isQuiet else { return }
    FileHandle.standardOutput.write(Data((message + "\n").utf8))
}

/// A status line on standard error (used when standard output carries audio). Nothing with `--quiet`.
func chatter(_ message: String) {
    guard !Console.isQuiet else { return }
    FileHandle.standardError.write(Data((message + "\n").utf8))
}

/// Writes a line to standard error: errors and warnings, printed even with `--quiet`.
func printError(_ message: String) {
    FileHandle.standardError.write(Data((message + "\n").utf8))
}

/// `--quiet`, the same on every command.
struct QuietOption: ParsableArguments {
    @Flag(
        name: [.long, .customShort("q")],
        help: "Print nothing but errors and warnings (no progress bar, no status lines).")
    var quiet = false

    /// Sets `Console.isQuiet`; call first in `run()`.
    func apply() {
        Console.isQuiet = quiet
    }
}

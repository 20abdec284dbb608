// Control side (main thread, and the signal handler it installs). Removes an unfinished output when
// SIGINT, SIGTERM or SIGHUP arrives and says what was left, so an interrupted command never leaves
// a half-written file.
import AudioFiles
import Foundation

/// While alive (until `clear()`), SIGINT/SIGTERM/SIGHUP remove `path` (unlink is async-signal-safe),
/// write `message` to standard error and exit with 128 + the signal number.
/// One at a time per process: the commands write one output each.
struct InterruptCleanup {
    /// C copies read by the signal handler.
    nonisolated(unsafe) private static var path: UnsafeMutablePointer<CChar>?
    nonisolated(unsafe) private static var message: UnsafeMutablePointer<CChar>?
    /// A scratch folder and the files that may be in it (a plot's), removed too; nil-terminated.
    nonisolated(unsafe) private static var scratch: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?

    private static let signals = [SIGINT, SIGTERM, SIGHUP]

    /// - Parameters:
    ///   - path: the working file to remove; nil when there is nothing to remove.
    ///   - message: one line for standard error (a newline is added).
    init(removing path: String?, message: String) {
        Self.path = path.map { strdup($0) }
        Self.message = strdup(message + "\n")
        var mask = sigset_t()
        sigemptyset(&mask)
        for signalNumber in Self.signals {
            let previous = signal(signalNumber) { number in
                if let path = InterruptCleanup.path { unlink(path) }
                InterruptCleanup.removeScratch()
                if let message = InterruptCleanup.message { _ = write(STDERR_FILENO, message, strlen(message)) }
                _exit(128 + number)
            }
            // A signal the caller chose to ignore (nohup) stays ignored.
            if Self.isIgnore(previous) {
                signal(signalNumber, SIG_IGN)
            } else {
                sigaddset(&mask, signalNumber)
            }
        }
        // A parent may hand down these signals blocked (Foundation's Process does); deliver them.
        pthread_sigmask(SIG_UNBLOCK, &mask, nil)
    }

    /// Cleanup for `writer`'s working file, with the message `command` prints: an existing file is
    /// "not written and left as it was"; a stream (`-`, a device, a FIFO) had "nothing written".
    init(for writer: AudioFileWriter, command: String) {
        let left =
            writer.sink == .file
            ? "'\(writer.path)' was not written and is left as it was" : "nothing was written to '\(writer.path)'"
        self.init(removing: writer.temporaryPath, message: "soundstage \(command): interrupted; \(left).")
    }

    /// True when a disposition returned by `signal` is `SIG_IGN` (C function pointers are not
    /// Equatable in Swift; compare their addresses).
    private static func isIgnore(_ handler: __sighandler_t?) -> Bool {
        guard let handler else { return false }
        return unsafeBitCast(handler, to: Int.self) == unsafeBitCast(SIG_IGN, to: Int.self)
    }

    /// Also removes `files` and then `folder` on a signal, from now until `forgetScratch()` (the
    /// scratch audio of a plot, which may be as large as the render). Works with or without a
    /// cleanup installed: without one, no handler runs.
    static func removeScratch(folder: String, files: [String]) {
        forgetScratch()
        let list = UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>.allocate(capacity: files.count + 2)
        for (index, file) in files.enumerated() { list[index] = strdup(folder + "/" + file) }
        list[files.count] = strdup(folder)
        list[files.count + 1] = nil
        scratch = list
    }

    /// Stops removing the scratch folder on a signal.
    static func forgetScratch() {
        guard let list = scratch else { return }
        scratch = nil
        var index = 0
        while let entry = list[index] {
            free(entry)
            index += 1
        }
        list.deallocate()
    }

    /// In the signal handler: unlink each file, then rmdir the folder (the last entry).
    private static func removeScratch() {
        guard let list = scratch else { return }
        var index = 0
        while let entry = list[index] {
            if list[index + 1] == nil { rmdir(entry) } else { unlink(entry) }
            index += 1
        }
    }

    /// Restores the default dispositions (keeping ignored signals ignored) and forgets the path.
    func clear() {
        for signalNumber in Self.signals where Self.isIgnore(signal(signalNumber, SIG_DFL)) {
            signal(signalNumber, SIG_IGN)
        }
        free(Self.path)
        free(Self.message)
        Self.path = nil
        Self.message = nil
    }
}

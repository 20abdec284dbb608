// OSC worker. Waits, a bounded time, for a program to read a FIFO before the worker writes to it.
import Glibc

/// For a FIFO: a write end opened without blocking once a reader is there, held until the real write
/// has opened the FIFO (so a reader that opened does not see the end of the data before it starts).
/// For anything else: nothing.
struct FIFOReader {
    private let descriptor: Int32

    /// Waits up to `seconds` for a reader of `path` when it is a FIFO; throws `.fileError` (naming
    /// `shownAs`) when none came.
    init(path: String, shownAs: String, seconds: Double) throws(OSCFailure) {
        var info = stat()
        guard stat(path, &info) == 0, info.st_mode & S_IFMT == S_IFIFO else {
            descriptor = -1
            return
        }
        let deadline = SystemClock.monotonicSeconds() + seconds
        while true {
            let fd = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC)
            if fd >= 0 {
                descriptor = fd
                return
            }
            guard errno == ENXIO, SystemClock.monotonicSeconds() < deadline else {
                let reason =
                    errno == ENXIO ? "no program read it within \(Int(seconds)) s" : String(cString: strerror(errno))
                throw OSCFailure(.fileError, "cannot write the FIFO '\(OSCText.sanitized(shownAs))': \(reason)")
            }
            usleep(20_000)
        }
    }

    /// Lets go of the write end (after the real write is done).
    func release() {
        if descriptor >= 0 { close(descriptor) }
    }
}

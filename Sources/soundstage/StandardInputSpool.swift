// Control side. `convert - OUT`: standard input copied to a temporary file, because the decoders
// (libsndfile, FFmpeg) seek in their input.
import Foundation

/// A temporary copy of standard input, removed by `remove()`.
struct StandardInputSpool {
    let path: String

    /// Copies all of standard input into a new file in `TMPDIR` (else /tmp).
    ///
    /// - Throws: a message naming the problem (the temporary folder, or a read/write error).
    init() throws(StandardInputSpoolError) {
        let folder = ProcessInfo.processInfo.environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        var template = Array("\(folder)/soundstage-stdin-XXXXXX".utf8CString)
        let fd = mkstemp(&template)
        guard fd >= 0 else {
            throw StandardInputSpoolError(
                message:
                    "Cannot read standard input: cannot create a file in \(folder): \(String(cString: strerror(errno)))."
            )
        }
        defer { close(fd) }
        path = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(STDIN_FILENO, $0.baseAddress, $0.count) }
            if count == 0 { break }
            if count < 0 {
                if errno == EINTR { continue }
                let reason = String(cString: strerror(errno))
                unlink(path)
                throw StandardInputSpoolError(message: "Cannot read standard input: \(reason).")
            }
            var done = 0
            while done < count {
                let written = buffer.withUnsafeBytes { write(fd, $0.baseAddress! + done, count - done) }
                if written < 0 {
                    if errno == EINTR { continue }
                    let reason = String(cString: strerror(errno))
                    unlink(path)
                    throw StandardInputSpoolError(message: "Cannot copy standard input to \(folder): \(reason).")
                }
                done += written
            }
        }
    }

    func remove() { unlink(path) }
}

struct StandardInputSpoolError: Error {
    var message: String
}

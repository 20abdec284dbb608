// Control side. libjack's own messages: printed to stderr with a prefix, and silenced where a failure
// is an answer rather than an error (probing for a server, retrying after a loss).
import CJack
import Foundation

enum JackLibraryMessages {
    /// Runs `body` with libjack's error and info messages dropped, then prints errors again.
    /// (Process-wide: libjack has one error function.)
    static func silenced<T>(_ body: () -> T) -> T {
        jack_set_error_function { _ in }
        jack_set_info_function { _ in }
        defer {
            jack_set_error_function { message in
                if let message { FileHandle.standardError.write(Data("libjack: \(String(cString: message))\n".utf8)) }
            }
            jack_set_info_function { _ in }
        }
        return body()
    }
}

// Control side. A command that failed, with the complete message for standard error.

/// A failed `convert` or `render`, with the complete message for stderr.
struct CommandFailure: Error {
    var message: String

    init(_ message: String) {
        self.message = message
    }
}

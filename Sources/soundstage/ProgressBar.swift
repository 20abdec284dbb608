// Control side (the main thread). The progress bar `convert` and `render` draw on standard error.
import Foundation

/// A one-line progress bar on stderr, redrawn in place; does nothing when disabled (stderr is not
/// a terminal, or `--quiet`), so logs and pipes never see control characters.
final class ProgressBar {
    private let isEnabled: Bool
    private var isVisible = false
    private var lastLine = ""

    /// Enabled when standard error is a terminal and the command is not quiet.
    init() {
        isEnabled = isatty(STDERR_FILENO) == 1 && !Console.isQuiet
    }

    /// Draws `fraction` (0…1) with a short label, e.g. "[#########-----------]  45% encoding". A call
    /// that would draw the same line again writes nothing.
    func update(_ fraction: Double, _ label: String) {
        guard isEnabled else { return }
        let width = 30
        let filled = Int((max(0, min(1, fraction)) * Double(width)).rounded())
        let bar = String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled)
        let line = "\r[\(bar)] \(String(format: "%3d", Int((fraction * 100).rounded())))% \(label)\u{1B}[K"
        guard line != lastLine else { return }
        lastLine = line
        FileHandle.standardError.write(Data(line.utf8))
        isVisible = true
    }

    /// Clears the bar's line.
    func finish() {
        guard isEnabled, isVisible else { return }
        FileHandle.standardError.write(Data("\r\u{1B}[K".utf8))
        isVisible = false
        lastLine = ""
    }
}

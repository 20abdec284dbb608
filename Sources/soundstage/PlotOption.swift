// Control side. `--plot FILE.png` as `render` and `info` take it: its checks, and the writing of the
// picture under the rule every output follows (OutputDestination).
import ArgumentParser
import AudioFiles
import Foundation

enum PlotOption {
    /// Refuses a name that is not a PNG's, and a picture that would go where `audio` (render's
    /// `--out`) goes.
    static func validate(_ plot: String, besides audio: String? = nil) throws {
        let ext = URL(fileURLWithPath: plot).pathExtension.lowercased()
        if !ext.isEmpty, ext != "png", !OutputDestination.isStream(plot) {
            throw ValidationError("--plot writes a PNG picture: name the file .png, not '\(plot)'")
        }
        if let audio, audio == plot {
            throw ValidationError("--plot '\(plot)' is also --out: give the picture a place of its own")
        }
    }

    /// Checks, before any work, that sox and gnuplot are installed and that the picture can be
    /// written at `plot` (its folder exists and is writable; it is not a directory). Nothing is left
    /// at `plot`.
    static func prepare(_ plot: String) throws(CommandFailure) {
        try AudioPlot.checkTools(for: "--plot")
        do {
            try OutputDestination(path: plot).discard()
        } catch {
            throw CommandFailure("--plot: cannot write the picture: \(error)")
        }
    }

    /// Writes the PNG at `plot`: a file is replaced only when complete, a device or FIFO is written
    /// through, a symbolic link's target is written.
    static func write(_ png: Data, to plot: String) throws(CommandFailure) {
        do {
            try OutputDestination.write(png, to: plot)
        } catch {
            throw CommandFailure("--plot: cannot write the picture: \(error)")
        }
    }
}

// Control side. `render --plot` and `info --plot`: a PNG overview of audio, the waveform of each
// channel on top and its spectrogram below. sox's `spectrogram` effect computes the spectrograms and
// gnuplot draws the page (axes, labels, the waveforms and sox's pictures); both run as child processes.
import AudioFiles
import Foundation
import Locking

/// Gathers audio block by block (a render as it runs, or a file as it is read) and draws it.
///
/// The audio is kept in a scratch 32-bit float WAV for sox, and the waveform as a peak envelope of
/// at most `AudioPlotLayout.envelopeColumns` columns (minimum and maximum per column), so that a long
/// file costs gnuplot no more than a short one. The scratch folder is removed by `draw` or `discard`.
final class AudioPlot {
    let sampleRate: Double
    let channelCount: Int
    /// Frames gathered so far.
    private(set) var frameCount = 0
    private let folder: String
    private let writer: AudioFileWriter
    /// Frames per envelope column, from the frame count expected.
    private let framesPerColumn: Int
    /// minimum[c][k], maximum[c][k]: the extremes of channel c in column k.
    private var minimum: [[Float]]
    private var maximum: [[Float]]

    /// Checks that sox and gnuplot are installed before any work is done.
    ///
    /// - Throws: a failure naming the Debian package to install.
    static func checkTools(for purpose: String) throws(CommandFailure) {
        _ = try ExternalTool.sox(for: purpose).locate()
        _ = try ExternalTool.gnuplot(for: purpose).locate()
    }

    /// - Parameter expectedFrames: about how many frames will come (it sets the envelope's column
    ///   width; more or fewer are fine).
    init(sampleRate: Double, channelCount: Int, expectedFrames: Int) throws(CommandFailure) {
        self.sampleRate = sampleRate
        self.channelCount = channelCount
        framesPerColumn = max(1, Int((Double(expectedFrames) / Double(AudioPlotLayout.envelopeColumns)).rounded(.up)))
        minimum = Array(repeating: [], count: channelCount)
        maximum = Array(repeating: [], count: channelCount)
        folder = try Self.makeScratchFolder()
        let pictures = (1...AudioPlotLayout.maximumChannels).map { "spectrum-\($0).png" }
        InterruptCleanup.removeScratch(
            folder: folder, files: ["audio.wav", "envelope.dat", "plot.gp", "plot.png"] + pictures)
        do {
            writer = try AudioFileWriter(
                path: folder + "/audio.wav", format: .wav, sampleRate: sampleRate, channelCount: channelCount,
                encoding: .float32, replacement: .inPlaceWhenNew)
        } catch {
            try? FileManager.default.removeItem(atPath: folder)
            InterruptCleanup.forgetScratch()
            throw CommandFailure("--plot: could not write the plot's scratch audio: \(error)")
        }
    }

    /// Adds `frames` interleaved frames.
    func append(interleaved samples: UnsafeBufferPointer<Float>, frames: Int) throws(CommandFailure) {
        do {
            try writer.write(interleaved: samples, frames: frames)
        } catch {
            throw CommandFailure("--plot: could not write the plot's scratch audio: \(error)")
        }
        // Column by column: the extremes of the block's frames in each, merged into the envelope.
        var f = 0
        while f < frames {
            let column = (frameCount + f) / framesPerColumn
            let end = min(frames, (column + 1) * framesPerColumn - frameCount)
            for c in 0..<channelCount {
                var low = samples[f * channelCount + c]
                var high = low
                for g in (f + 1)..<max(f + 1, end) {
                    let value = samples[g * channelCount + c]
                    low = min(low, value)
                    high = max(high, value)
                }
                if column == minimum[c].count {
                    minimum[c].append(low)
                    maximum[c].append(high)
                } else {
                    minimum[c][column] = min(minimum[c][column], low)
                    maximum[c][column] = max(maximum[c][column], high)
                }
            }
            f = end
        }
        frameCount += frames
    }

    /// Draws the overview and returns the PNG's bytes; the scratch folder is removed.
    ///
    /// - Parameter title: the first line of the picture's title (the file's name).
    /// - Throws: a failure when there is nothing to draw or sox or gnuplot fail.
    func draw(title: String) throws(CommandFailure) -> Data {
        defer {
            try? FileManager.default.removeItem(atPath: folder)
            InterruptCleanup.forgetScratch()
        }
        do {
            try writer.close()
        } catch {
            throw CommandFailure("--plot: could not write the plot's scratch audio: \(error)")
        }
        guard frameCount > 0 else { throw CommandFailure("--plot: there is no audio to draw (0 frames)") }
        let layout = AudioPlotLayout(channelCount: channelCount)
        let duration = Double(frameCount) / sampleRate
        // sox reads about 200 seconds of audio per second here: a long file gets a longer limit.
        let timeout = 120 + duration / 20
        let sox = ExternalTool.sox(for: "--plot")
        let failures = Locked<[CommandFailure]>([])
        let (folder, width, height) = (folder, layout.plotWidth, layout.spectrogramHeight)
        // One sox per channel, side by side (each reads the whole file).
        DispatchQueue.concurrentPerform(iterations: layout.plottedChannels) { channel in
            do throws(CommandFailure) {
                _ = try sox.run(
                    [
                        folder + "/audio.wav", "-n", "remix", "\(channel + 1)", "spectrogram", "-r",
                        "-x", "\(width)", "-y", "\(height)",
                        "-z", "\(AudioPlotLayout.dynamicRange)", "-o", folder + "/spectrum-\(channel + 1).png"
                    ], timeout: timeout)
            } catch {
                failures.withLock { $0.append(error) }
            }
        }
        if let failure = failures.withLock({ $0.first }) { throw failure }
        try write(envelopeText(), to: "envelope.dat")
        // sox makes fewer columns than asked for a short file (about one per 9 frames here).
        let columns = Self.pngWidth(folder + "/spectrum-1.png") ?? layout.plotWidth
        let script = AudioPlotScript(
            layout: layout, folder: folder, title: title, duration: duration, sampleRate: sampleRate,
            channelCount: channelCount, spectrogramColumns: columns
        ).text
        try write(script, to: "plot.gp")
        _ = try ExternalTool.gnuplot(for: "--plot").run([folder + "/plot.gp"], timeout: timeout)
        guard let png = FileManager.default.contents(atPath: folder + "/plot.png"), !png.isEmpty else {
            throw CommandFailure("--plot: gnuplot wrote no picture")
        }
        return png
    }

    /// Removes the scratch folder without drawing (the render failed).
    func discard() {
        writer.discard()
        try? FileManager.default.removeItem(atPath: folder)
        InterruptCleanup.forgetScratch()
    }

    /// One line per envelope column: its time in seconds, then minimum and maximum of each channel.
    private func envelopeText() -> String {
        let columns = minimum.first?.count ?? 0
        var lines: [String] = []
        lines.reserveCapacity(columns)
        for k in 0..<columns {
            // A column of one frame sits at that frame's time; a wider one at its middle.
            let start = Double(k * framesPerColumn)
            let width = Double(min(framesPerColumn, frameCount - k * framesPerColumn))
            let time = (framesPerColumn == 1 ? start : start + width / 2) / sampleRate
            var line = String(format: "%.6f", time)
            for c in 0..<channelCount { line += String(format: " %.5f %.5f", minimum[c][k], maximum[c][k]) }
            lines.append(line)
        }
        return lines.joined(separator: "\n") + "\n"
    }

    private func write(_ text: String, to name: String) throws(CommandFailure) {
        do {
            try Data(text.utf8).write(to: URL(fileURLWithPath: folder + "/" + name))
        } catch {
            throw CommandFailure("--plot: could not write the plot's scratch files: \(error)")
        }
    }

    /// The width a PNG's header declares (bytes 16…19, big-endian, of the IHDR chunk).
    static func pngWidth(_ path: String) -> Int? {
        guard let data = FileManager.default.contents(atPath: path), data.count >= 24,
            data.starts(with: [0x89, 0x50, 0x4E, 0x47])
        else { return nil }
        let bytes = [UInt8](data.prefix(24))
        return bytes[16..<20].reduce(0) { $0 << 8 | Int($1) }
    }

    /// A private folder in the temporary folder (`TMPDIR`, else /tmp).
    private static func makeScratchFolder() throws(CommandFailure) -> String {
        let base = ProcessInfo.processInfo.environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        var template = Array("\(base)/soundstage-plot-XXXXXX".utf8CString)
        guard mkdtemp(&template) != nil else {
            throw CommandFailure(
                "--plot: could not create a scratch folder in \(base): \(String(cString: strerror(errno)))")
        }
        return String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

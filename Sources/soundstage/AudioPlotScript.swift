// Control side. The geometry of the `--plot` picture and the gnuplot script that draws it.
import Foundation

/// Where everything sits in the picture, in pixels from the top left. Fixed, so that the picture is
/// the same size for the same channel count and a reader (or a test) can map pixels to seconds,
/// amplitude and hertz: the waveform panels span −1…1 from their bottom to their top, the
/// spectrogram panels 0 Hz…half the sample rate, and every panel 0…the duration from left to right.
struct AudioPlotLayout {
    static let width = 1000
    static let left = 70
    static let right = 20
    static let top = 34
    static let waveformHeight = 70
    static let spectrogramHeight = 120
    /// Between two panels of a group.
    static let gap = 6
    /// Between the waveforms and the spectrograms (the waveforms' time labels).
    static let groupGap = 34
    static let bottom = 40
    /// The spectrograms' range in dB below full scale (sox's -z; 80 as in Audacity's default).
    static let dynamicRange = 80
    /// At most this many channels are drawn (the title says how many there are).
    static let maximumChannels = 8
    /// Envelope columns: twice the panel width, so each pixel column sees its true peaks.
    static let envelopeColumns = 2 * (width - left - right)

    let channelCount: Int
    var plottedChannels: Int { min(channelCount, Self.maximumChannels) }
    var plotWidth: Int { Self.width - Self.left - Self.right }
    var spectrogramHeight: Int { Self.spectrogramHeight }

    var height: Int {
        let n = plottedChannels
        return Self.top + n * Self.waveformHeight + n * Self.spectrogramHeight + 2 * (n - 1) * Self.gap
            + Self.groupGap + Self.bottom
    }

    /// Top and bottom pixel rows of channel `channel`'s waveform panel.
    func waveformRows(_ channel: Int) -> (top: Int, bottom: Int) {
        let top = Self.top + channel * (Self.waveformHeight + Self.gap)
        return (top, top + Self.waveformHeight)
    }

    /// Top and bottom pixel rows of channel `channel`'s spectrogram panel.
    func spectrogramRows(_ channel: Int) -> (top: Int, bottom: Int) {
        let n = plottedChannels
        let first = Self.top + n * Self.waveformHeight + (n - 1) * Self.gap + Self.groupGap
        let top = first + channel * (Self.spectrogramHeight + Self.gap)
        return (top, top + Self.spectrogramHeight)
    }
}

/// The gnuplot script for one picture: the `png` terminal (libgd, an 8-bit palette, so pictures stay
/// small), a multiplot of waveform panels (the envelope in `envelope.dat`) and spectrogram panels
/// (sox's raw pictures `spectrum-N.png`) in `folder`.
struct AudioPlotScript {
    var layout: AudioPlotLayout
    var folder: String
    var title: String
    var duration: Double
    var sampleRate: Double
    var channelCount: Int
    /// The columns of sox's pictures: the panel's width, or fewer for audio too short to fill it.
    var spectrogramColumns: Int

    static let waveformColor = "#3b6fb6"

    var text: String {
        let height = layout.height
        let n = layout.plottedChannels
        let nyquist = sampleRate / 2
        // Hertz up to 2 kHz, kilohertz above: the ticks stay short.
        let inKilohertz = nyquist > 2000
        let frequencyScale = inKilohertz ? 1000.0 : 1
        let frequencyUnit = inKilohertz ? "kHz" : "Hz"
        let step = Self.tickStep(nyquist / frequencyScale)
        let pixelSeconds = duration / Double(max(1, spectrogramColumns))
        let pixelFrequency = nyquist / frequencyScale / Double(layout.spectrogramHeight - 1)
        var lines = [
            "set terminal png size \(AudioPlotLayout.width),\(height) font 'Sans,8' noenhanced",
            "set output \(quoted(folder + "/plot.png"))",
            "set multiplot title \(quoted(heading)) font 'Sans,10'",
            "set lmargin at screen \(screenX(AudioPlotLayout.left))",
            "set rmargin at screen \(screenX(AudioPlotLayout.width - AudioPlotLayout.right))",
            "set xrange [0:\(number(duration))]",
            "set xtics out nomirror",
            "set ytics out nomirror",
            "set grid xtics ytics lc rgb '#d8d8d8'",
            "set border 15 lc rgb '#606060'",
            "set yrange [-1:1]",
            // Ticks short of the panels' edges, so that stacked panels' labels do not collide.
            "set ytics -0.5,0.5,0.5 format '%g'"
        ]
        for channel in 0..<n {
            let rows = layout.waveformRows(channel)
            lines += margins(rows, height: height)
            lines.append("set format x \(channel == n - 1 ? "'%g'" : "''")")
            lines.append("set ylabel 'ch \(channel + 1)'")
            let low = 2 + 2 * channel
            let high = low + 1
            let data = quoted(folder + "/envelope.dat")
            lines.append(
                "plot \(data) using 1:\(low):\(high) with filledcurves fc rgb '\(Self.waveformColor)' "
                    + "fs solid 1.0 noborder notitle, "
                    + "'' using 1:\(low) with lines lc rgb '\(Self.waveformColor)' notitle, "
                    + "'' using 1:\(high) with lines lc rgb '\(Self.waveformColor)' notitle")
        }
        lines += [
            "set yrange [0:\(number(nyquist / frequencyScale))]",
            "set ytics \(number(step)),\(number(step)),\(number(nyquist / frequencyScale - step / 2)) format '%g'",
            "set grid noxtics noytics"
        ]
        for channel in 0..<n {
            let rows = layout.spectrogramRows(channel)
            lines += margins(rows, height: height)
            lines.append("set format x \(channel == n - 1 ? "'%g'" : "''")")
            lines.append("set ylabel 'ch \(channel + 1) (\(frequencyUnit))'")
            if channel == n - 1 { lines.append("set xlabel 'time (s)'") }
            let picture = quoted(folder + "/spectrum-\(channel + 1).png")
            lines.append(
                "plot \(picture) binary filetype=png dx=\(number(pixelSeconds)) dy=\(number(pixelFrequency)) "
                    + "origin=(\(number(pixelSeconds / 2)),0) with rgbimage notitle")
        }
        lines += ["unset multiplot", "set output"]
        return lines.joined(separator: "\n") + "\n"
    }

    /// A step of 1, 2 or 5 times a power of ten giving at most six ticks up to `top`.
    static func tickStep(_ top: Double) -> Double {
        var power = pow(10, (log10(top / 6)).rounded(.down))
        while true {
            for factor in [1.0, 2, 5] where top / (factor * power) <= 6 { return factor * power }
            power *= 10
        }
    }

    /// The title: the file's name, its shape, and what the panels show.
    private var heading: String {
        let channels =
            channelCount > layout.plottedChannels
            ? "\(channelCount) channels (1–\(layout.plottedChannels) drawn)"
            : "\(channelCount) channel\(channelCount == 1 ? "" : "s")"
        let rate = sampleRate == sampleRate.rounded() ? String(Int(sampleRate)) : String(sampleRate)
        return "\(title) — \(channels), \(rate) Hz, \(String(format: "%.3f", duration)) s: "
            + "waveform (amplitude −1…1, peaks), spectrogram (sox, brightest = loudest, \(AudioPlotLayout.dynamicRange) dB range)"
    }

    private func margins(_ rows: (top: Int, bottom: Int), height: Int) -> [String] {
        [
            "set tmargin at screen \(screenY(rows.top, height: height))",
            "set bmargin at screen \(screenY(rows.bottom, height: height))"
        ]
    }

    private func screenX(_ pixel: Int) -> String { number(Double(pixel) / Double(AudioPlotLayout.width)) }

    private func screenY(_ pixel: Int, height: Int) -> String { number(1 - Double(pixel) / Double(height)) }

    private func number(_ value: Double) -> String { String(format: "%.9g", value) }

    /// A gnuplot single-quoted string: nothing in it is interpreted but '' for a quote.
    private func quoted(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: "''") + "'"
    }
}

// Control side. `soundstage info FILE... [--verify] [--json]`: describe audio files the way afinfo
// does (container, codec, rate, channels, bit depth or bit rate, valid/priming/remainder frames,
// duration), and say when a file's data cannot hold what its header claims.
import ArgumentParser
import AudioFiles
import Foundation

struct InfoCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "info",
        abstract: "Describe audio files and check that their data holds what their headers claim.",
        discussion: """
            Prints one block per file. A file that cannot be read, or whose data cannot hold what \
            its header declares (truncated or damaged), gets a one-line message on stderr; the \
            others are still described, and the exit status is 1. --verify decodes every file \
            completely and also fails when the frames decoded differ from the header's count or \
            a decoding error occurs. --json prints a JSON array with one object per file instead. \
            --quiet prints only the messages about files that fail: the exit status tells a script \
            whether every file is intact. --plot OUT.png (with one file) also draws the file: each \
            channel's waveform and, below, its spectrogram (sox's spectrogram effect and gnuplot draw \
            it; Debian packages sox and gnuplot-nox).
            """)

    @Argument(help: "Audio files (WAV, AIFF, CAF, FLAC, Ogg, Opus, MP3, M4A/MP4 with AAC or ALAC, ADTS AAC, …).")
    var files: [String]

    @Flag(name: .long, help: "Decode each file completely; report the frames decoded and the first decoding error.")
    var verify = false

    @Flag(name: .long, help: "Print a JSON array with one object per file (see docs/AUDIO_FILES.md).")
    var json = false

    @Option(
        name: .long, help: "Draw the file's waveform and spectrogram into this PNG (one file; needs sox and gnuplot).")
    var plot: String?

    @OptionGroup var quiet: QuietOption

    func validate() throws {
        guard !files.isEmpty else { throw ValidationError("give at least one file") }
        if let plot {
            guard files.count == 1 else {
                throw ValidationError("--plot draws one file; \(files.count) were given")
            }
            try PlotOption.validate(plot)
            if json, plot == "-" {
                throw ValidationError("--plot - and --json would share standard output: give the picture a file")
            }
        }
    }

    func run() throws {
        quiet.apply()
        if let plot {
            do throws(CommandFailure) {
                try PlotOption.prepare(plot)
            } catch {
                printError(error.message)
                throw ExitCode(1)
            }
        }
        // Standard output may carry the picture: the descriptions go to standard error then.
        let show = plot == "-" ? chatter : say
        let inspections = files.map { AudioFileReader.inspect(path: $0, verify: verify) }
        if json {
            say(try InfoJSON.text(for: inspections))
        } else {
            var isFirst = true
            for inspection in inspections {
                if let error = inspection.error { printError(error.description) }
                if let damage = inspection.damage { printError("'\(inspection.path)' is \(damage).") }
                guard let info = inspection.info else { continue }
                if !isFirst { show("") }
                isFirst = false
                show(Self.describe(info, inspection: inspection))
            }
        }
        if !inspections.allSatisfy(\.isIntact) { throw ExitCode(1) }
        if let plot {
            let interrupt = InterruptCleanup(
                removing: nil, message: "soundstage info: interrupted; '\(plot)' was not written.")
            defer { interrupt.clear() }
            do throws(CommandFailure) {
                try PlotOption.write(Self.draw(files[0]), to: plot)
                if !json { show("plotted \(files[0]) into \(plot)") }
            } catch {
                printError(error.message)
                throw ExitCode(1)
            }
        }
    }

    /// The file decoded block by block into an `AudioPlot`, drawn.
    static func draw(_ path: String) throws(CommandFailure) -> Data {
        let reader: AudioFileStreamReader
        do {
            reader = try AudioFileStreamReader(path: path)
        } catch {
            throw CommandFailure("--plot: \(error)")
        }
        let plot = try AudioPlot(
            sampleRate: reader.sampleRate, channelCount: reader.channelCount, expectedFrames: reader.frameCount)
        let blockFrames = 16_384
        var buffer = [Float](repeating: 0, count: blockFrames * reader.channelCount)
        while true {
            let frames: Int
            do {
                frames = try buffer.withUnsafeMutableBufferPointer { pointer throws(AudioFileError) in
                    try reader.read(into: pointer.baseAddress!, frames: blockFrames)
                }
            } catch {
                plot.discard()
                throw CommandFailure("--plot: \(error)")
            }
            if frames == 0 { break }
            do throws(CommandFailure) {
                try buffer.withUnsafeBufferPointer { pointer throws(CommandFailure) in
                    try plot.append(interleaved: pointer, frames: frames)
                }
            } catch {
                plot.discard()
                throw error
            }
        }
        return try plot.draw(title: URL(fileURLWithPath: path).lastPathComponent)
    }

    /// The afinfo-style block for one file, one "label: value" line per field, ending with the
    /// decoded count (with --verify) and the status: "ok", or "truncated: …" / "damaged: …".
    static func describe(_ info: AudioFileInfo, inspection: AudioFileInspection? = nil) -> String {
        var lines: [(String, String)] = [
            ("File", info.path),
            ("Format", info.formatName),
            ("Codec", info.codecName),
            ("Sample rate", "\(formatNumber(info.sampleRate)) Hz"),
            ("Channels", "\(info.channelCount)")
        ]
        if let bits = info.bitDepth { lines.append(("Bit depth", "\(bits) bits")) }
        if let rate = info.bitRate {
            lines.append(("Bit rate", String(format: "%.1f kbit/s", Double(rate) / 1000)))
        }
        lines += [
            ("Valid frames", "\(info.validFrameCount)"),
            ("Priming frames", "\(info.primingFrameCount)"),
            ("Remainder frames", "\(info.remainderFrameCount)"),
            ("Total frames", "\(info.totalFrameCount)"),
            ("Duration", String(format: "%.6f s", info.duration))
        ]
        if let inspection {
            if let verification = inspection.verification {
                lines.append(("Decoded frames", "\(verification.decodedFrameCount)"))
                if let error = verification.error, let frame = verification.errorFrame {
                    lines.append(("Decode error", "at frame \(frame): \(AudioFileDamage.clause(of: error))"))
                }
            }
            lines.append(("Status", inspection.damage.map(\.description) ?? "ok"))
        }
        let width = lines.map(\.0.count).max() ?? 0
        return lines.map { label, value in
            "\(label):" + String(repeating: " ", count: width - label.count + 1) + value
        }.joined(separator: "\n")
    }

    /// "44100" for whole numbers, "22050.5" otherwise.
    static func formatNumber(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int(value)) : String(value)
    }
}

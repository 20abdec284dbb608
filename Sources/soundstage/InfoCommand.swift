// Control side. `soundstage info FILE...`: describe audio files the way afinfo does (container,
// codec, rate, channels, bit depth or bit rate, valid/priming/remainder frames, duration).
import ArgumentParser
import AudioFiles
import Foundation

struct InfoCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "info",
        abstract: "Describe audio files: format, codec, rate, channels, frames (valid, priming, remainder), duration.",
        discussion: """
            Prints one block per file. A file that cannot be read gets a one-line error on stderr; \
            the others are still described, and the exit status is 1.
            """)

    @Argument(help: "Audio files (WAV, AIFF, CAF, FLAC, Ogg, Opus, MP3, M4A/MP4 with AAC or ALAC, ADTS AAC, …).")
    var files: [String]

    func validate() throws {
        guard !files.isEmpty else { throw ValidationError("give at least one file") }
    }

    func run() throws {
        var failed = false
        var isFirst = true
        for path in files {
            do {
                let info = try AudioFileReader.info(path: path)
                if !isFirst { say("") }
                isFirst = false
                say(Self.describe(info))
            } catch {
                failed = true
                printError(error.description)
            }
        }
        if failed { throw ExitCode(1) }
    }

    /// The afinfo-style block for one file, one "label: value" line per field.
    static func describe(_ info: AudioFileInfo) -> String {
        var lines: [(String, String)] = [
            ("File", info.path),
            ("Format", info.formatName),
            ("Codec", info.codecName),
            ("Sample rate", "\(formatNumber(info.sampleRate)) Hz"),
            ("Channels", "\(info.channelCount)"),
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
            ("Duration", String(format: "%.6f s", info.duration)),
        ]
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

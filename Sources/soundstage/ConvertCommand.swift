// Control side. `soundstage convert IN OUT`: decode any supported file, convert its rate (soxr) and
// channel count, and encode it in another format, like afconvert. Never leaves a partial OUT.
import ArgumentParser
import AudioFiles
import Foundation

struct ConvertCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "convert",
        abstract: "Convert an audio file to another format, sample rate or channel count.",
        discussion: """
            The output format comes from --format or from OUT's extension (.wav .aif .aiff .caf .flac .ogg \
            .opus .mp3 .m4a .aac); .m4a means AAC unless --format alac is given. Rates are converted with \
            soxr (high quality, linear phase). Channels: N → 1 averages every channel, 1 → N copies the \
            mono channel to each output (the engine's rules); other changes are refused. IN may be - \
            (standard input). OUT may be - (standard output), a device or a FIFO (written through, --format \
            required when the name has no extension), or a symbolic link (its target is written); a regular \
            file is written beside OUT and renamed into place only when complete. A progress bar is drawn \
            on stderr when stderr is a terminal.
            """)

    @Argument(help: "Input audio file, or - for standard input.")
    var input: String

    @Argument(help: "Output file (replaced when complete), device, FIFO, or - for standard output.")
    var output: String

    @Option(name: .long, parsing: .unconditional, help: "Output sample rate in Hz (default: the input's).")
    var rate: Double?

    @Option(name: .long, parsing: .unconditional, help: "Output channel count (default: the input's).")
    var channels: Int?

    @Option(
        name: .long,
        help: "Output format: wav, aiff, caf, flac, ogg, opus, mp3, aac, alac (default: from OUT's extension).")
    var format: String?

    @Option(
        name: .long,
        help: """
            Sample encoding for WAV/AIFF/CAF/FLAC/ALAC: 16, 24 or 32f (default: the input's depth when it has \
            one, else 32f, or 24 for FLAC/ALAC).
            """)
    var bits: String?

    @Option(name: .long, parsing: .unconditional, help: "AAC bit rate in kbit/s for all channels (default: 128 per channel).")
    var bitrate: Int?

    @Option(name: .long, parsing: .unconditional, help: "Quality 0…1 for Ogg Vorbis, Opus and MP3 (default: 0.75).")
    var quality: Double?

    /// The names `--format` accepts.
    static let formatNames = ["wav", "aiff", "caf", "flac", "ogg", "opus", "mp3", "aac", "alac"]

    func validate() throws {
        if let rate {
            guard rate.isFinite, rate == rate.rounded(), (1_000...768_000).contains(rate) else {
                throw ValidationError("--rate must be a whole number of Hz between 1000 and 768000, not \(rate)")
            }
        }
        if let channels, !(1...64).contains(channels) {
            throw ValidationError("--channels must be 1…64, not \(channels)")
        }
        if let format, !Self.formatNames.contains(format.lowercased()) {
            throw ValidationError(
                "--format must be one of \(Self.formatNames.joined(separator: ", ")), not '\(format)'")
        }
        if let bits, Self.encoding(named: bits) == nil {
            throw ValidationError("--bits must be 16, 24 or 32f, not '\(bits)'")
        }
        if let bitrate, !(8...2_000).contains(bitrate) {
            throw ValidationError("--bitrate must be 8…2000 kbit/s, not \(bitrate)")
        }
        if let quality, !(quality.isFinite && (0...1).contains(quality)) {
            throw ValidationError("--quality must lie in 0…1, not \(quality)")
        }
    }

    func run() throws {
        do throws(ConvertFailure) {
            try convert()
        } catch {
            printError(error.message)
            throw ExitCode(1)
        }
    }

    /// The whole conversion; every failure becomes a `ConvertFailure` with a complete message.
    private func convert() throws(ConvertFailure) {
        let targetFormat = try resolveFormat()
        let progress = ProgressBar(isEnabled: isatty(STDERR_FILENO) == 1)

        // 1. Decode (libsndfile or FFmpeg), with gapless trimming.
        progress.update(0, "decoding")
        let sourceInfo: AudioFileInfo
        var audio: AudioData
        var inputPath = input
        var spool: StandardInputSpool?
        if input == "-" {
            do { spool = try StandardInputSpool() } catch { throw ConvertFailure(error.message) }
            inputPath = spool?.path ?? input
        }
        defer { spool?.remove() }
        do {
            sourceInfo = try AudioFileReader.info(path: inputPath)
            audio = try AudioFileReader.load(path: inputPath)
        } catch {
            progress.finish()
            // Name standard input as the user gave it, not its temporary copy.
            let message = error.description
            throw ConvertFailure(spool == nil ? message : message.replacingOccurrences(of: "'\(inputPath)'", with: "standard input"))
        }

        progress.update(0.3, "decoded")

        // 2. Rate.
        let outputRate = rate ?? audio.sampleRate
        if let allowed = targetFormat.supportedSampleRates, !allowed.contains(Int(outputRate)) {
            progress.finish()
            let suggestion = allowed.min { abs(Double($0) - outputRate) < abs(Double($1) - outputRate) } ?? allowed[0]
            throw ConvertFailure(
                "Cannot write \(targetFormat.displayName) at \(InfoCommand.formatNumber(outputRate)) Hz: it supports "
                    + "\(allowed.map(String.init).joined(separator: ", ")) Hz; add --rate \(suggestion).")
        }
        if outputRate != audio.sampleRate {
            progress.update(0.35, "converting rate")
            do {
                audio = try SampleRateConverter().convert(audio, to: outputRate)
            } catch {
                progress.finish()
                throw ConvertFailure(
                    "Cannot convert '\(input)' to \(InfoCommand.formatNumber(outputRate)) Hz: \(error.reason).")
            }
        }

        // 3. Channels.
        let outputChannels = channels ?? audio.channelCount
        if let maximum = targetFormat.maximumChannelCount, outputChannels > maximum {
            progress.finish()
            throw ConvertFailure(
                "Cannot write \(outputChannels) channels as \(targetFormat.displayName), which takes at most "
                    + "\(maximum); add --channels.")
        }
        do {
            audio = try Self.mix(audio, to: outputChannels)
        } catch {
            progress.finish()
            throw ConvertFailure("Cannot convert '\(input)': \(error.message)")
        }

        // 4. Encode into a temporary file beside the output, then rename it into place.
        let encoding = try resolveEncoding(for: targetFormat, source: sourceInfo)
        try write(audio, format: targetFormat, encoding: encoding, progress: progress)
        progress.finish()
        // With `-` standard output carries the audio: the status line goes to standard error.
        (output == "-" ? printError : say)(
            "wrote \(output): \(targetFormat.displayName), \(InfoCommand.formatNumber(audio.sampleRate)) Hz, "
                + "\(audio.channelCount) channel\(audio.channelCount == 1 ? "" : "s"), \(audio.frameCount) frames "
                + String(format: "(%.3f s)", audio.duration))
    }

    /// Encodes in chunks (for the progress bar). `AudioFileWriter` writes beside OUT (or spools
    /// for `-`, a device or a FIFO) and puts the file in place only at `close()`.
    private func write(
        _ audio: AudioData, format: AudioFileFormat, encoding: AudioSampleEncoding?, progress: ProgressBar
    ) throws(ConvertFailure) {
        do throws(AudioFileError) {
            let writer = try AudioFileWriter(
                path: output, format: format, sampleRate: audio.sampleRate, channelCount: audio.channelCount,
                encoding: encoding, quality: quality ?? AudioFileWriter.defaultQuality,
                bitRate: bitrate.map { $0 * 1000 })
            let interrupt = InterruptCleanup(for: writer, command: "convert")
            defer { interrupt.clear() }
            let chunk = 16_384
            var start = 0
            repeat {
                let end = min(audio.frameCount, start + chunk)
                do throws(AudioFileError) {
                    try writer.write(channels: audio.channels.map { Array($0[start..<end]) })
                } catch {
                    writer.discard()
                    throw error
                }
                start = end
                progress.update(0.5 + 0.5 * Double(start) / Double(max(1, audio.frameCount)), "encoding")
            } while start < audio.frameCount
            try writer.close()
        } catch {
            progress.finish()
            throw ConvertFailure(error.description)
        }
    }

    /// The output format from `--format` and OUT's extension, which must agree.
    private func resolveFormat() throws(ConvertFailure) -> AudioFileFormat {
        let fromExtension = AudioFileFormat(path: output)
        guard let name = format?.lowercased() else {
            if fromExtension == nil, let stream = OutputDestination.streamDescription(output) {
                throw ConvertFailure(
                    "Cannot choose a format for '\(output)': it is \(stream), which has no extension; give --format.")
            }
            guard let fromExtension else {
                throw ConvertFailure(
                    "Cannot choose a format for '\(output)' from its extension; use .wav, .aif, .aiff, .caf, .flac, "
                        + ".ogg, .opus, .mp3, .m4a or .aac, or give --format.")
            }
            return fromExtension
        }
        let requested: AudioFileFormat =
            switch name {
            case "wav": .wav
            case "aiff": .aiff
            case "caf": .caf
            case "flac": .flac
            case "ogg": .oggVorbis
            case "opus": .opus
            case "mp3": .mp3
            case "alac": .alacM4A
            default: fromExtension == .aacADTS ? .aacADTS : .aacM4A
            }
        if let fromExtension, fromExtension.fileExtension != requested.fileExtension {
            throw ConvertFailure(
                "Cannot write '\(output)' as --format \(name): the extension says \(fromExtension.displayName); "
                    + "name the file .\(requested.fileExtension) or drop --format.")
        }
        return requested
    }

    /// `--bits`, or a default that keeps the source's precision.
    private func resolveEncoding(for format: AudioFileFormat, source: AudioFileInfo) throws(ConvertFailure)
        -> AudioSampleEncoding?
    {
        guard format.defaultEncoding != nil else {
            if bits != nil {
                throw ConvertFailure(
                    "--bits does not apply to \(format.displayName), which has no sample encoding; "
                        + (format == .aacM4A || format == .aacADTS ? "use --bitrate." : "use --quality."))
            }
            return nil
        }
        let integerOnly = format == .flac || format == .alacM4A
        if let bits {
            let encoding = Self.encoding(named: bits)
            if integerOnly, encoding == .float32 {
                throw ConvertFailure(
                    "--bits 32f is not possible for \(format.displayName), which stores integers; use 16 or 24.")
            }
            return encoding
        }
        switch source.bitDepth {
        case 16: return .int16
        case 24: return .int24
        default: return integerOnly ? .int24 : .float32
        }
    }

    /// "16", "24", "32f" (also "32", "float") → encoding.
    static func encoding(named name: String) -> AudioSampleEncoding? {
        switch name.lowercased() {
        case "16": .int16
        case "24": .int24
        case "32f", "32", "float", "f32": .float32
        default: nil
        }
    }

    /// Channel mixing with the engine's rules: N → 1 is the average of the channels, 1 → N copies
    /// the mono channel into each output; N → N is unchanged.
    static func mix(_ audio: AudioData, to count: Int) throws(MixError) -> AudioData {
        let source = audio.channelCount
        if count == source { return audio }
        if count == 1 {
            let scale = 1 / Float(source)
            var mono = [Float](repeating: 0, count: audio.frameCount)
            for channel in audio.channels {
                for index in mono.indices { mono[index] += channel[index] * scale }
            }
            return AudioData(channels: [mono], sampleRate: audio.sampleRate)
        }
        if source == 1 {
            return AudioData(channels: Array(repeating: audio.channels[0], count: count), sampleRate: audio.sampleRate)
        }
        throw MixError(
            message: "there is no rule for mixing \(source) channels into \(count): convert supports N → 1 "
                + "(the average of all channels) and 1 → N (the mono channel copied to each); pick the channels "
                + "you want with another tool first.")
    }

    struct MixError: Error {
        var message: String
    }
}

/// A failed conversion, with the complete message for stderr.
private struct ConvertFailure: Error {
    var message: String

    init(_ message: String) {
        self.message = message
    }
}

/// A one-line progress bar on stderr, redrawn in place; does nothing when disabled (stderr is not
/// a terminal), so logs and pipes never see control characters.
private final class ProgressBar {
    private let isEnabled: Bool
    private var isVisible = false

    init(isEnabled: Bool) {
        self.isEnabled = isEnabled
    }

    /// Draws `fraction` (0…1) with a short label, e.g. "[#########-----------]  45% encoding".
    func update(_ fraction: Double, _ label: String) {
        guard isEnabled else { return }
        let width = 30
        let filled = Int((max(0, min(1, fraction)) * Double(width)).rounded())
        let bar = String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled)
        let line = "\r[\(bar)] \(String(format: "%3d", Int((fraction * 100).rounded())))% \(label)\u{1B}[K"
        FileHandle.standardError.write(Data(line.utf8))
        isVisible = true
    }

    /// Clears the bar's line.
    func finish() {
        guard isEnabled, isVisible else { return }
        FileHandle.standardError.write(Data("\r\u{1B}[K".utf8))
        isVisible = false
    }
}

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
            on stderr when stderr is a terminal (not with --quiet).
            """)

    @Argument(help: "Input audio file, or - for standard input.")
    var input: String

    @Argument(help: "Output file (replaced when complete), device, FIFO, or - for standard output.")
    var output: String

    @Option(name: .long, parsing: .unconditional, help: "Output sample rate in Hz (default: the input's).")
    var rate: Double?

    @OptionGroup var options: OutputFormatOptions

    @OptionGroup var quiet: QuietOption

    func validate() throws {
        if let rate {
            guard rate.isFinite, rate == rate.rounded(), (1_000...768_000).contains(rate) else {
                throw ValidationError("--rate must be a whole number of Hz between 1000 and 768000, not \(rate)")
            }
        }
    }

    func run() throws {
        quiet.apply()
        do throws(CommandFailure) {
            try convert()
        } catch {
            printError(error.message)
            throw ExitCode(1)
        }
    }

    /// The whole conversion; every failure becomes a `CommandFailure` with a complete message.
    private func convert() throws(CommandFailure) {
        let targetFormat = try options.resolveFormat(output: output)
        let progress = ProgressBar()

        // 1. Decode (libsndfile or FFmpeg), with gapless trimming.
        progress.update(0, "decoding")
        let sourceInfo: AudioFileInfo
        var audio: AudioData
        var inputPath = input
        var spool: StandardInputSpool?
        if input == "-" {
            do { spool = try StandardInputSpool() } catch { throw CommandFailure(error.message) }
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
            throw CommandFailure(
                spool == nil ? message : message.replacingOccurrences(of: "'\(inputPath)'", with: "standard input"))
        }

        progress.update(0.3, "decoded")

        // 2. Rate.
        let outputRate = rate ?? audio.sampleRate
        do throws(CommandFailure) {
            try OutputFormatOptions.checkRate(outputRate, for: targetFormat)
        } catch {
            progress.finish()
            throw error
        }
        if outputRate != audio.sampleRate {
            progress.update(0.35, "converting rate")
            do {
                audio = try SampleRateConverter().convert(audio, to: outputRate)
            } catch {
                progress.finish()
                throw CommandFailure(
                    "Cannot convert '\(input)' to \(InfoCommand.formatNumber(outputRate)) Hz: \(error.reason).")
            }
        }

        // 3. Channels.
        let outputChannels = options.channels ?? audio.channelCount
        do throws(CommandFailure) {
            try OutputFormatOptions.checkChannelCount(outputChannels, for: targetFormat)
            guard let mixed = audio.mixed(toChannelCount: outputChannels) else {
                let problem = AudioData.channelMixProblem(from: audio.channelCount, to: outputChannels) ?? ""
                throw CommandFailure("Cannot convert '\(input)': \(problem).")
            }
            audio = mixed
        } catch {
            progress.finish()
            throw error
        }

        // 4. Encode into a temporary file beside the output, then rename it into place.
        let encoding = try options.resolveEncoding(for: targetFormat, sourceBitDepth: sourceInfo.bitDepth)
        try write(audio, format: targetFormat, encoding: encoding, progress: progress)
        progress.finish()
        // With `-` standard output carries the audio: the status line goes to standard error.
        (output == "-" ? chatter : say)(
            "wrote \(output): \(targetFormat.displayName), \(InfoCommand.formatNumber(audio.sampleRate)) Hz, "
                + "\(audio.channelCount) channel\(audio.channelCount == 1 ? "" : "s"), \(audio.frameCount) frames "
                + String(format: "(%.3f s)", audio.duration))
    }

    /// Encodes in chunks (for the progress bar). `AudioFileWriter` writes beside OUT (or spools
    /// for `-`, a device or a FIFO) and puts the file in place only at `close()`.
    private func write(
        _ audio: AudioData, format: AudioFileFormat, encoding: AudioSampleEncoding?, progress: ProgressBar
    ) throws(CommandFailure) {
        do throws(AudioFileError) {
            let writer = try AudioFileWriter(
                path: output, format: format, sampleRate: audio.sampleRate, channelCount: audio.channelCount,
                encoding: encoding, quality: options.resolvedQuality, bitRate: options.bitRateInBits)
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
            throw CommandFailure(error.description)
        }
    }
}

// Control side. The output options `convert` and `render` share (--format, --bits, --channels,
// --bitrate, --quality), their checks, and how they choose the file's format and sample encoding.
import ArgumentParser
import AudioFiles

/// How the output file is encoded. Both commands parse the same options and resolve them here, so a
/// format one accepts the other accepts too, with the same messages.
struct OutputFormatOptions: ParsableArguments {
    @Option(
        name: .long, parsing: .unconditional,
        help: "Output channel count (default: the source's). N → 1 averages the channels, 1 → N copies the mono one.")
    var channels: Int?

    @Option(
        name: .long,
        help: "Output format: wav, aiff, caf, flac, ogg, opus, mp3, aac, alac (default: from the output's extension).")
    var format: String?

    @Option(
        name: .long,
        help: """
            Sample encoding for WAV/AIFF/CAF/FLAC/ALAC: 16, 24 or 32f (default: the source's depth when it has \
            one, else 32f, or 24 for FLAC/ALAC).
            """)
    var bits: String?

    @Option(
        name: .long, parsing: .unconditional,
        help: "AAC bit rate in kbit/s for all channels (default: 128 per channel).")
    var bitrate: Int?

    @Option(
        name: .long, parsing: .unconditional,
        help: "Quality 0…1 for Ogg Vorbis, Opus, MP3 and AAC without --bitrate (default: 0.75).")
    var quality: Double?

    /// The names `--format` accepts.
    static let formatNames = ["wav", "aiff", "caf", "flac", "ogg", "opus", "mp3", "aac", "alac"]

    /// The extensions a format is chosen from, for messages.
    static let extensionList = ".wav, .aif, .aiff, .caf, .flac, .ogg, .opus, .mp3, .m4a or .aac"

    func validate() throws {
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

    /// `--quality` or the writer's default.
    var resolvedQuality: Double { quality ?? AudioFileWriter.defaultQuality }

    /// `--bitrate` in bits per second.
    var bitRateInBits: Int? { bitrate.map { $0 * 1000 } }

    /// The format from `--format` and `output`'s extension, which must agree. A stream (`-`, a
    /// device, a FIFO) without an extension takes `streamDefault`, or needs `--format` when it is nil.
    func resolveFormat(output: String, streamDefault: AudioFileFormat? = nil) throws(CommandFailure)
        -> AudioFileFormat
    {
        let fromExtension = AudioFileFormat(path: output)
        guard let name = format?.lowercased() else {
            if fromExtension == nil, let stream = OutputDestination.streamDescription(output) {
                if let streamDefault { return streamDefault }
                throw CommandFailure(
                    "Cannot choose a format for '\(output)': it is \(stream), which has no extension; give --format.")
            }
            guard let fromExtension else {
                throw CommandFailure(
                    "Cannot choose a format for '\(output)' from its extension; use \(Self.extensionList), "
                        + "or give --format.")
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
            throw CommandFailure(
                "Cannot write '\(output)' as --format \(name): the extension says \(fromExtension.displayName); "
                    + "name the file .\(requested.fileExtension) or drop --format.")
        }
        return requested
    }

    /// `--bitrate` is AAC's and `--quality` the lossy formats' (AAC's when no `--bitrate` is given): one
    /// given where it changes nothing is refused, as `--bits` is, rather than ignored.
    func checkCompressionOptions(for format: AudioFileFormat) throws(CommandFailure) {
        let isAAC = format == .aacM4A || format == .aacADTS
        if bitrate != nil, !isAAC {
            throw CommandFailure(
                "--bitrate applies only to AAC, not to \(format.displayName); "
                    + (format.isLossless ? "a lossless format has no bit rate to set." : "use --quality."))
        }
        if quality != nil, format.isLossless {
            throw CommandFailure(
                "--quality does not apply to \(format.displayName), which is lossless"
                    + (format.defaultEncoding != nil ? "; --bits sets its precision." : "."))
        }
        if quality != nil, bitrate != nil, isAAC {
            throw CommandFailure("--bitrate and --quality both set AAC's bit rate; give one of them.")
        }
    }

    /// `--bits`, or a default that keeps the source's precision (`sourceBitDepth`; nil for float
    /// or compressed sources gives 32f, or 24 for FLAC/ALAC).
    func resolveEncoding(for format: AudioFileFormat, sourceBitDepth: Int?) throws(CommandFailure)
        -> AudioSampleEncoding?
    {
        try checkCompressionOptions(for: format)
        guard format.defaultEncoding != nil else {
            if bits != nil {
                throw CommandFailure(
                    "--bits does not apply to \(format.displayName), which has no sample encoding; "
                        + (format == .aacM4A || format == .aacADTS ? "use --bitrate." : "use --quality."))
            }
            return nil
        }
        let integerOnly = format == .flac || format == .alacM4A
        if let bits {
            let encoding = Self.encoding(named: bits)
            if integerOnly, encoding == .float32 {
                throw CommandFailure(
                    "--bits 32f is not possible for \(format.displayName), which stores integers; use 16 or 24.")
            }
            return encoding
        }
        switch sourceBitDepth {
        case 16: return .int16
        case 24: return .int24
        default: return integerOnly ? .int24 : .float32
        }
    }

    /// Refuses a rate `format` cannot store, naming the nearest one it can.
    static func checkRate(_ rate: Double, for format: AudioFileFormat) throws(CommandFailure) {
        guard let allowed = format.supportedSampleRates, !allowed.contains(Int(rate)) else { return }
        let suggestion = allowed.min { abs(Double($0) - rate) < abs(Double($1) - rate) } ?? allowed[0]
        throw CommandFailure(
            "Cannot write \(format.displayName) at \(InfoCommand.formatNumber(rate)) Hz: it supports "
                + "\(allowed.map(String.init).joined(separator: ", ")) Hz; add --rate \(suggestion).")
    }

    /// Refuses more channels than `format` can store.
    static func checkChannelCount(_ count: Int, for format: AudioFileFormat) throws(CommandFailure) {
        guard let maximum = format.maximumChannelCount, count > maximum else { return }
        throw CommandFailure(
            "Cannot write \(count) channels as \(format.displayName), which takes at most \(maximum); add --channels.")
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
}

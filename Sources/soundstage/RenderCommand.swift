// Control side. `soundstage render`: render a patch to a file faster than real time, with no JACK.
import ArgumentParser
import Foundation
import AudioFiles
import SoundstageKit

struct RenderCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "render", abstract: "Render a patch to an audio file, faster than real time, without JACK.",
        discussion: """
            The output format comes from --format or from the --out file's extension (.wav .aif .aiff .caf \
            .flac .ogg .opus .mp3 .m4a .aac); .m4a means AAC unless --format alac is given; - (standard \
            output), a device or a FIFO without an extension get WAV. The file holds the patch's outputs, \
            mixed to --channels when given (N → 1 averages, 1 → N copies). The patch's recorders write \
            their files too, every frame of the render for their node. A progress bar is drawn on stderr \
            when stderr is a terminal (not with --quiet). --input and --port feed what `run` would receive \
            on its JACK ports: --input FILE the capture ports in_1..N channel by channel, --port \
            PORT=FILE one input port of an exposed node (a mono file; e.g. --port vp_mic_1=mic.wav \
            --port vp_ref_1=far.wav). Files are converted to the render's rate and end in silence. --plot \
            FILE.png also draws what was rendered: each channel's waveform and, below, its spectrogram \
            (sox's spectrogram effect and gnuplot draw it; Debian packages sox and gnuplot-nox).
            """)

    @Argument(help: "Patch file.")
    var patch: String

    @Option(
        name: .long,
        help: """
            Output file, or - (standard output), a device or a FIFO (written through). A file is replaced \
            only when complete.
            """)
    var out: String

    @Option(name: .long, parsing: .unconditional, help: "Seconds to render.")
    var duration: Double

    @Option(name: .long, parsing: .unconditional, help: "Sample rate in Hz (default: the patch's, else 48000).")
    var rate: Double?

    @Option(name: .long, parsing: .unconditional, help: "Host block size in frames (the output does not depend on it).")
    var block: Int = 256

    @Option(name: .long, help: "Audio file for the capture ports in_1..N, channel by channel.")
    var input: String?

    @Option(name: .long, help: "PORT=FILE: a mono audio file for one input port of an exposed node (repeatable).")
    var port: [String] = []

    @Option(name: .long, help: "Also draw the render's waveform and spectrogram into this PNG (needs sox and gnuplot).")
    var plot: String?

    @OptionGroup var options: OutputFormatOptions

    @OptionGroup var quiet: QuietOption

    func validate() throws {
        guard duration.isFinite, duration > 0, duration <= 24 * 3600 else {
            throw ValidationError("--duration must be a number of seconds > 0 (at most 86400), not \(duration)")
        }
        if let rate {
            guard rate.isFinite, (8_000...384_000).contains(rate), rate.rounded() == rate else {
                throw ValidationError("--rate must be a whole number of Hz between 8000 and 384000, not \(rate)")
            }
        }
        guard (1...65_536).contains(block) else {
            throw ValidationError("--block must be 1…65536 frames, not \(block)")
        }
        if let plot { try PlotOption.validate(plot, besides: out) }
        for entry in port {
            guard let equals = entry.firstIndex(of: "="), equals != entry.startIndex,
                entry.index(after: equals) != entry.endIndex
            else {
                throw ValidationError("--port takes PORT=FILE (e.g. vp_mic_1=mic.wav), not '\(entry)'")
            }
        }
    }

    func run() throws {
        quiet.apply()
        let loaded: LoadedPatch
        do {
            loaded = try PatchLoader.load(path: patch, overrides: .init(sampleRate: rate, toleratesFileProblems: true))
            for warning in loaded.warnings { printError(warning.description) }
        } catch {
            printError(error.description)
            throw ExitCode(1)
        }
        let output: OfflineRenderJob.Output
        let feeds: (inputs: [[Float]]?, ports: [String: [Float]])
        var plotter: AudioPlot?
        do throws(CommandFailure) {
            output = try outputSettings(for: loaded)
            feeds = try portFeeds(for: loaded)
            if let plot {
                // Refused before the render starts: a missing tool or a place the picture cannot go.
                try PlotOption.prepare(plot)
                let config = loaded.engine.configuration
                plotter = try AudioPlot(
                    sampleRate: config.sampleRate, channelCount: output.channelCount ?? config.outputChannelCount,
                    expectedFrames: Int((duration * config.sampleRate).rounded()))
            }
        } catch {
            printError(error.message)
            throw ExitCode(1)
        }
        // Standard output may carry the audio or the picture: status lines go to standard error then.
        let report = out == "-" || plot == "-" ? chatter : say
        let start = Date()
        let progress = ProgressBar()
        let totalFrames = max(1, duration * loaded.engine.configuration.sampleRate)
        var interrupt: InterruptCleanup?
        defer { interrupt?.clear() }
        let result: OfflineRenderJob.Result
        var plotFailure: CommandFailure?
        do {
            result = try OfflineRenderJob.run(
                loaded, to: output, duration: duration, blockFrames: block, inputs: feeds.inputs, ports: feeds.ports,
                onOpen: { interrupt = InterruptCleanup(for: $0, command: "render") },
                onProgress: { progress.update(Double($0) / totalFrames, "rendering") },
                onBlock: { samples, frames in
                    guard let plotter, plotFailure == nil else { return }
                    do throws(CommandFailure) {
                        try plotter.append(interleaved: samples, frames: frames)
                    } catch {
                        plotFailure = error
                    }
                })
        } catch {
            progress.finish()
            plotter?.discard()
            printError("render failed: \(error)")
            throw ExitCode(1)
        }
        progress.finish()
        let seconds = Date().timeIntervalSince(start)
        let speed = seconds > 0 ? duration / seconds : .infinity
        let rate = Int(loaded.engine.configuration.sampleRate)
        let channels = "\(result.channelCount) channel\(result.channelCount == 1 ? "" : "s")"
        report(
            "wrote \(out): \(result.frames) frames, \(channels), \(rate) Hz "
                + "(\(String(format: "%.1f", speed))× real time)")
        for recording in result.recordings {
            report("recorder \(recording.name): wrote \(recording.path): \(recording.frames) frames")
        }
        for problem in result.recorderProblems { printError(problem) }
        var failed = !result.recorderProblems.isEmpty
        if let plot, let plotter {
            do throws(CommandFailure) {
                if let plotFailure { throw plotFailure }
                let name = URL(fileURLWithPath: patch).lastPathComponent
                try PlotOption.write(plotter.draw(title: "render of \(name)"), to: plot)
                report("plotted the render into \(plot)")
            } catch {
                plotter.discard()
                printError(error.message)
                failed = true
            }
        }
        if failed { throw ExitCode(1) }
    }

    /// The output's format, encoding and channels from the options, checked against the patch's
    /// rate and outputs, so that every refusal names an option `render` has.
    private func outputSettings(for loaded: LoadedPatch) throws(CommandFailure) -> OfflineRenderJob.Output {
        let config = loaded.engine.configuration
        let format = try options.resolveFormat(output: out, streamDefault: .wav)
        try OutputFormatOptions.checkRate(config.sampleRate, for: format)
        let channelCount = options.channels ?? config.outputChannelCount
        try OutputFormatOptions.checkChannelCount(channelCount, for: format)
        if let problem = AudioData.channelMixProblem(from: config.outputChannelCount, to: channelCount) {
            throw CommandFailure("Cannot render '\(patch)' to \(channelCount) channels: \(problem).")
        }
        return OfflineRenderJob.Output(
            path: out, format: format,
            encoding: try options.resolveEncoding(for: format, sourceBitDepth: nil),
            quality: options.resolvedQuality, bitRate: options.bitRateInBits, channelCount: options.channels)
    }

    /// The signals of `--input` and `--port`, decoded at the patch's rate and checked against the ports
    /// the patch has, so a misspelt port or a file with too many channels is refused by name.
    private func portFeeds(for loaded: LoadedPatch) throws(CommandFailure) -> (
        inputs: [[Float]]?, ports: [String: [Float]]
    ) {
        let config = loaded.engine.configuration
        var inputs: [[Float]]?
        if let input {
            let channels = try decode(input, option: "--input", rate: config.sampleRate)
            guard config.inputChannelCount > 0 else {
                throw CommandFailure("--input: the patch '\(patch)' has no capture ports (set `inputs` under `engine`)")
            }
            guard channels.count <= config.inputChannelCount else {
                let count = config.inputChannelCount
                let ports = count == 1 ? "1 capture port (in_1)" : "\(count) capture ports (in_1..in_\(count))"
                throw CommandFailure(
                    "--input: '\(input)' has \(channels.count) channels but the patch has only \(ports)")
            }
            inputs = channels
        }
        let available = loaded.engine.hostInsertLayout.inserts.flatMap(\.portNames.inputs)
        var ports: [String: [Float]] = [:]
        for entry in port {
            let equals = entry.firstIndex(of: "=")!
            let name = String(entry[..<equals])
            let path = String(entry[entry.index(after: equals)...])
            guard available.contains(name) else {
                let list = available.isEmpty ? "it exposes none" : "it has: \(available.joined(separator: ", "))"
                throw CommandFailure("--port: the patch '\(patch)' has no input port '\(name)' (\(list))")
            }
            guard ports[name] == nil else { throw CommandFailure("--port: '\(name)' is given twice") }
            let channels = try decode(path, option: "--port \(name)", rate: config.sampleRate)
            guard channels.count == 1 else {
                throw CommandFailure(
                    "--port \(name): '\(path)' has \(channels.count) channels; a port takes a mono file")
            }
            ports[name] = channels[0]
        }
        return (inputs, ports)
    }

    private func decode(_ path: String, option: String, rate: Double) throws(CommandFailure) -> [[Float]] {
        do {
            return try AudioFileReader.load(path: path, targetSampleRate: rate).channels
        } catch {
            throw CommandFailure("\(option): cannot read '\(path)': \(error)")
        }
    }
}

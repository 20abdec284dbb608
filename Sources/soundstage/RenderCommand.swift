// Control side. `soundstage render`: render a patch to a file faster than real time, with no JACK.
import ArgumentParser
import Foundation
import AudioFiles
import SoundstageKit

struct RenderCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "render", abstract: "Render a patch to an audio file, faster than real time, without JACK.")

    @Argument(help: "Patch file.")
    var patch: String

    @Option(
        name: .long,
        help: """
            Output file (.wav, .flac, .caf, .aiff, .ogg, .opus, .mp3, .m4a, .aac), or - (standard output), a device \
            or a FIFO (written through, WAV unless the name has an extension). Replaced only when complete.
            """)
    var out: String

    @Option(name: .long, parsing: .unconditional, help: "Seconds to render.")
    var duration: Double

    @Option(name: .long, parsing: .unconditional, help: "Sample rate in Hz (default: the patch's, else 48000).")
    var rate: Double?

    @Option(name: .long, parsing: .unconditional, help: "Host block size in frames (the output does not depend on it).")
    var block: Int = 256

    func validate() throws {
        guard duration.isFinite, duration > 0, duration <= 24 * 3600 else {
            throw ValidationError("--duration must be a number of seconds > 0 (at most 86400), not \(duration)")
        }
        if let rate { guard rate.isFinite, (8_000...384_000).contains(rate) else {
            throw ValidationError("--rate must be between 8000 and 384000 Hz, not \(rate)")
        } }
        guard (1...65_536).contains(block) else { throw ValidationError("--block must be 1…65536 frames, not \(block)") }
    }

    func run() throws {
        let loaded: LoadedPatch
        do {
            loaded = try PatchLoader.load(path: patch, overrides: .init(sampleRate: rate, toleratesFileProblems: true))
            for warning in loaded.warnings { printError(warning.description) }
        } catch {
            printError(error.description)
            throw ExitCode(1)
        }
        let start = Date()
        // Standard output may carry the audio: status lines go to standard error then.
        let report = out == "-" ? printError : say
        let format = AudioFileFormat(path: out) ?? (OutputDestination.isStream(out) ? .wav : nil)
        var interrupt: InterruptCleanup?
        defer { interrupt?.clear() }
        do {
            let frames = try OfflineRenderJob.run(loaded, to: out, format: format, duration: duration, blockFrames: block) {
                interrupt = InterruptCleanup(for: $0, command: "render")
            }
            let seconds = Date().timeIntervalSince(start)
            let speed = seconds > 0 ? duration / seconds : .infinity
            report("wrote \(out): \(frames) frames, \(loaded.engine.configuration.outputChannelCount) channels, "
                + "\(Int(loaded.engine.configuration.sampleRate)) Hz (\(String(format: "%.1f", speed))× real time)")
        } catch {
            printError("render failed: \(error)")
            throw ExitCode(1)
        }
    }
}

/// Writes a line to standard output at once (unbuffered), so logs and pipes see each status line
/// when it happens.
func say(_ message: String) {
    FileHandle.standardOutput.write(Data((message + "\n").utf8))
}

/// Writes a line to standard error.
func printError(_ message: String) {
    FileHandle.standardError.write(Data((message + "\n").utf8))
}

// Control side (or a recorder's disk thread). Encodes audio to a file through libsndfile (or FFmpeg
// for AAC and ALAC), either in one call or streamed block by block. Blocking file I/O: never call
// it from the render thread.

import CSndFile
import Foundation
import Locking

/// Writes WAV, AIFF, CAF, FLAC, Ogg Vorbis, Opus and MP3 files (libsndfile), and AAC or ALAC in
/// M4A and AAC in ADTS (FFmpeg). M4A files carry gapless metadata (an exact edit list), so the
/// reader returns exactly the frames written.
///
/// Streaming use (recorder, offline renderer):
/// ```swift
/// let writer = try AudioFileWriter(path: "out.wav", sampleRate: 48_000, channelCount: 2)
/// try writer.write(interleaved: buffer, frames: 512)   // repeatedly
/// try writer.close()                                   // finalises the header
/// ```
/// One-shot use: `try AudioFileWriter.write(data, to: "out.flac")`.
///
/// Thread contract: every method takes an internal lock, so a writer may be created on one thread
/// and fed from another, but calls from several threads at once are serialised, not parallel.
/// Integer encodings clip samples to [-1, 1] instead of wrapping (`SFC_SET_CLIPPING`). If a writer
/// is dropped without `close()`, `deinit` closes it and ignores any error; call `close()` to learn
/// whether the file was finalised.
public final class AudioFileWriter: Sendable {
    /// Quality used when the caller gives none: 0.75 on libsndfile's 0 (smallest) … 1 (best) scale
    /// (`SFC_SET_VBR_ENCODING_QUALITY`); ≈ Vorbis q7, LAME V2–V3, Opus ≈ 100 kbit/s stereo.
    public static let defaultQuality = 0.75

    /// Longest Opus page, in milliseconds of audio, when `isCrashTolerant` (libsndfile's default is
    /// 1000): what a crash can lose of an Opus recording beyond the recorder's backlog.
    public static let crashTolerantOggPageMilliseconds = 200.0

    /// Frames interleaved per encoder call by `write(channels:)`.
    private static let interleaveChunkFrames = 4096

    /// AAC bit rate for `quality` when no bit rate is given, in bits per second per channel:
    /// 32 kbit/s + 128 kbit/s × quality (0.75 gives 128 kbit/s per channel, 256 kbit/s stereo).
    /// Deliberately high: FFmpeg's native encoder needs more bits than Apple's for the same quality.
    public static func defaultAACBitRate(channelCount: Int, quality: Double) -> Int {
        channelCount * Int((32_000 + 128_000 * max(0, min(1, quality))).rounded())
    }

    /// Destination path, as given.
    public let path: String
    /// Container and codec.
    public let format: AudioFileFormat
    /// Stored sample encoding for PCM containers and ALAC; nil for the lossy formats.
    public let encoding: AudioSampleEncoding?
    /// Frames per second, in Hz (a whole number).
    public let sampleRate: Double
    /// Channels per frame (≥ 1).
    public let channelCount: Int

    /// The library doing the encoding.
    private enum Encoder {
        case sndfile(OpaquePointer)
        case ffmpeg(FFmpegEncoder)
    }

    private struct State {
        /// Nil once closed.
        var encoder: Encoder?
        var destination: OutputDestination
        var framesWritten: Int
        /// What a failed `close()` or an `abandon()` left at the destination.
        var remains: AudioFileRemains?
        /// libsndfile's error state once the encoder was set up (a refused option may leave one).
        var sndfileErrorBaseline: Int32 = 0
        /// For a file written in place: its size when it last ended on a whole frame, page or fragment
        /// (after each libsndfile write, after each FFmpeg flush). A failed compressed write is cut
        /// back to it, so the file ends as a killed recording's does, never inside a frame.
        var completeSize: off_t = 0

        /// True when the working file is the target itself (a new file for a recorder): then
        /// `completeSize` is kept.
        var isInPlace: Bool { !destination.isTemporary && destination.sink == .file }
    }

    private let state: Locked<State>

    /// Prepares an encoder writing to `path` under `OutputDestination`'s rule: `-` is standard
    /// output, a device or FIFO is written through when the file is closed, a symbolic link's target
    /// is written, and an existing file is replaced only by `close()` (never truncated first).
    ///
    /// - Parameters:
    ///   - path: destination; its directory must exist.
    ///   - format: container and codec; nil chooses it from the extension (`.wav`, `.aif`/`.aiff`,
    ///     `.caf`, `.flac`, `.ogg`, `.opus`, `.mp3`, `.m4a`/`.mp4` for AAC, `.aac` for ADTS AAC).
    ///     ALAC is never chosen from an extension: pass `.alacM4A`.
    ///   - sampleRate: frames per second, in Hz: a positive whole number. Opus accepts only 8000,
    ///     12000, 16000, 24000 and 48000; MP3 only the MPEG rates (8000 … 48000); AAC 8000 … 96000
    ///     (the MPEG-4 rates).
    ///   - channelCount: 1 … 1024 (MP3 ≤ 2; FLAC, Opus, AAC and ALAC ≤ 8).
    ///   - encoding: sample encoding for PCM containers and ALAC; nil = `format.defaultEncoding`
    ///     (float32 for WAV/AIFF/CAF, int24 for FLAC and ALAC). FLAC and ALAC do not store floats.
    ///     Ignored by lossy formats.
    ///   - quality: 0 (smallest file) … 1 (best sound) for Ogg Vorbis, Opus, MP3 and (when
    ///     `bitRate` is nil) AAC; ignored by the other formats.
    ///   - bitRate: AAC bits per second for all channels, 8,000 … 2,000,000 (FFmpeg clamps it to
    ///     what AAC can carry at the rate); nil = `defaultAACBitRate(channelCount:quality:)`.
    ///     Ignored by the other formats.
    ///   - replacement: `.inPlaceWhenNew` for recordings: a new file is written in place, so a
    ///     crash leaves what was written under `path`.
    ///   - isCrashTolerant: recordings: write so that the file reads back with its true length if
    ///     the process dies. M4A becomes fragmented MP4 (an empty index first, then a fragment
    ///     every `FFmpegEncoder.fragmentDuration`), readable up to the last complete fragment, with
    ///     AAC's gapless layout in an iTunSMPB tag completed at close;
    ///     MP3 is encoded at a constant bit rate, so that a reader's length estimate from the
    ///     file size is right while the gapless tag still says nothing (it is written at close);
    ///     Opus pages are closed every `crashTolerantOggPageMilliseconds`.
    /// - Throws: `.invalidArgument` for bad parameters (nothing is created), `.unsupportedFormat`
    ///   for an unknown extension or a combination libsndfile cannot write, `.permissionDenied`,
    ///   `.notARegularFile` (the path names a directory, block device or socket; nothing is
    ///   touched) or `.writeFailed` when the file cannot be created.
    public init(
        path: String,
        format: AudioFileFormat? = nil,
        sampleRate: Double,
        channelCount: Int,
        encoding: AudioSampleEncoding? = nil,
        quality: Double = AudioFileWriter.defaultQuality,
        bitRate: Int? = nil,
        replacement: OutputDestination.Replacement = .whenComplete,
        isCrashTolerant: Bool = false
    ) throws(AudioFileError) {
        // A folder named like an audio file is the more useful complaint than its extension.
        if let kind = FileKind.nonRegularDescription(path: path), kind == "a directory" {
            throw .notARegularFile(path: path, kind: kind)
        }
        let (resolvedFormat, resolvedEncoding, rate) = try Self.check(
            path: path, format: format, sampleRate: sampleRate, channelCount: channelCount, encoding: encoding,
            quality: quality, bitRate: bitRate)
        var info = SF_INFO()
        info.samplerate = Int32(rate)
        info.channels = Int32(channelCount)
        info.format = resolvedFormat.sndfileCode(encoding: resolvedEncoding) ?? 0

        let destination = try OutputDestination(path: path, replacement: replacement)
        let fd = destination.descriptor
        self.path = path
        self.format = resolvedFormat
        self.encoding = resolvedEncoding
        self.sampleRate = Double(rate)
        self.channelCount = channelCount
        if resolvedFormat.isEncodedByFFmpeg {
            let encoder: FFmpegEncoder
            do {
                encoder = try FFmpegEncoder(
                    fd: fd, path: path, format: resolvedFormat, sampleRate: rate, channelCount: channelCount,
                    encoding: resolvedEncoding,
                    bitRate: bitRate ?? Self.defaultAACBitRate(channelCount: channelCount, quality: quality),
                    isFragmented: isCrashTolerant && resolvedFormat != .aacADTS)
            } catch {
                // A new file written in place holds at most a broken header: it goes.
                let explained = DiskSpace.explained(error, descriptor: fd)
                destination.discardRemovingNewFile()
                throw explained
            }
            self.state = Locked(State(encoder: .ffmpeg(encoder), destination: destination, framesWritten: 0))
            return
        }
        let opened = SndFileLibrary.open(descriptor: fd, mode: Int32(SFM_WRITE), info: &info)
        guard let handle = opened.handle else {
            let error = DiskSpace.explained(
                .writeFailed(path: path, reason: "libsndfile: \(opened.errorText)"), descriptor: fd)
            destination.discardRemovingNewFile()
            throw error
        }
        // No PEAK chunk: it carries the time of writing, so two identical renders would differ.
        sf_command(handle, Int32(SFC_SET_ADD_PEAK_CHUNK), nil, Int32(SF_FALSE))
        if resolvedEncoding?.isInteger == true {
            // Out-of-range floats saturate instead of wrapping around to the opposite sign.
            sf_command(handle, Int32(SFC_SET_CLIPPING), nil, Int32(SF_TRUE))
        }
        if !resolvedFormat.isLossless {
            // Best effort: libsndfile returns SF_FALSE where the codec has no such setting.
            var vbrQuality = quality
            sf_command(
                handle, Int32(SFC_SET_VBR_ENCODING_QUALITY), &vbrQuality, Int32(MemoryLayout<Double>.size))
        }
        if isCrashTolerant, resolvedFormat == .mp3 {
            var mode = Int32(SF_BITRATE_MODE_CONSTANT)
            sf_command(handle, Int32(SFC_SET_BITRATE_MODE), &mode, Int32(MemoryLayout<Int32>.size))
        }
        if isCrashTolerant, resolvedFormat == .opus {
            // libsndfile closes an Opus page once a second by default; a crash loses the open page.
            var milliseconds = Self.crashTolerantOggPageMilliseconds
            sf_command(
                handle, Int32(SFC_SET_OGG_PAGE_LATENCY_MS), &milliseconds, Int32(MemoryLayout<Double>.size))
        }

        self.state = Locked(
            State(
                encoder: .sndfile(handle), destination: destination, framesWritten: 0,
                sndfileErrorBaseline: sf_error(handle)))
    }

    /// Checks what `init` checks before it creates anything: the format (given, or from the
    /// extension), the rate, the channel count, the encoding, the quality and the bit rate, and that
    /// the library can write the combination. Callers that create the file later (a recorder) use
    /// it to refuse a request at once. Returns the format, the encoding used (nil for the lossy
    /// formats, which ignore one) and the rate in whole Hz.
    ///
    /// - Throws: `.unsupportedFormat` or `.invalidArgument`, as `init`.
    @discardableResult
    public static func check(
        path: String, format: AudioFileFormat?, sampleRate: Double, channelCount: Int,
        encoding: AudioSampleEncoding? = nil, quality: Double = defaultQuality, bitRate: Int? = nil
    ) throws(AudioFileError) -> (format: AudioFileFormat, encoding: AudioSampleEncoding?, sampleRate: Int) {
        guard let resolvedFormat = format ?? AudioFileFormat(path: path) else {
            throw .unsupportedFormat(
                path: path,
                reason: "cannot choose a format from the file name; use .wav, .aif, .aiff, .caf, .flac, "
                    + ".ogg, .opus, .mp3, .m4a or .aac, or pass a format")
        }
        let resolvedEncoding = resolvedFormat.isLossless ? (encoding ?? resolvedFormat.defaultEncoding) : nil
        let rate = try validatedRate(sampleRate, format: resolvedFormat, path: path)
        try validate(
            channelCount: channelCount, format: resolvedFormat, encoding: resolvedEncoding, quality: quality,
            path: path)
        if let bitRate, !(8_000...2_000_000).contains(bitRate) {
            throw .invalidArgument(path: path, reason: "bit rate must lie in 8000…2000000 bit/s, not \(bitRate)")
        }
        var info = SF_INFO()
        info.samplerate = Int32(rate)
        info.channels = Int32(channelCount)
        info.format = resolvedFormat.sndfileCode(encoding: resolvedEncoding) ?? 0
        guard resolvedFormat.isEncodedByFFmpeg || sf_format_check(&info) == SF_TRUE else {
            throw .unsupportedFormat(
                path: path,
                reason: "libsndfile cannot write \(resolvedFormat.displayName)"
                    + (resolvedEncoding.map { " \($0.rawValue)" } ?? "")
                    + " at \(rate) Hz with \(channelCount) channels")
        }
        return (resolvedFormat, resolvedEncoding, rate)
    }

    /// A writer dropped without `close()` abandons its output: the target keeps its old content (a
    /// recording written in place keeps what was written).
    deinit {
        discard()
    }

    /// Abandons the output without finalising it: closes the encoder and removes the working file
    /// unless it is the target itself (`OutputDestination.discard()`). Does nothing once closed.
    public func discard() {
        state.withLock { state in
            guard let encoder = state.encoder else { return }
            state.encoder = nil
            switch encoder {
            case .sndfile(let handle): sf_close(handle)
            case .ffmpeg(let encoder): try? encoder.finish()
            }
            state.destination.discard()
        }
    }

    /// The file being written before `close()` puts it in place: the path a signal handler should
    /// remove when the process is interrupted; nil when the writer writes its target in place.
    public var temporaryPath: String? {
        state.withLock { $0.destination.isTemporary ? $0.destination.workingPath : nil }
    }

    /// Where the bytes finally go.
    public var sink: OutputDestination.Sink {
        state.withLock { $0.destination.sink }
    }

    /// Frames written so far.
    public var framesWritten: Int {
        state.withLock { $0.framesWritten }
    }

    /// True until `close()` has run.
    public var isOpen: Bool {
        state.withLock { $0.encoder != nil }
    }

    /// Appends `frames` interleaved frames (`frames × channelCount` samples, channel-minor).
    ///
    /// - Parameters:
    ///   - interleaved: at least `frames × channelCount` samples; extra samples are ignored.
    ///   - frames: number of frames to write (≥ 0).
    /// - Throws: `.invalidArgument` when the buffer is too short, `.writeFailed` when the writer is
    ///   closed or the encoder / disk fails (for example, no space left).
    public func write(interleaved: UnsafeBufferPointer<Float>, frames: Int) throws(AudioFileError) {
        let channelCount = channelCount
        let path = path
        guard frames >= 0, interleaved.count / channelCount >= frames else {
            throw .invalidArgument(
                path: path,
                reason: "\(frames) frames of \(channelCount) channels need \(frames * channelCount) samples, "
                    + "the buffer has \(interleaved.count)")
        }
        try state.withLock { (state: inout State) throws(AudioFileError) in
            try Self.writeLocked(&state, interleaved, frames: frames, path: path)
        }
    }

    /// Appends deinterleaved samples: one array per channel, all of the same length.
    ///
    /// - Throws: `.invalidArgument` for a wrong channel count or unequal lengths, `.writeFailed`
    ///   as for `write(interleaved:frames:)`.
    public func write(channels: [[Float]]) throws(AudioFileError) {
        let channelCount = channelCount
        let path = path
        guard channels.count == channelCount else {
            throw .invalidArgument(
                path: path, reason: "expected \(channelCount) channels of samples, got \(channels.count)")
        }
        let frames = channels.first?.count ?? 0
        guard channels.allSatisfy({ $0.count == frames }) else {
            throw .invalidArgument(path: path, reason: "channels have different lengths")
        }
        let chunk = Self.interleaveChunkFrames
        var interleaved = [Float](repeating: 0, count: min(chunk, max(frames, 1)) * channelCount)
        try state.withLock { (state: inout State) throws(AudioFileError) in
            var start = 0
            while start < frames {
                let count = min(chunk, frames - start)
                for (channelIndex, channel) in channels.enumerated() {
                    var target = channelIndex
                    for frame in start..<(start + count) {
                        interleaved[target] = channel[frame]
                        target += channelCount
                    }
                }
                try interleaved.withUnsafeBufferPointer { (buffer) throws(AudioFileError) in
                    try Self.writeLocked(&state, buffer, frames: count, path: path)
                }
                start += count
            }
            // A zero-frame write still reports a closed writer.
            if frames == 0, state.encoder == nil {
                throw .writeFailed(path: path, reason: "the writer has already been closed")
            }
        }
    }

    /// Makes what was written so far readable if the process dies, leaving the file open for more
    /// writes. WAV, AIFF and CAF rewrite their size fields (`SFC_UPDATE_HEADER_NOW`: two seeks and a
    /// small write). An M4A writer flushes FFmpeg's buffer, so completed fragments of a fragmented
    /// file reach the disk. FLAC, Ogg Vorbis, Opus and MP3 write each page or frame as it is encoded
    /// and have nothing to update: the call does nothing. (libsndfile would write a second set of
    /// Ogg header pages, or a premature MP3 tag, if asked to update them.)
    /// Cost: a few system calls; call it about once a second, not per block.
    ///
    /// - Throws: `.writeFailed` when the writer is closed or the library reports an error.
    public func updateHeader() throws(AudioFileError) {
        let path = path
        let format = format
        try state.withLock { (state: inout State) throws(AudioFileError) in
            guard let encoder = state.encoder else {
                throw .writeFailed(path: path, reason: "the writer has already been closed")
            }
            let descriptor = state.destination.descriptor
            switch encoder {
            case .ffmpeg(let ffmpeg):
                do throws(AudioFileError) {
                    try ffmpeg.flush()
                } catch {
                    throw DiskSpace.explained(error, descriptor: descriptor)
                }
                if state.isInPlace { state.completeSize = Self.fileSize(descriptor) ?? state.completeSize }
            case .sndfile(let handle):
                guard format == .wav || format == .aiff || format == .caf else { return }
                sf_command(handle, Int32(SFC_UPDATE_HEADER_NOW), nil, 0)
                if sf_error(handle) != 0 {
                    let error = AudioFileError.writeFailed(
                        path: path, reason: "could not update the header: \(SndFileLibrary.errorText(handle))")
                    throw DiskSpace.explained(error, descriptor: descriptor)
                }
            }
        }
    }

    /// Flushes the encoder, finalises the header (for M4A: writes the index and edit list), closes
    /// the file and puts it in place (`OutputDestination.commit()`: rename over the target, or copy
    /// through to a device, FIFO or standard output). Further writes throw; closing again does
    /// nothing. If finalising fails, the target is left as it was.
    ///
    /// - Throws: `.writeFailed` when the encoder reports an error while finalising, or the file
    ///   cannot be flushed, renamed or copied.
    public func close() throws(AudioFileError) {
        let path = path
        try state.withLock { (state: inout State) throws(AudioFileError) in
            guard let encoder = state.encoder else { return }
            state.encoder = nil
            // Ogg's serial numbers are rewritten in every page: its head is never put back alone.
            let head = format == .oggVorbis || format == .opus ? nil : headBeforeFinishing(state)
            var failure = finishEncoder(encoder, &state, completing: true)
            // FLAC, MP3 and Opus without a frame come out of their encoders as no file or a broken one,
            // AAC and ALAC as a file with no audio stream, a float AIFF (AIFC) as one libsndfile reads back
            // with 6 frames: nothing is written, and the caller hears why.
            let holdsNoAudio =
                [.wav, .caf, .oggVorbis].contains(format) || (format == .aiff && encoding != .float32)
            if failure == nil, state.framesWritten == 0, !holdsNoAudio {
                failure = .writeFailed(
                    path: path,
                    reason: "\(format.displayName) cannot hold a file without audio; there is nothing to write")
            }
            if let failure {
                let explained = DiskSpace.explained(failure, descriptor: state.destination.descriptor)
                cutBack(state, head: head)
                state.remains = Self.settle(state.destination, format: format)
                throw explained
            }
            try state.destination.commit()
        }
    }

    /// Ends a write that failed (a write, header update or the disk did): closes the encoder,
    /// finalising what it can without more audio (a WAV, AIFF or CAF header declares what reached the
    /// disk), and settles the destination. A new file written in place (a recording) keeps the frames
    /// that decode, or is removed when none do; any other destination is left as it was (the file
    /// beside it or the spool is removed). Returns what is left; after `close()` or a second call,
    /// what was left then (`.unchanged` after a successful close).
    ///
    /// Blocking I/O: reading the kept part back decodes it (FLAC, Ogg, Opus, MP3, M4A, ADTS).
    @discardableResult
    public func abandon() -> AudioFileRemains {
        state.withLock { state in
            guard let encoder = state.encoder else { return state.remains ?? .unchanged }
            state.encoder = nil
            let head = headBeforeFinishing(state)
            // A WAV, AIFF or CAF header is completed in place; a compressed file is cut back instead.
            _ = finishEncoder(encoder, &state, completing: state.isInPlace && !cutsBack(state))
            cutBack(state, head: head)
            let remains = Self.settle(state.destination, format: format)
            state.remains = remains
            return remains
        }
    }

    /// What a failed `close()` or an `abandon()` left at the destination; nil before either, and after
    /// a successful `close()`.
    public var remains: AudioFileRemains? {
        state.withLock { $0.remains }
    }

    /// Bytes rewritten in place when an encoder finishes lie in the file's first 64 KiB: FLAC's
    /// STREAMINFO, MP3's LAME tag, an M4A's index and gapless tag.
    private static let rewrittenHeadBytes = 1 << 16

    /// True for a compressed file written in place, which a failed write cuts back to `completeSize`
    /// (WAV, AIFF and CAF keep what reached the disk, declared by the header libsndfile finalises).
    private func cutsBack(_ state: State) -> Bool {
        !(format == .wav || format == .aiff || format == .caf) && state.isInPlace
    }

    /// For a compressed file written in place: its first bytes, up to `completeSize`, before the
    /// encoder finishes and rewrites them (`cutBack` puts them back if the write fails).
    private func headBeforeFinishing(_ state: State) -> [UInt8]? {
        guard cutsBack(state) else { return nil }
        var head = [UInt8](repeating: 0, count: Int(min(state.completeSize, off_t(Self.rewrittenHeadBytes))))
        let count = head.withUnsafeMutableBytes { pread(state.destination.descriptor, $0.baseAddress, $0.count, 0) }
        return count == head.count ? head : nil
    }

    /// Puts a compressed file written in place back as it was at its last whole frame, page or
    /// fragment: cut to `completeSize`, with the head the finishing encoder rewrote restored (a
    /// STREAMINFO or LAME tag declaring frames that are not there). The file then reads as a killed
    /// recording does.
    private func cutBack(_ state: State, head: [UInt8]?) {
        guard cutsBack(state) else { return }
        let descriptor = state.destination.descriptor
        ftruncate(descriptor, state.completeSize)
        if let head { _ = head.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, 0) } }
    }

    /// Flushes and closes the encoder, then, when `completing`, completes what libsndfile leaves
    /// unfinished (a float WAV's extension size, Ogg serial numbers and the last Opus packet's trim;
    /// an abandoned file is cut back instead). Returns the first failure.
    private func finishEncoder(_ encoder: Encoder, _ state: inout State, completing: Bool) -> AudioFileError? {
        switch encoder {
        case .ffmpeg(let ffmpeg):
            do throws(AudioFileError) { try ffmpeg.finish() } catch { return error }
            return nil
        case .sndfile(let handle):
            var granuleTrim: Int64 = 0
            if completing, format == .opus {
                let padding = OpusFinalPacket.padding(framesWritten: state.framesWritten, sampleRate: Int(sampleRate))
                if OpusFinalPacket.writeSilence(handle, frames: padding.frames, channelCount: channelCount)
                    == padding.frames
                {
                    granuleTrim = padding.granuleTrim
                }
            }
            let status = sf_close(handle)
            guard completing else { return nil }
            if status != 0 {
                let text = sf_error_number(status).map { String(cString: $0) } ?? "error \(status)"
                return .writeFailed(path: path, reason: "libsndfile could not finalise the file: \(text)")
            }
            let descriptor = state.destination.descriptor
            do throws(AudioFileError) {
                if format == .oggVorbis || format == .opus {
                    try OggSerialNumber.fix(descriptor: descriptor, path: path, trimmingEndBy: granuleTrim)
                } else if format == .wav, encoding == .float32 {
                    try WAVFloatHeader.addExtensionSize(descriptor: descriptor, path: path)
                }
            } catch {
                return error
            }
            return nil
        }
    }

    /// Settles a destination whose write failed: a file written in place is kept with the frames
    /// that decode from it, or removed when none do; anything else is discarded (`.unchanged`).
    private static func settle(_ destination: OutputDestination, format: AudioFileFormat) -> AudioFileRemains {
        guard !destination.isTemporary, destination.sink == .file else {
            destination.discard()
            return .unchanged
        }
        fsync(destination.descriptor)
        let frames = readableFrames(path: destination.workingPath, format: format)
        guard frames > 0 else {
            destination.discardRemovingNewFile()
            return .removed
        }
        destination.discard()
        return .kept(frames: frames)
    }

    /// Frames that decode from `path`: a WAV, AIFF or CAF header's count (limited to the data
    /// present), a full decode up to the first error for the other formats; 0 when it does not open.
    static func readableFrames(path: String, format: AudioFileFormat) -> Int {
        guard format == .wav || format == .aiff || format == .caf else {
            return AudioFileReader.decodeAll(path: path).decodedFrameCount
        }
        let inspection = AudioFileReader.inspect(path: path)
        return inspection.damage?.availableFrames ?? inspection.info?.frameCount ?? 0
    }

    /// Writes `data` to `path` in one call and closes the file. If encoding or writing fails, the
    /// working file is removed and the target is left as it was.
    ///
    /// - Parameters:
    ///   - data: audio with a positive whole `sampleRate` and equal-length channels.
    ///   - path: destination, as for `init`.
    ///   - format: nil chooses it from the extension.
    ///   - encoding: PCM or ALAC encoding; nil = the format's default.
    ///   - quality: 0 … 1 for the lossy formats.
    ///   - bitRate: AAC bits per second; nil derives it from `quality`.
    /// - Throws: as `init`, `write(channels:)` and `close()`.
    public static func write(
        _ data: AudioData,
        to path: String,
        format: AudioFileFormat? = nil,
        encoding: AudioSampleEncoding? = nil,
        quality: Double = defaultQuality,
        bitRate: Int? = nil
    ) throws(AudioFileError) {
        let writer = try AudioFileWriter(
            path: path, format: format, sampleRate: data.sampleRate, channelCount: data.channelCount,
            encoding: encoding, quality: quality, bitRate: bitRate)
        do {
            try writer.write(channels: data.channels)
            try writer.close()
        } catch {
            writer.discard()
            throw error
        }
    }

    /// One encoder call; the caller holds the lock.
    private static func writeLocked(
        _ state: inout State, _ samples: UnsafeBufferPointer<Float>, frames: Int, path: String
    ) throws(AudioFileError) {
        guard let encoder = state.encoder else {
            throw .writeFailed(path: path, reason: "the writer has already been closed")
        }
        guard frames > 0 else { return }
        let descriptor = state.destination.descriptor
        guard case .sndfile(let handle) = encoder else {
            guard case .ffmpeg(let ffmpeg) = encoder else { return }
            do throws(AudioFileError) {
                try ffmpeg.write(interleaved: samples, frames: frames)
                // In place (a recording), FFmpeg's buffer goes to the file after every write: it then
                // ends on a whole ADTS frame or MP4 fragment, to which a failed write is cut back.
                if state.isInPlace { try ffmpeg.flush() }
            } catch {
                throw DiskSpace.explained(error, descriptor: descriptor)
            }
            state.framesWritten += frames
            if state.isInPlace { state.completeSize = fileSize(descriptor) ?? state.completeSize }
            return
        }
        let written = Int(sf_writef_float(handle, samples.baseAddress, sf_count_t(frames)))
        state.framesWritten += max(0, written)
        // The MP3 encoder takes every frame even when writing its output failed: only the error
        // state tells.
        let failedQuietly = state.sndfileErrorBaseline == 0 && sf_error(handle) != 0
        if written != frames || failedQuietly {
            let error = AudioFileError.writeFailed(
                path: path,
                reason: "wrote \(max(0, written)) of \(frames) frames: \(SndFileLibrary.errorText(handle))")
            throw DiskSpace.explained(error, descriptor: descriptor)
        }
        if state.isInPlace { state.completeSize = fileSize(descriptor) ?? state.completeSize }
    }

    /// The size of the file open on `descriptor`.
    private static func fileSize(_ descriptor: Int32) -> off_t? {
        var status = stat()
        return fstat(descriptor, &status) == 0 ? status.st_size : nil
    }

    /// Checks the rate and returns it as a whole number of Hz.
    private static func validatedRate(_ rate: Double, format: AudioFileFormat, path: String) throws(AudioFileError)
        -> Int
    {
        guard rate.isFinite, rate >= 1, rate <= Double(Int32.max), rate == rate.rounded() else {
            throw .invalidArgument(
                path: path, reason: "sample rate must be a positive whole number of Hz, not \(rate)")
        }
        let whole = Int(rate)
        if let allowed = format.supportedSampleRates, !allowed.contains(whole) {
            let list = allowed.map(String.init).joined(separator: ", ")
            throw .invalidArgument(
                path: path,
                reason: "\(format.displayName) supports only \(list) Hz, not \(whole) Hz; "
                    + "convert first with SampleRateConverter")
        }
        return whole
    }

    /// Checks channel count, encoding and quality against the format.
    private static func validate(
        channelCount: Int, format: AudioFileFormat, encoding: AudioSampleEncoding?, quality: Double, path: String
    ) throws(AudioFileError) {
        let maximum = min(format.maximumChannelCount ?? 1024, 1024)
        guard channelCount >= 1, channelCount <= maximum else {
            throw .invalidArgument(
                path: path,
                reason: "\(format.displayName) takes 1 to \(maximum) channels, not \(channelCount)")
        }
        if format == .flac || format == .alacM4A, encoding == .float32 {
            throw .invalidArgument(
                path: path, reason: "\(format.displayName) stores integers only; use int16 or int24")
        }
        guard quality.isFinite, (0...1).contains(quality) else {
            throw .invalidArgument(path: path, reason: "quality must lie in 0…1, not \(quality)")
        }
    }
}

// Control side. One open libsndfile decoding session: checks the path, opens it, describes it and
// reads frames. Used by AudioFileReader; never shared between threads.

import CSndFile
import Foundation

/// An open file being decoded by libsndfile. Closes the handle and descriptor on deinit.
///
/// The descriptor is opened by `InputFile` (not by libsndfile) so that "not found", "permission
/// denied", "is a directory" and "empty" are told apart from format errors.
final class SndFileReader {
    let path: String
    let fd: Int32
    let fileSize: Int
    private let handle: OpaquePointer
    let format: Int32
    let sampleRate: Double
    let channelCount: Int
    let isSeekable: Bool
    /// Frames libsndfile reports; nil when it does not know (an unbounded stream).
    let reportedFrameCount: Int?
    /// Frames the WAV, RF64, Wave64, AIFF or CAF header declares (see `DeclaredFrameCount`).
    let declaredFrameCount: Int?
    /// For MPEG files: the first frame's Xing/Info/VBRI tag, which states the length; nil when
    /// there is none (the length is then mpg123's estimate).
    let mpegLengthTag: MPEGLengthTag?
    /// Frames a seek starts early and decodes, so a lossy decoder's state is rebuilt (see `seek`).
    private var seekPrerollFrameCount: Int {
        switch SndFileLibrary.subtype(format) {
        case Int(SF_FORMAT_VORBIS), Int(SF_FORMAT_OPUS), Int(SF_FORMAT_MPEG_LAYER_I), Int(SF_FORMAT_MPEG_LAYER_II),
            Int(SF_FORMAT_MPEG_LAYER_III):
            16_384
        default: 0
        }
    }

    /// Opens `path` for decoding.
    ///
    /// - Parameter checksDeclaredLength: throw `.truncated` when the header declares more frames
    ///   than the file holds; false for `AudioFileReader.inspect`, which reports it as damage.
    /// - Throws: `.fileNotFound`, `.permissionDenied`, `.notARegularFile`, `.emptyFile`,
    ///   `.readFailed`, `.unsupportedFormat`, `.corruptData` or `.truncated` (header declares more
    ///   frames than the file holds; WAV, RF64, Wave64, AIFF and CAF only).
    init(path: String, checksDeclaredLength: Bool = true) throws(AudioFileError) {
        self.path = path
        let (fd, fileSize) = try InputFile.open(path: path)

        var info = SF_INFO()
        let opened = SndFileLibrary.open(descriptor: fd, mode: Int32(SFM_READ), info: &info)
        guard let handle = opened.handle else {
            closeOwnedDescriptor(fd)
            throw Self.formatError(path: path, code: opened.errorCode, text: opened.errorText)
        }
        self.fd = fd
        self.fileSize = fileSize
        self.handle = handle
        self.format = info.format
        self.sampleRate = Double(info.samplerate)
        self.channelCount = Int(info.channels)
        self.isSeekable = info.seekable != 0
        self.reportedFrameCount = (info.frames >= 0 && info.frames < Int64.max) ? Int(info.frames) : nil

        self.mpegLengthTag =
            SndFileLibrary.major(info.format) == Int(SF_FORMAT_MPEG)
            ? MPEGLengthTag(ByteReader(fd: fd, fileSize: fileSize)) : nil
        self.declaredFrameCount =
            info.channels > 0
            ? DeclaredFrameCount.read(fd: fd, fileSize: fileSize, format: info.format, channelCount: Int(info.channels))
            : nil

        guard info.samplerate > 0, info.channels > 0 else {
            throw .corruptData(
                path: path,
                reason: "header gives \(info.samplerate) Hz and \(info.channels) channels")
        }
        // Integer samples are delivered as floats scaled by 1/2^(bits-1), i.e. into [-1, 1).
        // (This is libsndfile's default; set explicitly because the reader relies on it.
        // SFC_SET_SCALE_FLOAT_INT_READ only affects sf_read_short/int on float files, which
        // this module never calls.)
        sf_command(handle, Int32(SFC_SET_NORM_FLOAT), nil, Int32(SF_TRUE))

        if checksDeclaredLength, let reported = reportedFrameCount, let declared = declaredFrameCount,
            declared > reported
        {
            throw .truncated(path: path, expectedFrames: declared, availableFrames: reported)
        }
    }

    deinit {
        sf_close(handle)
        closeOwnedDescriptor(fd)
    }

    /// Frame count, from the header when libsndfile knows it, otherwise by decoding the whole file
    /// once (an Ogg stream without its final page, an MPEG stream mpg123 cannot size).
    ///
    /// - Throws: `.corruptData` when the length is unknown and no audio at all decodes.
    func frameCount() throws(AudioFileError) -> Int {
        if let reportedFrameCount { return reportedFrameCount }
        let frames = try decode(startFrame: 0, limit: nil, into: nil)
        guard frames > 0 else {
            throw .corruptData(
                path: path,
                reason: "no audio could be decoded and the stream has no end marker; the file is probably truncated")
        }
        if isSeekable { sf_seek(handle, 0, SEEK_SET) }
        return frames
    }

    /// How many frames the decoded length may fall short of `frameCount()` before the file counts
    /// as truncated, or nil when the count is only an estimate and any length is accepted.
    ///
    /// 0 for PCM, FLAC, Vorbis and Opus (exact counts). For MP3 with a Xing/Info/VBRI tag, one
    /// MPEG-1 Layer III frame plus the decoder delay (1152 + 529 frames), since tags without LAME's
    /// gapless fields count whole frames. MP3 without such a tag: nil (mpg123 estimates).
    var truncationTolerance: Int? {
        guard reportedFrameCount != nil else { return nil }
        guard SndFileLibrary.major(format) == Int(SF_FORMAT_MPEG) else { return 0 }
        return mpegLengthTag != nil ? 1152 + 529 : nil
    }

    /// Header description (frame count as in `frameCount()`). For compressed encodings the bit
    /// rate is the file's average (size × 8 / duration); libsndfile reports no priming or
    /// remainder (it removes them itself), so both are 0.
    func describe() throws(AudioFileError) -> AudioFileInfo {
        let frames = try frameCount()
        let isCompressed = SndFileLibrary.bytesPerSample(of: format) == nil
        let bitRate =
            isCompressed && frames > 0 ? Int((Double(fileSize) * 8 * sampleRate / Double(frames)).rounded()) : nil
        return AudioFileInfo(
            path: path,
            formatName: SndFileLibrary.formatName(of: format),
            codecName: SndFileLibrary.libraryName(ofFormatCode: SndFileLibrary.subtype(format)) ?? "unknown",
            format: SndFileLibrary.writerFormat(of: format),
            sampleRate: sampleRate,
            channelCount: channelCount,
            frameCount: frames,
            bitDepth: SndFileLibrary.bitDepth(of: format),
            bitRate: bitRate
        )
    }

    /// Decodes frames from `startFrame`, at most `limit` of them (nil = to the end of the stream),
    /// deinterleaving into one array per channel.
    ///
    /// - Returns: the channels; fewer than `limit` frames when the stream ends early (the caller
    ///   decides whether that is truncation).
    /// - Throws: `.corruptData` when libsndfile reports a decoding error or cannot seek.
    func read(startFrame: Int, limit: Int?) throws(AudioFileError) -> [[Float]] {
        var channels = [[Float]](repeating: [], count: channelCount)
        // Reserve what the caller expects, but never trust a header for more than ~4 M frames up
        // front: a damaged header must not turn into a huge allocation.
        let expected = limit ?? max(0, (reportedFrameCount ?? 0) - startFrame)
        for index in channels.indices { channels[index].reserveCapacity(min(expected, 1 << 22)) }
        _ = try decode(startFrame: startFrame, limit: limit, into: &channels)
        return channels
    }

    /// Shared decode loop; appends to `channels` when given, otherwise only counts frames.
    private func decode(startFrame: Int, limit: Int?, into channels: UnsafeMutablePointer<[[Float]]>?)
        throws(AudioFileError) -> Int
    {
        let channelCount = channelCount
        if startFrame > 0 { try seek(to: startFrame) }
        let chunkFrames = max(256, 65_536 / channelCount)
        var interleaved = [Float](repeating: 0, count: chunkFrames * channelCount)
        var decoded = 0
        while true {
            let wanted = limit.map { min(chunkFrames, $0 - decoded) } ?? chunkFrames
            if wanted <= 0 { break }
            let got = interleaved.withUnsafeMutableBufferPointer { buffer in
                Int(sf_readf_float(handle, buffer.baseAddress, sf_count_t(wanted)))
            }
            if sf_error(handle) != 0 {
                let total = reportedFrameCount.map { " of \($0)" } ?? ""
                throw .corruptData(
                    path: path,
                    reason: "decoding failed near frame \(startFrame + decoded + max(0, got))\(total): "
                        + SndFileLibrary.errorText(handle))
            }
            if got <= 0 { break }
            if let channels {
                interleaved.withUnsafeBufferPointer { source in
                    for channel in 0..<channelCount {
                        var index = channel
                        for _ in 0..<got {
                            channels.pointee[channel].append(source[index])
                            index += channelCount
                        }
                    }
                }
            }
            decoded += got
        }
        return decoded
    }

    /// Positions the decoder at `frame`, by seeking when possible and by decoding otherwise.
    ///
    /// Lossy formats seek to `seekPrerollFrameCount` frames earlier and decode up to `frame`:
    /// libsndfile 1.2.0 lands on the right frame, but the first frames after an MP3 seek decode
    /// without the bit reservoir (about 6,700 frames differ) and after a Vorbis seek without the
    /// overlap (about 90 frames differ). With the pre-roll, a region reads exactly what a decode from
    /// the start gives.
    func seek(to frame: Int) throws(AudioFileError) {
        if isSeekable {
            let target = max(0, frame - seekPrerollFrameCount)
            guard sf_seek(handle, sf_count_t(target), SEEK_SET) == sf_count_t(target) else {
                throw .corruptData(
                    path: path, reason: "cannot seek to frame \(frame): \(SndFileLibrary.errorText(handle))")
            }
            var left = frame - target
            var scratch = [Float](repeating: 0, count: min(left, 4_096) * channelCount)
            while left > 0 {
                let got = try scratch.withUnsafeMutableBufferPointer { (buffer) throws(AudioFileError) -> Int in
                    try readInterleaved(into: buffer.baseAddress!, frames: min(left, 4_096))
                }
                guard got > 0 else {
                    throw .regionOutOfRange(
                        path: path, startFrame: frame, frameCount: nil, fileFrameCount: frame - left)
                }
                left -= got
            }
            return
        }
        let skipped = try decode(startFrame: 0, limit: frame, into: nil)
        if skipped < frame {
            throw .regionOutOfRange(
                path: path, startFrame: frame, frameCount: nil, fileFrameCount: skipped)
        }
    }

    /// Decodes up to `frames` interleaved frames at the current position into `buffer`; fewer
    /// (0 at the end) when the stream ends.
    ///
    /// - Throws: `.corruptData` when libsndfile reports a decoding error.
    func readInterleaved(into buffer: UnsafeMutablePointer<Float>, frames: Int) throws(AudioFileError) -> Int {
        let got = Int(sf_readf_float(handle, buffer, sf_count_t(frames)))
        if sf_error(handle) != 0 {
            throw .corruptData(path: path, reason: "decoding failed: \(SndFileLibrary.errorText(handle))")
        }
        return max(0, got)
    }

    /// Maps a failed `sf_open_fd` to an error: unrecognised data and unsupported encodings are
    /// `.unsupportedFormat`, an OS error is `.readFailed`, everything else (libsndfile found a
    /// header it could not parse) is `.corruptData`.
    private static func formatError(path: String, code: Int32, text: String) -> AudioFileError {
        switch Int(code) {
        case SF_ERR_UNRECOGNISED_FORMAT, SF_ERR_UNSUPPORTED_ENCODING:
            .unsupportedFormat(path: path, reason: "libsndfile: \(text)")
        case SF_ERR_SYSTEM:
            .readFailed(path: path, reason: "libsndfile: \(text)")
        default:
            .corruptData(path: path, reason: "libsndfile: \(text)")
        }
    }
}

extension SndFileReader: StreamingSession {
    var seeksExactly: Bool { isSeekable }

    /// libsndfile decodes into the caller's buffer; it keeps no buffers of ours.
    var bufferBytes: Int { 0 }

    func seek(toFrame frame: Int) throws(AudioFileError) { try seek(to: frame) }
}

// Control side. Owned FFmpeg demuxing resources (descriptor, AVIOContext, AVFormatContext) that
// free themselves, so FFmpegReader can fail at any step without leaking.

import CFFmpeg
import Foundation

/// A descriptor closed on deinit.
final class FileDescriptor {
    let fd: Int32

    init(_ fd: Int32) {
        self.fd = fd
    }

    deinit {
        closeOwnedDescriptor(fd)
    }
}

/// An opened libavformat demuxer on a descriptor, with its custom I/O.
///
/// `protocol_whitelist` is "none", so a demuxer that would follow references to other files or
/// URLs (playlists, external data references) cannot open anything; only the checked file is read.
final class FFmpegInput {
    /// Probe scores at or below this (`AVPROBE_SCORE_RETRY`, 25 of 100) are guesses that FFmpeg
    /// itself flags as "misdetection possible"; random bytes often reach them. Refused.
    static let minimumProbeScore: Int32 = 26

    /// The demuxer; never nil after a successful init.
    private(set) var context: UnsafeMutablePointer<AVFormatContext>?
    /// Kept alive as long as `context` uses it.
    private let io: FFmpegFileIO

    /// Opens the file behind `fd`.
    ///
    /// - Parameters:
    ///   - fd: open descriptor (not owned).
    ///   - path: for error messages only; FFmpeg never sees it.
    ///   - format: the demuxer to use; nil probes the content (never the file name) and refuses
    ///     low-confidence guesses.
    ///   - options: demuxer options, e.g. `ignore_editlist`.
    /// - Throws: `.unsupportedFormat` when FFmpeg does not recognise the data, `.corruptData` when
    ///   the demuxer rejects its header, `.readFailed` for I/O errors.
    init(
        fd: Int32, path: String, format: UnsafePointer<AVInputFormat>? = nil, options: [String: String] = [:]
    ) throws(AudioFileError) {
        FFmpegLibrary.prepare()
        guard let io = FFmpegFileIO(fd: fd, isWritable: false) else {
            throw .readFailed(path: path, reason: "FFmpeg could not allocate an I/O context")
        }
        self.io = io

        var inputFormat = format
        if inputFormat == nil {
            FFmpegLibrary.clearLastMessage()
            let score = av_probe_input_buffer2(io.context, &inputFormat, nil, nil, 0, 0)
            if score == FFmpegLibrary.invalidData {
                throw .unsupportedFormat(path: path, reason: "FFmpeg: format not recognised")
            }
            if score < 0 {
                throw Self.openError(path: path, code: score, demuxer: nil)
            }
            guard let detected = inputFormat, score >= Self.minimumProbeScore else {
                let guess = inputFormat.map {
                    " (best guess \(String(cString: $0.pointee.name)), score \(score) of 100)"
                }
                throw .unsupportedFormat(path: path, reason: "FFmpeg: format not recognised\(guess ?? "")")
            }
            inputFormat = detected
        }

        var context = avformat_alloc_context()
        guard context != nil else {
            throw .readFailed(path: path, reason: "FFmpeg could not allocate a demuxer")
        }
        context!.pointee.pb = io.context
        var dictionary: OpaquePointer?
        av_dict_set(&dictionary, "protocol_whitelist", "none", 0)
        for (key, value) in options { av_dict_set(&dictionary, key, value, 0) }
        FFmpegLibrary.clearLastMessage()
        // On failure avformat_open_input frees the context (not our custom I/O) and sets it to nil.
        let status = avformat_open_input(&context, "", inputFormat, &dictionary)
        av_dict_free(&dictionary)
        guard status >= 0, context != nil else {
            throw Self.openError(path: path, code: status, demuxer: inputFormat)
        }
        self.context = context
    }

    deinit {
        avformat_close_input(&context)
    }

    /// The demuxer's short name, e.g. "mov,mp4,m4a,3gp,3g2,mj2" or "aac".
    var demuxerName: String {
        guard let format = context?.pointee.iformat, let name = format.pointee.name else { return "" }
        return String(cString: name)
    }

    /// True for the ISO base media file format family (MP4, M4A, MOV, 3GP).
    var isMPEG4: Bool { demuxerName.hasPrefix("mov,") }

    /// A container-level metadata value, e.g. "encoder" or "iTunSMPB".
    func metadata(_ key: String) -> String? {
        FFmpegLibrary.value(of: key, in: context?.pointee.metadata)
    }

    /// The stream at `index`, if it exists.
    func stream(at index: Int32) -> UnsafeMutablePointer<AVStream>? {
        guard let context, index >= 0, index < Int32(context.pointee.nb_streams) else { return nil }
        return context.pointee.streams[Int(index)]
    }

    /// Maps a failed probe or open to an error naming the file.
    static func openError(path: String, code: Int32, demuxer: UnsafePointer<AVInputFormat>?) -> AudioFileError {
        let name = demuxer.map { " (\(String(cString: $0.pointee.name)))" } ?? ""
        let text = FFmpegLibrary.describe(code)
        if code == FFmpegLibrary.noMemory {
            return .corruptData(
                path: path,
                reason: "FFmpeg\(name): the header declares tables larger than the "
                    + "\(FFmpegLibrary.maximumAllocation >> 20) MiB allowed per allocation (\(text))")
        }
        if code == FFmpegLibrary.invalidData || code == FFmpegLibrary.endOfFile {
            let hint = text.contains("moov atom not found") ? "; the file is truncated or was never finished" : ""
            return .corruptData(path: path, reason: "FFmpeg\(name): \(text)\(hint)")
        }
        if code == FFmpegLibrary.decoderNotFound || code == FFmpegLibrary.streamNotFound {
            return .unsupportedFormat(path: path, reason: "FFmpeg\(name): \(text)")
        }
        return .readFailed(path: path, reason: "FFmpeg\(name): \(text)")
    }
}

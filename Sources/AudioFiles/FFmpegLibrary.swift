// Control side. Process-wide FFmpeg set-up shared by FFmpegReader and FFmpegEncoder: the log
// callback that turns FFmpeg's diagnostics into error text, error-code names and an allocation cap.

import CFFmpeg

/// FFmpeg helpers. `prepare()` must run before any other FFmpeg call of this module.
///
/// FFmpeg reports *why* something failed only through its log (for example "moov atom not
/// found"), while the function returns a bare code such as `AVERROR_INVALIDDATA`. A log callback
/// (in the CFFmpeg shim, since Swift cannot receive a `va_list`) therefore keeps the last
/// error-level line per thread; `lastMessage()` hands it to the code that builds the
/// `AudioFileError`. Nothing is printed: the messages reach users inside our errors.
enum FFmpegLibrary {
    /// Largest single allocation FFmpeg may make (`av_max_alloc`), 256 MiB. A header that claims
    /// gigabytes of tables (sample sizes, chunk offsets) fails with ENOMEM instead of allocating
    /// them; real files stay far below it (a 10-hour AAC file's index is about 5 MB).
    static let maximumAllocation = 256 << 20

    /// One-time set-up, run by `prepare()`. Swift runs a global's initializer exactly once.
    private static let setUp: Void = {
        cffmpeg_install_log_callback()
        av_max_alloc(maximumAllocation)
    }()

    /// Installs the log callback and the allocation cap (once per process).
    static func prepare() {
        _ = setUp
    }

    /// Forgets the calling thread's last message, so that `lastMessage()` after the next call
    /// reports only what that call logged.
    static func clearLastMessage() {
        cffmpeg_clear_log_line()
    }

    /// The last error-level line FFmpeg logged on this thread since `clearLastMessage()`, if any,
    /// without trailing newline or full stop. Reading it clears it.
    static func lastMessage() -> String? {
        guard let line = cffmpeg_last_log_line() else { return nil }
        var text = String(cString: line)
        cffmpeg_clear_log_line()
        while text.hasSuffix("\n") || text.hasSuffix(".") || text.hasSuffix(" ") { text.removeLast() }
        return text.isEmpty ? nil : text
    }

    /// Text for an FFmpeg error code: the last logged line when there is one (more specific),
    /// followed by `av_strerror`'s text, e.g. "moov atom not found (Invalid data found when
    /// processing input)".
    static func describe(_ code: Int32) -> String {
        let generic = errorString(code)
        guard let logged = lastMessage() else { return generic }
        return logged == generic ? generic : "\(logged) (\(generic))"
    }

    /// `av_strerror` for a code.
    static func errorString(_ code: Int32) -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        let status = av_strerror(code, &buffer, buffer.count)
        guard status >= 0 else { return "FFmpeg error \(code)" }
        return buffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    }

    /// `AVERROR_EOF`.
    static let endOfFile = cffmpeg_error_eof()
    /// `AVERROR(EAGAIN)`.
    static let again = cffmpeg_error_again()
    /// `AVERROR(ENOMEM)`.
    static let noMemory = cffmpeg_error_no_memory()
    /// `AVERROR_INVALIDDATA`.
    static let invalidData = cffmpeg_error_invalid_data()
    /// `AVERROR_DECODER_NOT_FOUND`.
    static let decoderNotFound = cffmpeg_error_decoder_not_found()
    /// `AVERROR_STREAM_NOT_FOUND`.
    static let streamNotFound = cffmpeg_error_stream_not_found()

    /// The `AVDictionary` value for `key` (exact, case-insensitive match), if present.
    static func value(of key: String, in dictionary: OpaquePointer?) -> String? {
        guard let dictionary, let entry = av_dict_get(dictionary, key, nil, 0), let value = entry.pointee.value else {
            return nil
        }
        return String(cString: value)
    }
}

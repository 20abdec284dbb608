// Control side. Small wrappers around libsndfile's C API shared by the reader and the writer:
// the lock that keeps libsndfile's global error slot ours, format-code names and properties.

import CSndFile
import Foundation
import Locking

/// libsndfile helpers. libsndfile reports a failed `sf_open` through one process-wide error
/// variable; every open in this module happens under `openLock` so that the text read back
/// afterwards belongs to the same call.
enum SndFileLibrary {
    /// Serialises `sf_open*` together with the `sf_error(nil)` / `sf_strerror(nil)` read after it.
    static let openLock = Lock()

    /// Result of an `sf_open*` attempt, with libsndfile's error code and text when it failed.
    struct OpenResult {
        var handle: OpaquePointer?
        var errorCode: Int32
        var errorText: String
    }

    /// Opens libsndfile on a duplicate of `fd` that libsndfile owns; `fd` stays the caller's.
    ///
    /// libsndfile 1.0.31 and later close the descriptor given to a failed `sf_open_fd` even when
    /// told not to (libsndfile issue 949). The caller's own close would then be a second one, and
    /// between the two another thread may have been given the same number. Handing libsndfile a
    /// duplicate with `close_desc` set makes its ownership whole: it closes the duplicate on a
    /// failed open and in `sf_close`, and the caller closes `fd` exactly once.
    static func open(descriptor fd: Int32, mode: Int32, info: inout SF_INFO) -> OpenResult {
        let owned = fcntl(fd, F_DUPFD_CLOEXEC, 0)
        guard owned >= 0 else {
            return OpenResult(
                handle: nil, errorCode: Int32(SF_ERR_SYSTEM), errorText: String(cString: strerror(errno)))
        }
        return open { sf_open_fd(owned, mode, &info, Int32(SF_TRUE)) }
    }

    /// Runs one `sf_open*` call under the lock and captures its error.
    static func open(_ body: () -> OpaquePointer?) -> OpenResult {
        openLock.withLock { _ in
            let handle = body()
            if handle != nil {
                return OpenResult(handle: handle, errorCode: 0, errorText: "")
            }
            return OpenResult(handle: nil, errorCode: sf_error(nil), errorText: errorText(nil))
        }
    }

    /// libsndfile's message for the handle's current error (or the last failed open for nil),
    /// without a leading "Error : " prefix and trailing full stop.
    static func errorText(_ handle: OpaquePointer?) -> String {
        guard let cText = sf_strerror(handle) else { return "unknown libsndfile error" }
        var text = String(cString: cText)
        if text.hasPrefix("Error : ") { text.removeFirst("Error : ".count) }
        while text.hasSuffix(".") || text.hasSuffix("\n") { text.removeLast() }
        return text.isEmpty ? "unknown libsndfile error" : text
    }

    /// Major container bits of a libsndfile format code.
    static func major(_ format: Int32) -> Int { Int(format) & Int(SF_FORMAT_TYPEMASK) }

    /// Sample encoding / codec bits of a libsndfile format code.
    static func subtype(_ format: Int32) -> Int { Int(format) & Int(SF_FORMAT_SUBMASK) }

    /// libsndfile's own name for a major or subtype code ("WAV (Microsoft)", "Signed 16 bit PCM").
    static func libraryName(ofFormatCode code: Int) -> String? {
        var info = SF_FORMAT_INFO(format: Int32(truncatingIfNeeded: code), name: nil, extension: nil)
        let status = sf_command(nil, Int32(SFC_GET_FORMAT_INFO), &info, Int32(MemoryLayout<SF_FORMAT_INFO>.size))
        guard status == 0, let name = info.name else { return nil }
        return String(cString: name)
    }

    /// The name `AudioFileInfo.formatName` reports: the writer's names for the seven formats this
    /// module writes, libsndfile's name for everything else.
    static func formatName(of format: Int32) -> String {
        if let known = writerFormat(of: format) { return known.displayName }
        let major = major(format)
        let subtype = subtype(format)
        switch major {
        case Int(SF_FORMAT_WAVEX): return "WAV"
        case Int(SF_FORMAT_MPEG):
            switch subtype {
            case Int(SF_FORMAT_MPEG_LAYER_I): return "MP1"
            case Int(SF_FORMAT_MPEG_LAYER_II): return "MP2"
            default: return "MPEG"
            }
        case Int(SF_FORMAT_OGG) where subtype == Int(SF_FORMAT_FLAC): return "Ogg FLAC"
        default: return libraryName(ofFormatCode: major) ?? "unknown container"
        }
    }

    /// The writer's format matching a file's format code, or nil.
    static func writerFormat(of format: Int32) -> AudioFileFormat? {
        switch (major(format), subtype(format)) {
        case (Int(SF_FORMAT_WAV), _), (Int(SF_FORMAT_WAVEX), _): .wav
        case (Int(SF_FORMAT_AIFF), _): .aiff
        case (Int(SF_FORMAT_CAF), _): .caf
        case (Int(SF_FORMAT_FLAC), _): .flac
        case (Int(SF_FORMAT_OGG), Int(SF_FORMAT_VORBIS)): .oggVorbis
        case (Int(SF_FORMAT_OGG), Int(SF_FORMAT_OPUS)): .opus
        case (Int(SF_FORMAT_MPEG), Int(SF_FORMAT_MPEG_LAYER_III)): .mp3
        default: nil
        }
    }

    /// Bits per stored sample for PCM, float and lossless encodings; nil for lossy codecs.
    static func bitDepth(of format: Int32) -> Int? {
        switch subtype(format) {
        case Int(SF_FORMAT_PCM_S8), Int(SF_FORMAT_PCM_U8), Int(SF_FORMAT_ULAW), Int(SF_FORMAT_ALAW): 8
        case Int(SF_FORMAT_PCM_16), Int(SF_FORMAT_ALAC_16), Int(SF_FORMAT_DWVW_16): 16
        case Int(SF_FORMAT_ALAC_20): 20
        case Int(SF_FORMAT_PCM_24), Int(SF_FORMAT_ALAC_24), Int(SF_FORMAT_DWVW_24): 24
        case Int(SF_FORMAT_PCM_32), Int(SF_FORMAT_FLOAT), Int(SF_FORMAT_ALAC_32): 32
        case Int(SF_FORMAT_DOUBLE): 64
        default: nil
        }
    }

    /// Bytes one sample occupies in the data chunk, for encodings with a fixed size; nil for
    /// block-based or compressed encodings.
    static func bytesPerSample(of format: Int32) -> Int? {
        switch subtype(format) {
        case Int(SF_FORMAT_PCM_S8), Int(SF_FORMAT_PCM_U8), Int(SF_FORMAT_ULAW), Int(SF_FORMAT_ALAW): 1
        case Int(SF_FORMAT_PCM_16): 2
        case Int(SF_FORMAT_PCM_24): 3
        case Int(SF_FORMAT_PCM_32), Int(SF_FORMAT_FLOAT): 4
        case Int(SF_FORMAT_DOUBLE): 8
        default: nil
        }
    }
}

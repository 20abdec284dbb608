// Control side. An AVIOContext over a descriptor this module opened itself, so FFmpeg never parses
// a path (no "concat:", "http:" or other protocol prefixes) and reads exactly the checked file.

import CFFmpeg
import Foundation

/// Custom I/O for libavformat on an open descriptor. Reads and writes use `pread`/`pwrite` at the
/// context's own position, so two contexts on one descriptor (the reader opens the file twice to
/// see it with and without edit lists) never disturb each other.
///
/// Owns the `AVIOContext` and its buffer, not the descriptor. Not thread-safe: one user at a time.
final class FFmpegFileIO {
    /// Bytes FFmpeg reads or writes per callback.
    private static let bufferSize = 64 * 1024

    /// The context to put into `AVFormatContext.pb`.
    private(set) var context: UnsafeMutablePointer<AVIOContext>?
    private let fd: Int32
    /// Byte offset of the next read or write.
    private var position: Int64 = 0
    /// The first `errno` a write failed with, for the error message.
    private(set) var writeErrno: Int32 = 0

    /// - Parameters:
    ///   - fd: an open descriptor, readable (and writable when `isWritable`); not closed here.
    ///   - isWritable: true for muxing, false for demuxing.
    /// - Returns: nil when FFmpeg cannot allocate the context.
    init?(fd: Int32, isWritable: Bool) {
        self.fd = fd
        guard let buffer = av_malloc(Self.bufferSize) else { return nil }
        let opaque = Unmanaged.passUnretained(self).toOpaque()
        let context = avio_alloc_context(
            buffer.assumingMemoryBound(to: UInt8.self), Int32(Self.bufferSize), isWritable ? 1 : 0, opaque,
            isWritable ? nil : Self.readCallback, isWritable ? Self.writeCallback : nil, Self.seekCallback)
        guard let context else {
            av_free(buffer)
            return nil
        }
        self.context = context
    }

    deinit {
        if context != nil {
            // FFmpeg may have replaced the buffer; free the one the context holds now.
            av_freep(&context!.pointee.buffer)
            avio_context_free(&context)
        }
    }

    /// Overwrites the first occurrence of `old` within the first `window` bytes of the file with
    /// `new` (same length), for a tag completed after the rest was written. Returns false when
    /// `old` is not found or the write fails.
    func replace(_ old: [UInt8], with new: [UInt8], window: Int = 1 << 20) -> Bool {
        guard old.count == new.count, !old.isEmpty else { return false }
        var bytes = [UInt8](repeating: 0, count: window)
        let count = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress, window, 0) }
        guard count >= old.count else { return false }
        guard let start = (0...(count - old.count)).first(where: { bytes[$0..<($0 + old.count)].elementsEqual(old) })
        else { return false }
        return new.withUnsafeBytes { pwrite(fd, $0.baseAddress, new.count, off_t(start)) } == new.count
    }

    private static func io(_ opaque: UnsafeMutableRawPointer?) -> FFmpegFileIO {
        Unmanaged<FFmpegFileIO>.fromOpaque(opaque!).takeUnretainedValue()
    }

    private static let readCallback:
        @convention(c) (UnsafeMutableRawPointer?, UnsafeMutablePointer<UInt8>?, Int32) -> Int32 = {
            opaque, buffer, size in
            let io = FFmpegFileIO.io(opaque)
            while true {
                let count = pread(io.fd, buffer, Int(size), off_t(io.position))
                if count > 0 {
                    io.position += Int64(count)
                    return Int32(count)
                }
                if count == 0 { return FFmpegLibrary.endOfFile }
                if errno == EINTR { continue }
                return cffmpeg_error_from_errno(errno)
            }
        }

    private static let writeCallback:
        @convention(c) (UnsafeMutableRawPointer?, UnsafeMutablePointer<UInt8>?, Int32) -> Int32 = {
            opaque, buffer, size in
            let io = FFmpegFileIO.io(opaque)
            var done = 0
            while done < Int(size) {
                let count = pwrite(io.fd, buffer.map { $0 + done }, Int(size) - done, off_t(io.position))
                if count < 0 {
                    if errno == EINTR { continue }
                    if io.writeErrno == 0 { io.writeErrno = errno }
                    return cffmpeg_error_from_errno(errno)
                }
                done += count
                io.position += Int64(count)
            }
            return size
        }

    private static let seekCallback: @convention(c) (UnsafeMutableRawPointer?, Int64, Int32) -> Int64 = {
        opaque, offset, whence in
        let io = FFmpegFileIO.io(opaque)
        var status = stat()
        let size: Int64 = fstat(io.fd, &status) == 0 ? Int64(status.st_size) : -1
        if whence == cffmpeg_seek_size() {
            return size >= 0 ? size : Int64(cffmpeg_error_from_errno(ESPIPE))
        }
        let target: Int64
        switch whence & ~cffmpeg_seek_force() {
        case SEEK_SET: target = offset
        case SEEK_CUR: target = io.position + offset
        case SEEK_END where size >= 0: target = size + offset
        default: return Int64(cffmpeg_error_from_errno(EINVAL))
        }
        guard target >= 0 else { return Int64(cffmpeg_error_from_errno(EINVAL)) }
        io.position = target
        return target
    }
}

// Control side. Opens a file for decoding with the checks both decoders share: it exists, may be
// read, is a regular file and is not empty. Used by SndFileReader and FFmpegReader.

import Foundation

/// The first step of every decode: a read-only descriptor on a non-empty regular file.
enum InputFile {
    /// Opens `path` read-only.
    ///
    /// The descriptor is opened here (not by a library) so that "not found", "permission denied",
    /// "is a directory" and "empty" are told apart from format errors, and so that the checks and
    /// the decoding see the same file. `O_NONBLOCK` keeps a FIFO from hanging the open; it has no
    /// effect on regular files.
    ///
    /// - Returns: the descriptor (the caller closes it) and the file's size in bytes (> 0).
    /// - Throws: `.fileNotFound`, `.permissionDenied`, `.notARegularFile`, `.emptyFile` or
    ///   `.readFailed`.
    static func open(path: String) throws(AudioFileError) -> (fd: Int32, size: Int) {
        let fd = Foundation.open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { throw openError(path: path, errno: errno) }
        var status = stat()
        guard fstat(fd, &status) == 0 else {
            let error = AudioFileError.readFailed(path: path, reason: String(cString: strerror(errno)))
            closeOwnedDescriptor(fd)
            throw error
        }
        if let kind = FileKind.nonRegularDescription(mode: status.st_mode) {
            closeOwnedDescriptor(fd)
            throw .notARegularFile(path: path, kind: kind)
        }
        let size = Int(status.st_size)
        guard size > 0 else {
            closeOwnedDescriptor(fd)
            throw .emptyFile(path: path)
        }
        return (fd, size)
    }

    /// Maps `open(2)` failures to the error the user should see.
    static func openError(path: String, errno code: Int32) -> AudioFileError {
        switch code {
        case ENOENT, ENOTDIR: .fileNotFound(path: path)
        case EACCES, EPERM: .permissionDenied(path: path)
        default: .readFailed(path: path, reason: String(cString: strerror(code)))
        }
    }
}

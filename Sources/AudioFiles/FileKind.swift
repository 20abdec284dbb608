// Control side. Names the kind of a non-regular file for error messages; shared by the reader (regular
// files only) and the writer's `OutputDestination` (which also writes through devices and FIFOs).

import Foundation

/// File-type checks on `stat` modes.
public enum FileKind {
    /// "a directory", "a FIFO", … for a non-regular file; nil for a regular file.
    static func nonRegularDescription(mode: mode_t) -> String? {
        switch mode & S_IFMT {
        case S_IFREG: nil
        case S_IFDIR: "a directory"
        case S_IFIFO: "a FIFO"
        case S_IFCHR, S_IFBLK: "a device"
        case S_IFSOCK: "a socket"
        default: "not a regular file"
        }
    }

    /// The description for whatever exists at `path` (following symlinks) when it is not a regular
    /// file; nil when it is a regular file or nothing exists there.
    public static func nonRegularDescription(path: String) -> String? {
        var status = stat()
        guard stat(path, &status) == 0 else { return nil }
        return nonRegularDescription(mode: status.st_mode)
    }

    /// Same check on an open descriptor; nil for a regular file or when `fstat` fails.
    static func nonRegularDescription(fd: Int32) -> String? {
        var status = stat()
        guard fstat(fd, &status) == 0 else { return nil }
        return nonRegularDescription(mode: status.st_mode)
    }
}

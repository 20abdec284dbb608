// Control side (or a recorder's disk thread). The one rule for every file Soundstage writes (audio
// files, recordings, patches): devices and FIFOs are written through, `-` is standard output, a
// symbolic link's target is written, and a regular file is replaced only once the write is complete.

import Foundation
import Locking

/// Where a writer's bytes go, and the seekable regular file they are written to first.
///
/// Encoders (libsndfile, FFmpeg) need to seek back to finish a header, so they always write to
/// `descriptor`, a regular file:
///
/// | destination | working file | at `commit()` |
/// | --- | --- | --- |
/// | a regular file, or nothing yet | `.NAME.partial-PID-N` beside it | `fsync`, `rename` over the target, `fsync` of the folder |
/// | nothing yet, with `.inPlaceWhenNew` (recordings) | the target itself | `fsync` |
/// | `-` (standard output), a character device, a FIFO | a spool file in the temporary folder | copied through to the sink (opened without truncation), spool removed |
/// | a symbolic link | as for what it points to (the link stays a link) | as for the target |
///
/// A directory, a block device or a socket is refused before anything is created. `discard()`
/// removes a working file that is not the target, so a failed or abandoned write leaves the old
/// file (or nothing) in place, never a half-written one.
///
/// Not thread-safe: one owner (the writer holding it) calls `commit()` or `discard()` once.
public struct OutputDestination: Sendable {
    /// What happens to a target that does not exist yet.
    public enum Replacement: Sendable {
        /// Always write beside the target and rename when complete.
        case whenComplete
        /// Write a new file in place, so that a crash leaves what was written where the user looks
        /// (recordings); an existing file is still replaced only when complete.
        case inPlaceWhenNew
    }

    /// What the destination is.
    public enum Sink: Sendable, Equatable {
        /// `-`: the process's standard output.
        case standardOutput
        /// A character device or FIFO, written through; `kind` is "a device" or "a FIFO".
        case passThrough(kind: String)
        /// A regular file (existing or not).
        case file
    }

    /// The path as given, for messages.
    public let path: String
    /// The path that is finally written: symbolic links followed; "-" for standard output.
    public let targetPath: String
    public let sink: Sink
    /// The regular file the encoder writes (the target itself only for a new in-place file).
    public let workingPath: String
    /// Open read-write on `workingPath`; closed by `commit()` or `discard()`.
    public let descriptor: Int32

    /// True when `path` is `-`, a character device or a FIFO (following symbolic links): a stream
    /// with no file name to choose a format from.
    public static func isStream(_ path: String) -> Bool {
        streamDescription(path) != nil
    }

    /// "standard output", "a FIFO" or "a device" when `path` is a stream; nil otherwise.
    public static func streamDescription(_ path: String) -> String? {
        if path == "-" { return "standard output" }
        var status = stat()
        guard stat(path, &status) == 0 else { return nil }
        switch status.st_mode & S_IFMT {
        case S_IFIFO: return "a FIFO"
        case S_IFCHR: return "a device"
        default: return nil
        }
    }

    /// Checks the destination and creates the working file. Nothing at `path` is touched yet.
    ///
    /// - Throws: `.notARegularFile` for a directory, block device or socket; `.permissionDenied`
    ///   when the target or its folder is not writable; `.writeFailed` when the folder does not
    ///   exist or the working file cannot be created.
    public init(path: String, replacement: Replacement = .whenComplete) throws(AudioFileError) {
        self.path = path
        if path == "-" {
            targetPath = "-"
            sink = .standardOutput
            (workingPath, descriptor) = try Self.createSpool(path: path)
            return
        }
        // stat follows links in the kernel, which also resolves /dev/stdout and /proc/self/fd/N.
        var status = stat()
        let exists = stat(path, &status) == 0
        let type = status.st_mode & S_IFMT
        if exists, type == S_IFCHR || type == S_IFIFO {
            guard access(path, W_OK) == 0 else { throw .permissionDenied(path: path) }
            targetPath = path
            sink = .passThrough(kind: type == S_IFIFO ? "a FIFO" : "a device")
            (workingPath, descriptor) = try Self.createSpool(path: path)
            return
        }
        if exists, let kind = FileKind.nonRegularDescription(mode: status.st_mode) {
            throw .notARegularFile(path: path, kind: kind == "a device" ? "a block device" : kind)
        }
        // An existing file's real path; a dangling link's eventual target; else the path itself.
        let target = exists ? (Self.realPath(path) ?? path) : Self.followingLinks(path)
        targetPath = target
        sink = .file
        if !exists, replacement == .inPlaceWhenNew {
            let fd = open(target, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o666)
            if fd >= 0 {
                (workingPath, descriptor) = (target, fd)
                return
            }
            guard errno == EEXIST else { throw Self.createError(path: path, errno: errno) }
        }
        (workingPath, descriptor) = try Self.createBeside(
            target: target, path: path, mode: exists ? status.st_mode : nil)
    }

    /// True when the working file is not the target (a spool or a file beside it).
    public var isTemporary: Bool { workingPath != targetPath }

    /// Makes the written bytes the destination's content and closes the descriptor: fsync and
    /// rename over the target, or copy the spool through to the device, FIFO or standard output
    /// (blocking until a FIFO has a reader). On failure the working file is removed (unless it is
    /// the target) and the target is left as it was.
    ///
    /// - Throws: `.writeFailed` naming `path`, with the system's reason.
    public func commit() throws(AudioFileError) {
        defer { closeOwnedDescriptor(descriptor) }
        switch sink {
        case .file:
            // A failed flush or rename leaves the target as it was and no working file.
            guard fsync(descriptor) == 0 else {
                let code = errno
                if isTemporary { unlink(workingPath) }
                throw failure("could not flush the file to disk", code)
            }
            guard isTemporary else { return }
            guard rename(workingPath, targetPath) == 0 else {
                let code = errno
                unlink(workingPath)
                throw failure("could not rename it into place", code)
            }
            let folder = open(Self.folder(of: targetPath), O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            if folder >= 0 {
                fsync(folder)
                closeOwnedDescriptor(folder)
            }
        case .standardOutput, .passThrough:
            defer { unlink(workingPath) }
            let output = sink == .standardOutput ? dup(STDOUT_FILENO) : open(targetPath, O_WRONLY | O_CLOEXEC)
            guard output >= 0 else { throw failure("could not open it for writing", errno) }
            defer { closeOwnedDescriptor(output) }
            try copy(to: output)
        }
    }

    /// Abandons the write: closes the descriptor and removes the working file unless it is the
    /// target. The target is left as it was.
    public func discard() {
        closeOwnedDescriptor(descriptor)
        if isTemporary { unlink(workingPath) }
    }

    /// Abandons the write as `discard()` does and, when the working file is the target itself (a new
    /// file written in place), removes it too: for a write that left nothing worth keeping. The file
    /// is removed only while the path still names the file this destination created.
    public func discardRemovingNewFile() {
        if !isTemporary, sink == .file {
            var mine = stat()
            var there = stat()
            if fstat(descriptor, &mine) == 0, lstat(workingPath, &there) == 0, mine.st_dev == there.st_dev,
                mine.st_ino == there.st_ino
            {
                unlink(workingPath)
            }
        }
        discard()
    }

    /// Writes `data` to `path` under the same rule (patch files and other small text outputs).
    public static func write(_ data: Data, to path: String) throws(AudioFileError) {
        let destination = try OutputDestination(path: path)
        let failed: Int32? = data.withUnsafeBytes { bytes in
            var done = 0
            while done < bytes.count {
                let count = Foundation.write(destination.descriptor, bytes.baseAddress! + done, bytes.count - done)
                if count < 0 {
                    if errno == EINTR { continue }
                    return errno
                }
                done += count
            }
            return nil
        }
        if let failed {
            destination.discard()
            throw destination.failure("could not write", failed)
        }
        try destination.commit()
    }

    /// The file a write to `path` finally changes: relative paths made absolute, `.` and `..` gone and
    /// every symbolic link followed, in the folders and in the name (even one pointing to nothing
    /// yet). Two paths with the same resolved target write the same file; `-` stays `-`.
    public static func resolvedTarget(of path: String) -> String {
        guard path != "-" else { return path }
        var absolute = followingLinks(path)
        if !absolute.hasPrefix("/") { absolute = FileManager.default.currentDirectoryPath + "/" + absolute }
        var folders = absolute.split(separator: "/").map(String.init)
        let name = folders.popLast() ?? ""
        // The deepest folder that exists is resolved by the system (links, then `..`); the rest, which
        // does not exist yet, by its spelling.
        var missing: [String] = []
        var resolved: String?
        while resolved == nil {
            resolved = realPath("/" + folders.joined(separator: "/"))
            if resolved == nil, let last = folders.popLast() { missing.insert(last, at: 0) }
            if folders.isEmpty, resolved == nil { resolved = "/" }
        }
        var parts = (resolved ?? "/").split(separator: "/").map(String.init)
        for part in missing where part != "." {
            if part == ".." { _ = parts.popLast() } else { parts.append(part) }
        }
        return "/" + (parts + [name]).joined(separator: "/")
    }

    // MARK: Private

    /// Copies the working file from its start to `output`.
    private func copy(to output: Int32) throws(AudioFileError) {
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        var offset: off_t = 0
        while true {
            let count = buffer.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, $0.count, offset) }
            if count < 0 {
                if errno == EINTR { continue }
                throw failure("could not read back the spooled output", errno)
            }
            if count == 0 { return }
            offset += off_t(count)
            var done = 0
            while done < count {
                let written = buffer.withUnsafeBytes { Foundation.write(output, $0.baseAddress! + done, count - done) }
                if written < 0 {
                    if errno == EINTR { continue }
                    throw failure("could not write", errno)
                }
                done += written
            }
        }
    }

    private func failure(_ what: String, _ code: Int32) -> AudioFileError {
        .writeFailed(path: path, reason: "\(what): \(String(cString: strerror(code)))")
    }

    /// `path` with every symbolic link in its last component followed (up to 40 links) when the
    /// final target does not exist yet; relative links resolve against their own folder.
    static func followingLinks(_ path: String) -> String {
        var current = path
        for _ in 0..<40 {
            var status = stat()
            guard lstat(current, &status) == 0, status.st_mode & S_IFMT == S_IFLNK else { return current }
            var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
            let length = readlink(current, &buffer, buffer.count - 1)
            guard length > 0 else { return current }
            let link = String(decoding: buffer[0..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
            current = link.hasPrefix("/") ? link : folder(of: current) + "/" + link
        }
        return current
    }

    private static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    private static func folder(of path: String) -> String {
        let url = URL(fileURLWithPath: path)
        return url.deletingLastPathComponent().path
    }

    /// Counts working files made by this process, so that two writers never share a name.
    private static let counter = AtomicCounter()

    /// `.NAME.partial-PID-N` in the target's folder, with the replaced file's permissions.
    private static func createBeside(target: String, path: String, mode: mode_t?) throws(AudioFileError)
        -> (String, Int32)
    {
        let url = URL(fileURLWithPath: target)
        removeAbandonedWorkingFiles(of: url)
        let name = workingPrefix(of: url.lastPathComponent) + "\(getpid())-\(counter.next())"
        let working = url.deletingLastPathComponent().appendingPathComponent(name).path
        let fd = open(working, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o666)
        guard fd >= 0 else { throw createError(path: path, errno: errno) }
        if let mode { fchmod(fd, mode & 0o7777) }
        return (working, fd)
    }

    /// Longest name the working file's suffix (`.partial-` + a pid + `-` + a counter) may need.
    private static let workingSuffixReserve = ".partial-".utf8.count + 10 + 1 + 10

    /// `.NAME.partial-` for a target named `name`. A name too long to take the prefix and suffix within
    /// `NAME_MAX` (255 bytes) is cut, at a character boundary, so that a target whose own name fits
    /// can always be replaced.
    static func workingPrefix(of name: String) -> String {
        let room = 255 - 1 - workingSuffixReserve
        guard name.utf8.count > room else { return ".\(name).partial-" }
        var cut = ""
        for character in name {
            guard cut.utf8.count + String(character).utf8.count <= room else { break }
            cut.append(character)
        }
        return ".\(cut).partial-"
    }

    /// Removes `.NAME.partial-PID-N` files of `target` left by writers that were killed (SIGKILL, a
    /// crash): this user's regular files whose process no longer exists. Another live writer's is kept.
    static func removeAbandonedWorkingFiles(of target: URL) {
        let folder = target.deletingLastPathComponent().path
        let prefix = workingPrefix(of: target.lastPathComponent)
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder) else { return }
        for name in names where name.hasPrefix(prefix) {
            let parts = name.dropFirst(prefix.count).split(separator: "-", omittingEmptySubsequences: false)
            guard parts.count == 2, let pid = pid_t(parts[0]), pid > 0, Int(parts[1]) != nil, pid != getpid(),
                kill(pid, 0) != 0, errno == ESRCH
            else { continue }
            let path = folder + "/" + name
            var info = stat()
            guard lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG, info.st_uid == geteuid() else { continue }
            unlink(path)
        }
    }

    /// An unnamed-looking spool file in the temporary folder (`TMPDIR`, else /tmp).
    private static func createSpool(path: String) throws(AudioFileError) -> (String, Int32) {
        let folder = ProcessInfo.processInfo.environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        var template = Array("\(folder)/soundstage-spool-XXXXXX".utf8CString)
        let fd = mkstemp(&template)
        guard fd >= 0 else {
            throw .writeFailed(
                path: path, reason: "could not create a spool file in \(folder): \(String(cString: strerror(errno)))")
        }
        return (String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self), fd)
    }

    /// Whether `path` (empty: the working directory) names a folder.
    private static func isFolder(_ path: String) -> Bool {
        var info = stat()
        return stat(path.isEmpty ? "." : path, &info) == 0 && info.st_mode & S_IFMT == S_IFDIR
    }

    /// Maps `open(2)` failures when creating a file for `path`.
    static func createError(path: String, errno code: Int32) -> AudioFileError {
        switch code {
        case EACCES, EPERM: .permissionDenied(path: path)
        case EROFS: .writeFailed(path: path, reason: "its file system is read-only")
        case EISDIR: .notARegularFile(path: path, kind: "a directory")
        case ENOENT, ENOTDIR:
            // A folder that exists but makes no files (/proc) also answers ENOENT.
            isFolder((path as NSString).deletingLastPathComponent)
                ? .writeFailed(path: path, reason: "its folder takes no new files (\(String(cString: strerror(code))))")
                : .writeFailed(path: path, reason: "its directory does not exist")
        default: .writeFailed(path: path, reason: String(cString: strerror(code)))
        }
    }
}

/// A process-wide counter for unique working-file names.
private final class AtomicCounter: Sendable {
    private let value = Locked(0)

    func next() -> Int {
        value.withLock { value in
            value += 1
            return value
        }
    }
}

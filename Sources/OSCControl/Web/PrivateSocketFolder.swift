// Control side. The private folder (mode 0700) that holds the HTTP server's Unix socket.
import Foundation

/// A folder `soundstage-http-<pid>-XXXXXX` in the temporary directory. A clean stop removes it; an engine
/// killed outright (SIGKILL, a crash) cannot, so each new one first removes those whose engine is gone.
enum PrivateSocketFolder {
    static let prefix = "soundstage-http-"
    static let socketName = "http.sock"

    /// Makes a new folder for this process in `directory` (default: the temporary directory), after
    /// sweeping abandoned ones there; nil when it cannot be made.
    static func make(in directory: String = NSTemporaryDirectory()) -> String? {
        sweepAbandoned(in: directory)
        let base = directory.hasSuffix("/") ? directory : directory + "/"
        var template = Array((base + prefix + "\(getpid())-XXXXXX").utf8CString)
        return template.withUnsafeMutableBufferPointer { buffer in
            guard let start = buffer.baseAddress else { return nil }
            return mkdtemp(start).map { String(cString: $0) }
        }
    }

    /// Removes this user's folders whose process no longer exists (their socket, then the folder; a folder
    /// holding anything else stays). Returns the paths removed.
    @discardableResult
    static func sweepAbandoned(in directory: String) -> [String] {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return [] }
        let base = directory.hasSuffix("/") ? directory : directory + "/"
        var removed: [String] = []
        for name in names {
            guard let pid = owner(ofFolderNamed: name), pid != getpid(), !isAlive(pid) else { continue }
            let path = base + name
            var info = stat()
            guard lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFDIR, info.st_uid == geteuid() else { continue }
            let socket = path + "/" + socketName
            var socketInfo = stat()
            if lstat(socket, &socketInfo) == 0, socketInfo.st_mode & S_IFMT == S_IFSOCK { unlink(socket) }
            if rmdir(path) == 0 { removed.append(path) }
        }
        return removed
    }

    /// The process id in a folder name `soundstage-http-<pid>-XXXXXX`, or nil for any other name.
    static func owner(ofFolderNamed name: String) -> pid_t? {
        guard name.hasPrefix(prefix) else { return nil }
        let parts = name.dropFirst(prefix.count).split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 2, parts[1].count == 6, let pid = pid_t(parts[0]), pid > 0 else { return nil }
        return pid
    }

    private static func isAlive(_ pid: pid_t) -> Bool {
        kill(pid, 0) == 0 || errno != ESRCH
    }
}

// Control side. jackd2 keeps JACK metadata in one Berkeley DB per user (`jack_db-UID` in /dev/shm).
// libjack opens it in a process when the process opens its first client and closes it when the last
// client closes. The clean exit of any jackd of the user deletes the files; whoever opens the store
// next creates new ones. A process that had it open goes on reading and writing the deleted copy:
// what it publishes is seen by no other process, and it sees nothing they publish. The host then
// reads and writes the store through `jack_property`, a process of its own that opens the current
// copy, until its client opens again.
import Foundation
import Locking
import Synchronization

enum JackMetadataStore {
    /// The store file this process's libjack has open, found through the process's descriptors: its
    /// path and whether that file was deleted. Nil when no store is open (no client, or a libjack
    /// without one, such as PipeWire's). The descriptor found is remembered, so a check is one
    /// `readlink` and opens no descriptor (a transient one would show in the process's count).
    static func processCopy() -> (path: String, isDeleted: Bool)? {
        if JackLibraryKind.current == .pipeWire { return nil }
        let known = storeDescriptor.withLock { $0 }
        if let known, let copy = storeCopy(ofDescriptor: known) { return copy }
        guard let directory = opendir("/proc/self/fd") else { return nil }
        defer { closedir(directory) }
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) {
                String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self)
            }
            guard let descriptor = Int32(name), let copy = storeCopy(ofDescriptor: descriptor) else { continue }
            storeDescriptor.withLock { $0 = descriptor }
            return copy
        }
        return nil
    }

    /// The descriptor the store was last found under (libjack may close it and the number be reused;
    /// each use checks what it names).
    private static let storeDescriptor = Locked<Int32?>(nil)

    private static func storeCopy(ofDescriptor descriptor: Int32) -> (path: String, isDeleted: Bool)? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink("/proc/self/fd/\(descriptor)", &buffer, buffer.count - 1)
        guard count > 0 else { return nil }
        return storeCopy(fromLink: String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self))
    }

    /// The store file a descriptor link names (`…/jack_db-UID/metadata.db`, with the kernel's
    /// " (deleted)" once the file is gone), nil for any other file.
    static func storeCopy(fromLink target: String) -> (path: String, isDeleted: Bool)? {
        let deletedMark = " (deleted)"
        let isDeleted = target.hasSuffix(deletedMark)
        let path = isDeleted ? String(target.dropLast(deletedMark.count)) : target
        let parts = path.split(separator: "/")
        guard parts.count >= 2, parts[parts.count - 1] == "metadata.db", parts[parts.count - 2].hasPrefix("jack_db-")
        else { return nil }
        return (path, isDeleted)
    }

    /// Which file is at `path` now (device and inode), nil when none is.
    static func identity(ofFileAt path: String) -> FileIdentity? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return FileIdentity(device: UInt64(info.st_dev), inode: UInt64(info.st_ino))
    }

    struct FileIdentity: Equatable, Sendable {
        var device: UInt64
        var inode: UInt64
    }

    /// `jack_property` run against one server, with a time limit (a tool that hangs is killed).
    struct Tool: Sendable {
        let executable: String
        let server: String

        /// Nil when jackd2's `jack_property` is not installed.
        init?(server: String) {
            let candidates =
                (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin").split(separator: ":").map {
                    "\($0)/jack_property"
                } + ["/usr/bin/jack_property"]
            guard let found = candidates.first(where: { access($0, X_OK) == 0 }) else { return nil }
            executable = found
            self.server = server
        }

        func set(subject: String, key: String, value: String) -> Bool {
            run(["-s", "--", subject, key, value, "text/plain"]) != nil
        }

        func remove(subject: String, key: String) -> Bool {
            run(["-d", "--", subject, key]) != nil
        }

        /// Every subject's properties: subject (UUID text) → key → value. Nil when the tool failed.
        func listAll() -> [String: [String: String]]? {
            run(["-l"]).map(Self.parseListing)
        }

        /// Reads `jack_property -l`: a subject's UUID on a line of its own, then one line per property,
        /// `key: K value: V type: T` (no ` type:` part for a property without a type). Keys are URIs
        /// and hold no spaces; a value that holds line breaks goes on over the lines that follow.
        static func parseListing(_ text: String) -> [String: [String: String]] {
            var result: [String: [String: String]] = [:]
            var subject: String?
            var pending: (key: String, raw: String)?
            func finish() {
                guard let subject, let entry = pending else { return }
                var value = entry.raw
                if let type = value.range(of: " type: ", options: .backwards) {
                    value = String(value[..<type.lowerBound])
                }
                result[subject, default: [:]][entry.key] = value
                pending = nil
            }
            for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
                if line.hasPrefix("key: "), let valueMark = line.range(of: " value: ") {
                    finish()
                    let key = String(line[line.index(line.startIndex, offsetBy: 5)..<valueMark.lowerBound])
                    pending = (key, String(line[valueMark.upperBound...]))
                } else if !line.isEmpty, line.allSatisfy(\.isNumber) {
                    finish()
                    subject = String(line)
                } else if pending != nil {
                    pending?.raw += "\n" + line
                }
            }
            finish()
            return result
        }

        /// Runs the tool; its standard output, or nil when it failed or took longer than `limit` seconds.
        /// Spawned and waited for directly, its output going to a file this call creates: nothing (no
        /// thread, no descriptor) outlives the call or leaks into a process another thread spawns.
        private func run(_ arguments: [String], limit: Double = 3) -> String? {
            let outputPath =
                NSTemporaryDirectory()
                + "soundstage-jack-property-\(getpid())-\(Self.runs.add(1, ordering: .relaxed).newValue)"
            let created = open(outputPath, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0o600)
            guard created >= 0 else { return nil }
            close(created)
            defer { unlink(outputPath) }
            var actions = posix_spawn_file_actions_t()
            posix_spawn_file_actions_init(&actions)
            defer { posix_spawn_file_actions_destroy(&actions) }
            posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
            posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_NOFOLLOW, 0)
            posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
            var environment = ProcessInfo.processInfo.environment
            environment["JACK_DEFAULT_SERVER"] = server
            environment["JACK_NO_START_SERVER"] = "1"
            let argv = ([executable] + arguments).map { strdup($0) } + [nil]
            let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
            defer { (argv + envp).forEach { free($0) } }
            var pid: pid_t = 0
            guard posix_spawn(&pid, executable, &actions, nil, argv, envp) == 0 else { return nil }
            var status: Int32 = 0
            let deadline = Date().addingTimeInterval(limit)
            while true {
                let reaped = waitpid(pid, &status, WNOHANG)
                if reaped == pid { break }
                if reaped < 0 && errno != EINTR { return nil }
                if Date() >= deadline {
                    kill(pid, SIGKILL)
                    while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
                    return nil
                }
                usleep(2_000)
            }
            // Exited (not signalled) with status 0.
            guard status & 0x7f == 0, (status >> 8) & 0xff == 0,
                let output = FileManager.default.contents(atPath: outputPath)
            else { return nil }
            return String(decoding: output, as: UTF8.self)
        }

        private static let runs = Atomic<Int>(0)
    }
}

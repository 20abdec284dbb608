// Control side (the reconnect thread). Notices a JACK server coming back before the back-off would:
// jackd2 listens on /dev/shm/jack_<server>_<uid>_0, PipeWire on $XDG_RUNTIME_DIR/pipewire-0; a new
// server makes a new socket (a new inode), even where a killed one left its file behind.
import Foundation
import Glibc

struct JackServerSocketWatch {
    private let paths: [String]
    private var signatures: [Signature?]

    private struct Signature: Equatable {
        var device: UInt64
        var inode: UInt64
        var changeSeconds: Int
        var changeNanoseconds: Int
    }

    init(server: String) {
        var paths = ["/dev/shm/jack_\(server)_\(getuid())_0"]
        let environment = ProcessInfo.processInfo.environment
        if let runtime = environment["PIPEWIRE_RUNTIME_DIR"] ?? environment["XDG_RUNTIME_DIR"], !runtime.isEmpty {
            paths.append(runtime + "/" + (environment["PIPEWIRE_REMOTE"] ?? "pipewire-0"))
        }
        self.paths = paths
        signatures = paths.map(Self.signature)
    }

    /// True once after a socket appeared or was made anew since the last call.
    mutating func changed() -> Bool {
        var changed = false
        for (i, path) in paths.enumerated() {
            let now = Self.signature(path)
            if now != signatures[i] {
                if now != nil { changed = true }
                signatures[i] = now
            }
        }
        return changed
    }

    private static func signature(_ path: String) -> Signature? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return Signature(
            device: UInt64(info.st_dev), inode: UInt64(info.st_ino), changeSeconds: info.st_ctim.tv_sec,
            changeNanoseconds: info.st_ctim.tv_nsec)
    }
}

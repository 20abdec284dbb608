// Any thread. Which libjack this process runs on: jackd2's, or PipeWire's (`pw-jack` puts it first on
// the library path). They differ where it matters: PipeWire's never calls the xrun callback, renames a
// second client without saying so, and cannot start a jackd.
import Foundation
import Glibc

public enum JackLibraryKind: Sendable, Equatable {
    case jack2
    case pipeWire

    /// The libjack this process loaded, found by its file in the process's memory map.
    public static let current: JackLibraryKind = {
        // /proc files report no size, so they are read to the end in chunks.
        let fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return .jack2 }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n <= 0 { break }
            bytes += chunk[0..<n]
        }
        let maps = String(decoding: bytes, as: UTF8.self)
        for line in maps.split(separator: "\n") where line.contains("libjack.so") {
            if line.contains("pipewire") { return .pipeWire }
        }
        return .jack2
    }()

    /// Whether the server reports xruns to clients (PipeWire's libjack never calls the xrun callback).
    public var countsXruns: Bool { self == .jack2 }

    /// The library path without PipeWire's libjack directories: what a jackd started from here must get.
    public static func libraryPathWithoutPipeWire(_ path: String?) -> String? {
        guard let path else { return nil }
        let kept = path.split(separator: ":").filter { !$0.contains("pipewire") }
        return kept.isEmpty ? nil : kept.joined(separator: ":")
    }

    /// PipeWire's socket for this user ($PIPEWIRE_RUNTIME_DIR or $XDG_RUNTIME_DIR, `pipewire-0`), when it
    /// exists: PipeWire runs and serves JACK clients through `pw-jack`.
    public static func pipeWireSocket(environment: [String: String]) -> String? {
        let folder = environment["PIPEWIRE_RUNTIME_DIR"] ?? environment["XDG_RUNTIME_DIR"] ?? "/run/user/\(getuid())"
        let socket = folder + "/" + (environment["PIPEWIRE_REMOTE"] ?? "pipewire-0")
        var info = stat()
        return stat(socket, &info) == 0 && (info.st_mode & S_IFMT) == S_IFSOCK ? socket : nil
    }
}

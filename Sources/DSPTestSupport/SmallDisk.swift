// Test support. A tiny tmpfs mounted for one test, so that a write can meet a full disk for real.
// Mounting needs root (CAP_SYS_ADMIN); where it is refused the tests that need it are skipped with
// the reason (`SmallDisk.isAvailable`, `SmallDisk.unavailableReason`).
import Foundation
import Glibc
import Synchronization

/// A tmpfs of a given size mounted on a fresh folder; unmounted (and the folder removed) by
/// `unmount()` or when released.
public final class SmallDisk {
    /// The mount point.
    public let path: String
    private var isMounted = true

    /// Mounts a tmpfs of `bytes` bytes (rounded up to whole pages) on a new folder under `parent`
    /// (default: the temporary folder).
    public init(bytes: Int, under parent: String = NSTemporaryDirectory()) throws {
        path = (parent.hasSuffix("/") ? parent : parent + "/") + "small-disk-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        guard Glibc.mount("tmpfs", path, "tmpfs", 0, "size=\(bytes),mode=0777") == 0 else {
            let reason = String(cString: strerror(errno))
            rmdir(path)
            throw SmallDiskError(reason: "mount -t tmpfs on \(path): \(reason)")
        }
        Self.registerForExit(path)
    }

    deinit { unmount() }

    /// Unmounts (lazily, should a file still be open) and removes the mount point. Idempotent.
    public func unmount() {
        guard isMounted else { return }
        isMounted = false
        Self.release(path)
        Self.mounted.withLock { _ = $0.remove(path) }
    }

    private static func release(_ path: String) {
        umount2(path, Int32(MNT_DETACH))
        rmdir(path)
    }

    /// Mount points not unmounted yet: a test that ends the process early still leaves none behind.
    private static let mounted = Mutex<Set<String>>([])

    private static func registerForExit(_ path: String) {
        let first = mounted.withLock { set in
            defer { set.insert(path) }
            return set.isEmpty && !exitHandlerInstalled.exchange(true, ordering: .relaxed)
        }
        if first {
            atexit { SmallDisk.mounted.withLock { set in set.forEach(SmallDisk.release) } }
        }
    }

    private static let exitHandlerInstalled = Atomic<Bool>(false)

    /// Fills the disk with a file named `name` until no byte more fits.
    public func fill(name: String = "filler") {
        let fd = open(path + "/" + name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { return }
        defer { close(fd) }
        let block = [UInt8](repeating: 0x5A, count: 4096)
        var size = block.count
        while size > 0 {
            let written = block.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, size) }
            if written < 0 {
                if errno == EINTR { continue }
                size /= 2  // the last free bytes fit only a smaller write
            }
        }
    }

    /// True when this process may mount a tmpfs (checked once, by mounting one).
    public static let isAvailable: Bool = {
        guard let disk = try? SmallDisk(bytes: 65_536) else { return false }
        disk.unmount()
        return true
    }()

    /// Why the tests that need a full disk are skipped when `isAvailable` is false.
    public static let unavailableReason =
        "mounting a small tmpfs needs root (CAP_SYS_ADMIN), which this test run does not have"
}

/// The tmpfs could not be mounted.
public struct SmallDiskError: Error, CustomStringConvertible {
    public let reason: String
    public var description: String { reason }
}

// Tests only. jackd keeps metadata in one store per user (/dev/shm/jack_db-UID), which the clean exit
// of any server of the user deletes; processes with clients open keep using the deleted copy until
// the host notices (JackMetadataStore). Test fixtures start and stop servers under a shared lock; a
// test that depends on metadata holds it exclusively, so no fixture's server starts or exits while
// it runs. The lock is a file lock, so it holds across test processes.
import Foundation
import Synchronization

public enum JackServerStartLock {
    private static let path = NSTemporaryDirectory() + "soundstage-jack-server-start.lock"
    /// The thread holding the exclusive lock in this process (its own server starts do not wait).
    private static let exclusiveOwner = Mutex<pthread_t?>(nil)

    /// Runs `body` (which starts or stops a JACK server) under the shared lock.
    public static func starting<T>(_ body: () throws -> T) rethrows -> T {
        if exclusiveOwner.withLock({ $0.map { pthread_equal($0, pthread_self()) != 0 } ?? false }) {
            return try body()
        }
        let fd = open(path, O_CREAT | O_RDWR | O_CLOEXEC, 0o666)
        if fd >= 0 { _ = flock(fd, LOCK_SH) }
        defer {
            if fd >= 0 {
                _ = flock(fd, LOCK_UN)
                close(fd)
            }
        }
        return try body()
    }

    /// Runs `body` while no other test starts or stops a JACK server.
    public static func exclusively<T>(_ body: () throws -> T) rethrows -> T {
        let fd = open(path, O_CREAT | O_RDWR | O_CLOEXEC, 0o666)
        if fd >= 0 { _ = flock(fd, LOCK_EX) }
        exclusiveOwner.withLock { $0 = pthread_self() }
        defer {
            exclusiveOwner.withLock { $0 = nil }
            if fd >= 0 {
                _ = flock(fd, LOCK_UN)
                close(fd)
            }
        }
        return try body()
    }
}

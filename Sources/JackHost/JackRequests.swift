// Any thread but the process and notification threads: the libjack calls that are requests to the
// server, one at a time.
import Locking

/// Serializes this process's requests to the JACK server.
///
/// jackd2's libjack sends a client's requests (port registration, connections, latency recomputation,
/// metadata notifications, client lookups by name or uuid, activation, close) over one socket and
/// reads each reply in more than one `read`, with no lock of its own. Two threads that make requests
/// at once read parts of each other's replies: the caller of `jack_port_register` got an index that
/// named no port or another client's port (libjack printing "JackClientSocket::Read time out" for the
/// short read), and every later reply on that client was off by one, until libjack's own assertion in
/// its graph manager stopped the process. Seen with voice-processor ports registered while a session
/// route change set our metadata, during `jack_bufsize` changes. Every request therefore goes through
/// `serialized`. The lock is the innermost one (taken after `portWork` and `state`, nothing taken under
/// it) and is never taken by a callback: the server's synchronous notifications to this client, which
/// a request may wait for, never wait for it. Calls that only read libjack's shared memory
/// (`jack_get_ports`, `jack_port_name`, connections, latency ranges) need no request and take no lock.
enum JackRequests {
    private static let lock = Lock(recursive: true)

    static func serialized<Result>(_ body: () -> Result) -> Result {
        lock.withLock { _ in body() }
    }
}

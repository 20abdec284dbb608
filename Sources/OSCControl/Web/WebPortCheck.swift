// Caller's thread. Plain-socket checks around the web server's start: whether its address can be
// bound (and which port 0 gives), and waiting, bounded, until it accepts connections.
import COSCSocket
import Foundation
import Glibc

enum WebPortCheck {
    /// The port the server will bind: `port` when it can be bound on `host`, else (with `fallsBack`, or
    /// for 0) a free one. Throws a message naming the problem.
    static func bindablePort(host: String, port: Int, fallsBack: Bool) throws(OSCServiceError) -> Int {
        guard (0...65535).contains(port) else { throw OSCServiceError("HTTP port \(port) is not in 0…65535") }
        switch bind(host: host, port: port) {
        case .success(let bound): return bound
        case .failure(let code) where code == EADDRINUSE && fallsBack && port != 0:
            if case .success(let bound) = bind(host: host, port: 0) { return bound }
            throw OSCServiceError("cannot serve HTTP on \(host): no free port")
        case .failure(let code) where code == EADDRINUSE:
            throw OSCServiceError("cannot serve HTTP on \(host) port \(port): the port is taken (--http-port)")
        case .failure(let code) where code == EINVAL || code == EAFNOSUPPORT:
            throw OSCServiceError("--http-host '\(host)' is not an IPv4 or IPv6 address")
        case .failure(let code):
            throw OSCServiceError(
                "cannot serve HTTP on \(host) port \(port): \(String(cString: strerror(code))) (--http-host, --http-port)"
            )
        }
    }

    /// Polls with plain connects until the server accepts, at most `seconds`.
    static func waitUntilAccepting(host: String, port: Int, seconds: Double) {
        let target = host == "0.0.0.0" ? "127.0.0.1" : host == "::" ? "::1" : host
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if connects(host: target, port: port) { return }
            usleep(5_000)
        }
    }

    /// Polls with plain connects until the Unix socket at `path` accepts, at most `seconds`.
    static func waitUntilAccepting(unixPath path: String, seconds: Double) {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            let fd = oscsocket_unix_connect(path)
            if fd >= 0 {
                close(fd)
                return
            }
            usleep(2_000)
        }
    }

    private enum Outcome {
        case success(Int)
        case failure(Int32)
    }

    private static func bind(host: String, port: Int) -> Outcome {
        let result = oscsocket_tcp_bind_probe(host, Int32(port))
        return result >= 0 ? .success(Int(result)) : .failure(-result)
    }

    private static func connects(host: String, port: Int) -> Bool {
        oscsocket_tcp_connects(host, Int32(port)) == 1
    }
}

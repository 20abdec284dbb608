// Caller's thread. Plain-socket checks around the web server's start: whether its address can be
// bound (and which port 0 gives), and waiting, bounded, until it accepts connections.
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

    private enum Outcome {
        case success(Int)
        case failure(Int32)
    }

    private static func bind(host: String, port: Int) -> Outcome {
        withAddress(host: host, port: port) { address, length, family in
            let fd = socket(family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            guard fd >= 0 else { return .failure(errno) }
            defer { close(fd) }
            var on: Int32 = 1
            _ = setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, socklen_t(MemoryLayout<Int32>.size))
            guard Glibc.bind(fd, address, length) == 0 else { return .failure(errno) }
            var bound = sockaddr_storage()
            var size = socklen_t(MemoryLayout<sockaddr_storage>.size)
            let named = withUnsafeMutablePointer(to: &bound) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &size) }
            }
            guard named == 0 else { return .failure(errno) }
            let port = withUnsafePointer(to: &bound) { storage -> UInt16 in
                if family == AF_INET6 {
                    return storage.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { $0.pointee.sin6_port }
                }
                return storage.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee.sin_port }
            }
            return .success(Int(UInt16(bigEndian: port)))
        } ?? .failure(EINVAL)
    }

    private static func connects(host: String, port: Int) -> Bool {
        withAddress(host: host, port: port) { address, length, family in
            let fd = socket(family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            guard fd >= 0 else { return false }
            defer { close(fd) }
            return connect(fd, address, length) == 0
        } ?? false
    }

    /// Calls `body` with the socket address of a numeric IPv4 or IPv6 host (nil when it is neither).
    private static func withAddress<T>(
        host: String, port: Int, _ body: (UnsafePointer<sockaddr>, socklen_t, Int32) -> T
    ) -> T? {
        if host.contains(":") {
            var address = sockaddr_in6()
            address.sin6_family = sa_family_t(AF_INET6)
            address.sin6_port = UInt16(port).bigEndian
            guard inet_pton(AF_INET6, host, &address.sin6_addr) == 1 else { return nil }
            return withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    body($0, socklen_t(MemoryLayout<sockaddr_in6>.size), AF_INET6)
                }
            }
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        guard inet_pton(AF_INET, host, &address.sin_addr) == 1 else { return nil }
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                body($0, socklen_t(MemoryLayout<sockaddr_in>.size), AF_INET)
            }
        }
    }
}

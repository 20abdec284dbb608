// OSC thread only (after creation). The liblo UDP and TCP servers on one port, bound to one address,
// with their method tables kept identical.
import CLibLo
import COSCSocket
import Glibc

/// Why the OSC service could not start.
public struct OSCServiceError: Error, Sendable, Equatable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// Handler signatures as liblo calls them.
typealias LoMethodHandler =
    @convention(c) (
        UnsafePointer<CChar>?, UnsafePointer<CChar>?, UnsafeMutablePointer<UnsafeMutablePointer<lo_arg>?>?, Int32,
        lo_message?, UnsafeMutableRawPointer?
    ) -> Int32

/// The UDP and TCP `lo_server`s of the service.
///
/// liblo 0.31 binds the wildcard address only, so each server's socket is replaced (same descriptor
/// number) by one bound to the requested host. Coercion is off (the service converts types itself) and
/// liblo's own queue of future bundles is off (`lo_server_enable_queue(s, 0, 1)`): every message is
/// dispatched at once and the service schedules by time tag.
final class LoEndpoint {
    let udp: lo_server
    let tcp: lo_server?
    let port: Int
    let udpSocket: Int32

    /// Creates both servers on `port` (0: a free port) bound to `host`.
    init(host: String, port requested: Int, enablesTCP: Bool, maxPacketSize: Int) throws(OSCServiceError) {
        guard requested >= 0, requested <= 65535 else { throw OSCServiceError("port \(requested) is not in 0…65535") }
        var lastError = "no attempt made"
        // A requested port is tried once; a free port is looked for a few times (another process may
        // take the probed port before we bind it).
        for _ in 0..<(requested == 0 ? 8 : 1) {
            var port = requested
            if port == 0 {
                let probed = loshim_probe_free_port(host)
                guard probed > 0 else {
                    throw OSCServiceError("cannot bind \(host): \(String(cString: strerror(-probed)))")
                }
                port = Int(probed)
            }
            switch Self.makeServer(host: host, port: port, proto: LO_UDP, socktype: Int32(SOCK_DGRAM.rawValue)) {
            case .failure(let message):
                lastError = message
                continue
            case .success(let udpServer):
                var tcpServer: lo_server?
                if enablesTCP {
                    switch Self.makeServer(
                        host: host, port: port, proto: LO_TCP,
                        socktype: Int32(SOCK_STREAM.rawValue))
                    {
                    case .failure(let message):
                        lo_server_free(udpServer)
                        lastError = message
                        continue
                    case .success(let server):
                        tcpServer = server
                    }
                }
                udp = udpServer
                tcp = tcpServer
                self.port = port
                udpSocket = lo_server_get_socket_fd(udpServer)
                _ = loshim_set_receive_buffer(udpSocket, 8 << 20)
                _ = loshim_enable_drop_count(udpSocket)
                for server in servers {
                    _ = lo_server_enable_queue(server, 0, 1)
                    _ = lo_server_enable_coercion(server, 0)
                    _ = lo_server_max_msg_size(server, Int32(clamping: maxPacketSize))
                }
                return
            }
        }
        throw OSCServiceError(lastError)
    }

    private enum Made { case success(lo_server), failure(String) }

    private static func makeServer(host: String, port: Int, proto: Int32, socktype: Int32) -> Made {
        let name = proto == LO_UDP ? "UDP" : "TCP"
        guard let server = lo_server_new_with_proto(String(port), proto, loErrorHandler) else {
            return .failure("cannot open the OSC \(name) port \(port) (in use?)")
        }
        let code = loshim_rebind(server, host, Int32(port), socktype)
        guard code == 0 else {
            lo_server_free(server)
            return .failure("cannot bind OSC \(name) to \(host):\(port): \(String(cString: strerror(code)))")
        }
        return .success(server)
    }

    deinit {
        for server in servers { lo_server_free(server) }
    }

    var servers: [lo_server] { tcp.map { [udp, $0] } ?? [udp] }

    /// The server that sends to `address` (its protocol decides).
    func server(for address: lo_address) -> lo_server {
        lo_address_get_protocol(address) == LO_TCP ? (tcp ?? udp) : udp
    }

    // MARK: Methods

    /// Installs the generic handler (first in liblo's list, so it sees every message before any node
    /// method) and the bundle handlers.
    func installHandlers(
        generic: LoMethodHandler, bundleStart: lo_bundle_start_handler,
        bundleEnd: lo_bundle_end_handler, userData: UnsafeMutableRawPointer
    ) {
        for server in servers {
            _ = lo_server_add_method(server, nil, nil, generic, userData)
            _ = lo_server_add_bundle_handlers(server, bundleStart, bundleEnd, userData)
        }
    }

    // MARK: I/O

    /// Waits up to `timeout` ms for input; returns (udpReady, tcpReady).
    func wait(timeoutMilliseconds timeout: Int32) -> (Bool, Bool) {
        var list: [lo_server?] = servers
        var status = [Int32](repeating: 0, count: list.count)
        _ = lo_servers_wait(&list, &status, Int32(list.count), timeout)
        return (status[0] != 0, status.count > 1 && status[1] != 0)
    }

    /// Sends a message from the server matching the address's protocol. Returns false on failure
    /// (a vanished TCP peer, an unreachable host: replies are best effort).
    @discardableResult
    func send(_ message: OSCMessage, to address: lo_address) -> Bool {
        let m = LoValues.message(message.arguments)
        defer { lo_message_free(m) }
        return lo_send_message_from(address, server(for: address), message.address, m) >= 0
    }

    /// Sends messages as one bundle with time tag `tag`.
    @discardableResult
    func sendBundle(_ messages: [OSCMessage], timetag tag: OSCTimetag, to address: lo_address) -> Bool {
        guard let bundle = lo_bundle_new(lo_timetag(sec: tag.seconds, frac: tag.fraction)) else { return false }
        defer { lo_bundle_free_recursive(bundle) }
        for message in messages {
            let m = LoValues.message(message.arguments)
            _ = lo_bundle_add_message(bundle, message.address, m)
        }
        return lo_send_bundle_from(address, server(for: address), bundle) >= 0
    }
}

/// liblo reports reception errors here (no sender is known to liblo 0.31's hook; UDP packets are
/// screened before liblo sees them, so only TCP framing errors end up here). They are counted.
private let loErrorHandler: lo_err_handler = { _, _, _ in
    LoErrorCounter.shared.increment()
}

/// Errors liblo reported through its error hook (any server in the process).
final class LoErrorCounter: Sendable {
    static let shared = LoErrorCounter()
    private let count = AtomicCounter()
    func increment() { count.add(1) }
    var value: Int { count.value }
}

// Test support: the server side of the New Session Manager protocol, played by the test (nsmd is not
// packaged in Debian 12). It follows the messages of NSM API 1.1.2 (New Session Manager 1.6, the API
// document in jackaudio/new-session-manager docs/src/api/index.adoc): it learns the client's address
// from the source of `/nsm/server/announce`, answers from the same socket, and sends open and save.
import CLibLo
import Foundation
import Glibc
@testable import OSCControl

/// A session manager on a loopback UDP port, for one client.
final class NSMTestServer {
    let server: lo_server
    let socket: Int32
    /// The announcing client's address (set by the first announce).
    private(set) var client: lo_address?
    /// Messages received and not taken yet.
    private(set) var pending: [OSCMessage] = []

    init() {
        server = lo_server_new_with_proto(nil, LO_UDP, nil)!
        socket = lo_server_get_socket_fd(server)
    }

    deinit {
        if let client { lo_address_free(client) }
        lo_server_free(server)
    }

    /// `NSM_URL` for the client.
    var url: String { "osc.udp://127.0.0.1:\(lo_server_get_port(server))/" }

    /// Sends `address args…` to the client from the server's socket.
    func send(_ address: String, _ arguments: [OSCArgument] = []) {
        guard let client else { return }
        let m = LoValues.message(arguments)
        defer { lo_message_free(m) }
        _ = lo_send_message_from(client, server, address, m)
    }

    /// Waits up to `timeout` s for a message matching `predicate` and takes it (earlier ones stay).
    func waitFor(timeout: Double = 10, _ predicate: (OSCMessage) -> Bool) -> OSCMessage? {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            if let index = pending.firstIndex(where: predicate) { return pending.remove(at: index) }
            let remaining = deadline.timeIntervalSinceNow
            if remaining <= 0 { return nil }
            receive(timeout: min(remaining, 0.1))
        }
    }

    /// Waits for a message at `address`.
    func waitFor(_ address: String, timeout: Double = 10) -> OSCMessage? {
        waitFor(timeout: timeout) { $0.address == address }
    }

    /// Waits for `/reply path …` or `/error path …`.
    func awaitAnswer(to path: String, timeout: Double = 20) -> OSCMessage? {
        waitFor(timeout: timeout) {
            ($0.address == "/reply" || $0.address == "/error") && $0.arguments.first == .string(path)
        }
    }

    /// Takes every pending message at `address`.
    func take(_ address: String) -> [OSCMessage] {
        let hits = pending.filter { $0.address == address }
        pending.removeAll { $0.address == address }
        return hits
    }

    /// The announce handshake: waits for the announce and answers it as nsmd does.
    func acceptAnnounce(timeout: Double = 20) -> OSCMessage? {
        guard let announce = waitFor("/nsm/server/announce", timeout: timeout) else { return nil }
        send(
            "/reply",
            [
                .string("/nsm/server/announce"), .string("Howdy, what took you so long?"),
                .string("Test Session Manager"), .string(":server-control:broadcast:optional-gui:")
            ])
        return announce
    }

    /// `/nsm/client/open path display_name client_id`, then the answer.
    func open(path: String, displayName: String = "Test Session", clientID: String) -> OSCMessage? {
        send("/nsm/client/open", [.string(path), .string(displayName), .string(clientID)])
        return awaitAnswer(to: "/nsm/client/open")
    }

    /// `/nsm/client/save`, then the answer.
    func save() -> OSCMessage? {
        send("/nsm/client/save")
        return awaitAnswer(to: "/nsm/client/save")
    }

    /// Reads datagrams for up to `timeout` s, noting the first announcer's address.
    private func receive(timeout: Double) {
        var fds = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
        guard poll(&fds, 1, Int32(max(1, timeout * 1000))) > 0 else { return }
        var buffer = [UInt8](repeating: 0, count: 65_536)
        var from = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let n = buffer.withUnsafeMutableBytes { raw in
            withUnsafeMutablePointer(to: &from) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    recvfrom(socket, raw.baseAddress, raw.count, 0, $0, &length)
                }
            }
        }
        guard n > 0, let packet = try? OSCPacket.decode(Array(buffer[0..<n])) else { return }
        for (message, _) in packet.messages {
            if message.address == "/nsm/server/announce" && client == nil {
                client = lo_address_new("127.0.0.1", String(UInt16(bigEndian: from.sin_port)))
            }
            pending.append(message)
        }
    }
}

// Control side (FlyingFox's tasks). The HTTP server: the OSCQuery namespace, its WebSocket (OSC packets
// and LISTEN), and the web view's files. Everything that touches the engine is handed to the OSC
// thread through its inbox, so the OSC thread stays the only one that reads or changes the service's
// state.
import FlyingFox
import FlyingSocks
import Foundation
import Synchronization

/// Settings of the web server (`--http-port`, `--http-host`, `--http-read-only`).
public struct WebServerOptions: Sendable {
    /// The default port (OSCQuery's convention: the OSC port's neighbour).
    public static let defaultPort = 57131

    /// TCP port; 0 picks a free one.
    public var port: Int
    /// Address to bind: 127.0.0.1 (this machine only), 0.0.0.0 or :: (the network), or one interface's.
    public var host: String
    /// When the port is taken, take a free one instead of failing (the default port).
    public var fallsBackToFreePort: Bool
    /// Nothing sent through the web server may change the engine (queries, getters and subscriptions
    /// only; `/error 14` otherwise).
    public var isReadOnly: Bool
    /// Further names requests may address the server by (`--http-allow-host`): a DNS name of the machine,
    /// a reverse proxy's. Besides these a loopback server answers loopback names only, and a network one
    /// IP addresses, `localhost` and the machine's own name (`WebRequestGuard`).
    public var allowedHostNames: [String]

    public init(
        port: Int = WebServerOptions.defaultPort, host: String = "127.0.0.1", fallsBackToFreePort: Bool = false,
        isReadOnly: Bool = false, allowedHostNames: [String] = []
    ) {
        self.port = port
        self.host = host
        self.fallsBackToFreePort = fallsBackToFreePort
        self.isReadOnly = isReadOnly
        self.allowedHostNames = allowedHostNames
    }
}

/// The running HTTP server of one OSC service: FlyingFox on a private Unix socket, behind the gate that
/// listens on the TCP address (`WebRequestGate`).
final class WebServer: Sendable {
    let port: Int
    private let server: HTTPServer
    private let task: Task<Void, any Error>
    private let gate: WebRequestGate
    /// The folder holding the Unix socket (`PrivateSocketFolder`), removed at `stop`.
    private let folder: String

    /// Binds and starts serving. The address is tried here, on the caller's thread, so a taken port or
    /// a foreign host fails at once; then FlyingFox serves on Swift's concurrency threads. Nothing here
    /// waits for those threads (the caller may be one of them): the wait for the server to accept is
    /// bounded and only polls the socket.
    init(options: WebServerOptions, inbox: Inbox) throws(OSCServiceError) {
        let port = try WebPortCheck.bindablePort(
            host: options.host, port: options.port, fallsBack: options.fallsBackToFreePort)
        guard let folder = PrivateSocketFolder.make() else {
            throw OSCServiceError("cannot make a private folder for the HTTP server's socket")
        }
        let socketPath = folder + "/" + PrivateSocketFolder.socketName
        let handler = WebRequestHandler(inbox: inbox, options: options)
        let server = HTTPServer(
            address: sockaddr_un.unix(path: socketPath), timeout: 30, logger: .disabled, handler: handler)
        task = Task { try await server.run() }
        WebPortCheck.waitUntilAccepting(unixPath: socketPath, seconds: 2)
        do {
            gate = try WebRequestGate(host: options.host, port: port, upstreamPath: socketPath)
        } catch {
            Task {
                await server.stop(timeout: 0)
            }
            unlink(socketPath)
            rmdir(folder)
            throw error
        }
        self.server = server
        self.port = port
        self.folder = folder
    }

    /// Stops listening and closes every connection (WebSockets included); the gate ends at once, the
    /// server behind it without being waited for.
    func stop() {
        gate.stop()
        // Nothing reaches the server but through the gate: its socket's name can go now.
        unlink(folder + "/" + PrivateSocketFolder.socketName)
        rmdir(folder)
        let server = self.server
        let task = self.task
        Task {
            await server.stop(timeout: 0.5)
            task.cancel()
        }
    }
}

/// Serves every request: WebSocket upgrades, the view's files, OSCQuery.
struct WebRequestHandler: HTTPHandler {
    let inbox: Inbox
    let options: WebServerOptions
    let sockets: WebSocketEndpoint

    init(inbox: Inbox, options: WebServerOptions) {
        self.inbox = inbox
        self.options = options
        sockets = WebSocketEndpoint(inbox: inbox, isReadOnly: options.isReadOnly)
    }

    func handleRequest(_ request: HTTPRequest) async throws -> HTTPResponse {
        if let refusal = WebRequestGuard.refusal(
            host: request.headers[.host], origin: request.headers[HTTPHeader("Origin")],
            boundHost: options.host, allowedNames: options.allowedHostNames)
        {
            return Self.text(.forbidden, refusal)
        }
        if request.headers[.upgrade]?.lowercased() == "websocket" {
            return try await WebSocketHTTPHandler.webSocket(sockets).handleRequest(request)
        }
        guard request.method == .GET || request.method == .HEAD else {
            return Self.text(.methodNotAllowed, "only GET (OSCQuery, the web view) and WebSocket upgrades are served")
        }
        let path = request.path
        if path == "/view" || path.hasPrefix("/view/") { return WebViewFiles.response(for: path) }
        let attribute = request.query.first?.name
        if path == "/", attribute == nil, Self.prefersHTML(request.headers[HTTPHeader("Accept")]) {
            let headers: HTTPHeaders = [.location: "/view"]
            return HTTPResponse(statusCode: .found, headers: headers)
        }
        let answer = await ask(path: path, attribute: attribute)
        var headers: HTTPHeaders = [.contentType: "application/json"]
        headers[.cacheControl] = "no-store"
        return HTTPResponse(
            statusCode: HTTPStatusCode(answer.status, phrase: Self.phrase(answer.status)), headers: headers,
            body: answer.json)
    }

    /// Hands the query to the OSC thread and waits for its answer.
    private func ask(path: String, attribute: String?) async -> WebQueryAnswer {
        await withCheckedContinuation { continuation in
            let query = WebQuery(path: path, attribute: attribute) { answer in continuation.resume(returning: answer) }
            if !inbox.postIfOpen(.web(.query(query))) { continuation.resume(returning: .unavailable) }
        }
    }

    /// A browser asks for HTML first; OSCQuery clients ask for JSON or anything.
    static func prefersHTML(_ accept: String?) -> Bool {
        guard let accept else { return false }
        return accept.split(separator: ",").first?.trimmingCharacters(in: .whitespaces).hasPrefix("text/html") == true
    }

    static func text(_ status: HTTPStatusCode, _ message: String) -> HTTPResponse {
        let headers: HTTPHeaders = [.contentType: "text/plain; charset=utf-8"]
        return HTTPResponse(statusCode: status, headers: headers, body: Data((message + "\n").utf8))
    }

    private static func phrase(_ status: Int) -> String {
        switch status {
        case 200: return "OK"
        case 204: return "No Content"
        case 400: return "Bad Request"
        case 404: return "Not Found"
        default: return "Status"
        }
    }
}

/// Each WebSocket becomes a `WebClient` of the OSC thread: binary frames are OSC packets, text frames
/// OSCQuery commands; whatever the OSC thread sends the client goes out in order.
struct WebSocketEndpoint: WSMessageHandler {
    let inbox: Inbox
    let isReadOnly: Bool
    private static let nextID = Atomic<Int>(1)

    func makeMessages(for incoming: AsyncStream<WSMessage>) async throws -> AsyncStream<WSMessage> {
        let (outgoing, continuation) = AsyncStream<WSMessage>.makeStream(bufferingPolicy: .bufferingNewest(4096))
        let id = Self.nextID.add(1, ordering: .relaxed).oldValue
        let client = WebClient(id: id, isReadOnly: isReadOnly) { frame in
            switch frame {
            case .binary(let bytes): continuation.yield(.data(Data(bytes)))
            case .text(let text): continuation.yield(.text(text))
            }
        }
        let inbox = self.inbox
        inbox.post(.web(.opened(client)))
        Task {
            for await message in incoming {
                switch message {
                case .data(let data): inbox.post(.web(.packet(client, [UInt8](data))))
                case .text(let text): inbox.post(.web(.text(client, text)))
                case .close: break
                }
            }
            inbox.post(.web(.closed(client)))
            continuation.finish()
        }
        return outgoing
    }
}

/// What keeps other web sites out of a server on this machine: a page elsewhere may make the browser
/// ask `http://127.0.0.1:57131/` (DNS rebinding gives it a name of its own) or open a WebSocket to it,
/// which no same-origin rule stops.
enum WebRequestGuard {
    /// Why the request is refused, or nil. A server answers only requests addressed to a name no other
    /// site can own (DNS rebinding gives a hostile page's own name the server's address): a loopback-bound
    /// server a loopback name, a network-bound one an IP address, `localhost` or one of `machineNames`;
    /// either also any of `allowedNames`. Any server refuses a browser's cross-origin WebSocket or request
    /// (an `Origin` header that is not the server's own).
    static func refusal(
        host: String?, origin: String?, boundHost: String, allowedNames: [String] = [],
        machineNames: [String] = WebRequestGuard.machineNames
    ) -> String? {
        let name = host.flatMap(hostName).map(normalized)
        let allowed = name.map { allowedNames.map(normalized).contains($0) } ?? false
        if isLoopback(boundHost) {
            guard let name, isLoopback(name) || allowed else {
                return "this server answers requests for 127.0.0.1, ::1 or localhost only, and names given with "
                    + "--http-allow-host (Host: \(host ?? "none"))"
            }
        } else {
            guard let name, isAddress(name) || name == "localhost" || machineNames.contains(name) || allowed else {
                return "this server answers requests for an IP address, localhost, this machine's name ("
                    + machineNames.joined(separator: ", ") + ") and names given with --http-allow-host (Host: "
                    + "\(host ?? "none"))"
            }
        }
        if let origin {
            let originHost = origin.split(separator: "/", omittingEmptySubsequences: true).dropFirst().first.map(
                String.init)
            guard let originHost, originHost == host else {
                return "requests from another origin (\(origin)) are refused"
            }
        }
        return nil
    }

    /// The name in a Host header without its port (`[::1]:57131` → `::1`, `localhost:80` → `localhost`),
    /// or nil when the header is not a name or bracketed IPv6 address with an optional numeric port.
    static func hostName(_ host: String) -> String? {
        func isPort(_ text: Substring) -> Bool {
            !text.isEmpty && text.count <= 5 && text.allSatisfy { ("0"..."9").contains($0) }
        }
        if host.hasPrefix("[") {
            guard let end = host.firstIndex(of: "]") else { return nil }
            let rest = host[host.index(after: end)...]
            guard rest.isEmpty || (rest.first == ":" && isPort(rest.dropFirst())) else { return nil }
            return String(host[host.index(after: host.startIndex)..<end])
        }
        let parts = host.split(separator: ":", omittingEmptySubsequences: false)
        guard !parts[0].isEmpty, parts.count == 1 || (parts.count == 2 && isPort(parts[1])) else { return nil }
        return String(parts[0])
    }

    /// The machine's own names: its host name, the name's first label, and that label in `.local` (mDNS).
    static let machineNames: [String] = {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return [] }
        let bytes = buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
        let full = normalized(String(decoding: bytes, as: UTF8.self))
        guard !full.isEmpty else { return [] }
        let label = String(full.prefix { $0 != "." })
        var names = [full]
        for more in [label, label + ".local"] where !names.contains(more) { names.append(more) }
        return names
    }()

    /// A name as compared: lower case, without the trailing dot of a fully qualified name.
    static func normalized(_ name: String) -> String {
        let lower = name.lowercased()
        return lower.hasSuffix(".") ? String(lower.dropLast()) : lower
    }

    /// Whether `name` is an IPv4 or IPv6 address written as one (a Host header's address needs no DNS).
    static func isAddress(_ name: String) -> Bool {
        var v4 = in_addr()
        var v6 = in6_addr()
        return inet_pton(AF_INET, name, &v4) == 1 || inet_pton(AF_INET6, name, &v6) == 1
    }

    /// `localhost`, an IPv4 address in 127.0.0.0/8 or the IPv6 loopback, written as an address exactly
    /// (`127.0.0.1.example.com` and `127.0.0.1evil` are names of other hosts).
    static func isLoopback(_ name: String) -> Bool {
        if name.lowercased() == "localhost" { return true }
        var v4 = in_addr()
        if inet_pton(AF_INET, name, &v4) == 1 { return UInt32(bigEndian: v4.s_addr) >> 24 == 127 }
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, name, &v6) == 1 else { return false }
        let bytes = withUnsafeBytes(of: v6) { Array($0) }
        if bytes[0..<15].allSatisfy({ $0 == 0 }) && bytes[15] == 1 { return true }
        // An IPv4-mapped loopback (::ffff:127.x.y.z).
        return bytes[0..<10].allSatisfy({ $0 == 0 }) && bytes[10] == 0xff && bytes[11] == 0xff && bytes[12] == 127
    }
}

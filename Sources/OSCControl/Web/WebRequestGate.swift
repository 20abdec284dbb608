// Control side, the gate's own thread. Stands in front of the HTTP server (FlyingFox, on a private Unix
// socket): accepts the TCP connections, lets each request head through only once it is whole and within
// bounds, then relays bytes both ways (a WebSocket's raw once upgraded). FlyingFox reads a request line
// by line, and its line reader costs time in the square of the line's length: one 100 kB URL kept a
// core busy for minutes and a 1 MB header for hours, and two such requests stopped the server. Nothing
// unbounded reaches it now.
import COSCSocket
import Foundation
import Glibc

final class WebRequestGate: Sendable {

    /// The longest request head (request line and headers) passed on, in bytes.
    static let maximumHead = 16_384
    /// The longest line in a head (a URL, a header), in bytes.
    static let maximumLine = 8_192
    /// The largest request body passed on (the server serves GET; larger bodies are refused).
    static let maximumBody = 1 << 20
    /// Seconds a client may take to send a whole head once it began one.
    static let headSeconds = 10.0
    /// Seconds a connection may stay open with nothing under way (keep-alive, no WebSocket).
    static let idleSeconds = 30.0
    static let maximumConnections = 256
    /// Bytes held per direction before the gate stops reading that side (back-pressure).
    static let bufferLimit = 1 << 20

    private let listenFD: Int32
    private let upstreamPath: String
    private let wakeRead: Int32
    private let wakeWrite: Int32
    private let finished = DispatchSemaphore(value: 0)

    /// Listens on `host`:`port`, relaying to the Unix socket at `upstreamPath`. Throws a message.
    init(host: String, port: Int, upstreamPath: String) throws(OSCServiceError) {
        let fd = oscsocket_tcp_listen(host, Int32(port))
        guard fd >= 0 else {
            throw OSCServiceError(
                "cannot serve HTTP on \(host) port \(port): \(String(cString: strerror(-fd))) (--http-host, --http-port)"
            )
        }
        var pipeFDs: [Int32] = [0, 0]
        guard oscsocket_pipe(&pipeFDs) == 0 else {
            close(fd)
            throw OSCServiceError("cannot start the HTTP gate: \(String(cString: strerror(errno)))")
        }
        listenFD = fd
        self.upstreamPath = upstreamPath
        wakeRead = pipeFDs[0]
        wakeWrite = pipeFDs[1]
        let thread = Thread { [self] in
            run()
            finished.signal()
        }
        thread.name = "soundstage.http-gate"
        thread.start()
    }

    /// Closes the listening socket and every connection, and waits for the thread to end.
    func stop() {
        var byte: UInt8 = 1
        _ = write(wakeWrite, &byte, 1)
        finished.wait()
        close(wakeWrite)
    }

    // MARK: The thread

    /// The connections are the thread's own (a local of this function).
    private func run() {
        var links: [Link] = []
        var running = true
        while running {
            var fds = [pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0)]
            // At the limit, only while a connection is idle (a new one replaces it); else new ones wait.
            let before = SystemClock.monotonicSeconds()
            let admits = links.count < Self.maximumConnections || links.contains { $0.mayMakeRoom(now: before) }
            fds.append(pollfd(fd: listenFD, events: admits ? Int16(POLLIN) : 0, revents: 0))
            for link in links {
                fds.append(pollfd(fd: link.client, events: link.clientEvents, revents: 0))
                fds.append(pollfd(fd: link.upstream, events: link.upstreamEvents, revents: 0))
            }
            _ = poll(&fds, nfds_t(fds.count), 500)
            if fds[0].revents != 0 { running = false }
            let now = SystemClock.monotonicSeconds()
            for (index, link) in links.enumerated() {
                link.serve(client: fds[2 + 2 * index].revents, upstream: fds[3 + 2 * index].revents, now: now)
                link.expire(now: now)
            }
            links.removeAll { link in
                guard link.isDone else { return false }
                link.close()
                return true
            }
            if fds[1].revents & Int16(POLLIN) != 0 { accept(into: &links, now: now) }
        }
        for link in links { link.close() }
        links = []
        close(listenFD)
        close(wakeRead)
    }

    /// Takes the waiting connections. At the limit, a new one replaces the connection idle the longest
    /// (for 2 s at least), so idle sockets cannot keep others out.
    private func accept(into links: inout [Link], now: Double) {
        while true {
            let client = oscsocket_accept(listenFD)
            guard client >= 0 else { return }
            if links.count >= Self.maximumConnections {
                let idle = links.indices.filter { links[$0].mayMakeRoom(now: now) }
                guard let oldest = idle.min(by: { links[$0].lastActivity < links[$1].lastActivity }) else {
                    close(client)
                    return
                }
                links[oldest].close()
                links.remove(at: oldest)
            }
            let upstream = oscsocket_unix_connect(upstreamPath)
            guard upstream >= 0 else {
                let busy = Array(
                    "HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nContent-Length: 0\r\n\r\n".utf8)
                _ = busy.withUnsafeBytes { send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                close(client)
                continue
            }
            links.append(Link(client: client, upstream: upstream, now: now))
        }
    }
}

/// One client connection and its connection to the server.
private final class Link {
    let client: Int32
    let upstream: Int32
    private var toUpstream: [UInt8] = []
    private var toClient: [UInt8] = []
    private var head: [UInt8] = []
    private var headStarted: Double?
    private(set) var lastActivity: Double
    private var filter = RequestFilter.Phase.head
    private var clientEnded = false
    private var upstreamEnded = false
    private var upstreamShut = false
    /// A refusal was queued: nothing more is read, and the link ends once it is sent.
    private var refusing = false
    private var failed = false

    init(client: Int32, upstream: Int32, now: Double) {
        self.client = client
        self.upstream = upstream
        lastActivity = now
    }

    var clientEvents: Int16 {
        var events: Int16 = 0
        if !clientEnded && !refusing && toUpstream.count < WebRequestGate.bufferLimit { events |= Int16(POLLIN) }
        if !toClient.isEmpty { events |= Int16(POLLOUT) }
        return events
    }

    var upstreamEvents: Int16 {
        var events: Int16 = 0
        if !upstreamEnded && !refusing && toClient.count < WebRequestGate.bufferLimit { events |= Int16(POLLIN) }
        if !toUpstream.isEmpty && !refusing { events |= Int16(POLLOUT) }
        return events
    }

    /// Over when it failed, when a refusal went out, or when the server ended and all it said went out.
    var isDone: Bool {
        failed || (refusing && toClient.isEmpty) || (upstreamEnded && toClient.isEmpty)
            || (clientEnded && upstreamShut && upstreamEnded)
    }

    func serve(client clientEvents: Int16, upstream upstreamEvents: Int16, now: Double) {
        let trouble = Int16(POLLERR | POLLNVAL)
        if clientEvents & trouble != 0 || upstreamEvents & trouble != 0 {
            failed = true
            return
        }
        if clientEvents & Int16(POLLIN | POLLHUP) != 0 && !clientEnded && !refusing {
            switch Self.receive(client) {
            case .bytes(let bytes):
                lastActivity = now
                take(bytes[...], now: now)
            case .ended: clientEnded = true
            case .failed: failed = true
            case .none: break
            }
        }
        if upstreamEvents & Int16(POLLIN | POLLHUP) != 0 && !upstreamEnded {
            switch Self.receive(upstream) {
            case .bytes(let bytes):
                lastActivity = now
                toClient += bytes
            case .ended: upstreamEnded = true
            case .failed: failed = true
            case .none: break
            }
        }
        if !toUpstream.isEmpty && !refusing && !Self.send(&toUpstream, to: upstream) { failed = true }
        if !toClient.isEmpty && !Self.send(&toClient, to: client) { failed = true }
        if clientEnded && toUpstream.isEmpty && !upstreamShut {
            shutdown(upstream, Int32(SHUT_WR))
            upstreamShut = true
        }
    }

    /// No request under way: not a WebSocket, no head begun, nothing to relay.
    var isIdle: Bool { filter == .head && head.isEmpty && toClient.isEmpty && toUpstream.isEmpty && !refusing }

    /// Idle for 2 s (a request that was passed on has had its answer, or waits unusually long).
    func mayMakeRoom(now: Double) -> Bool { isIdle && now - lastActivity >= 2 }

    /// Ends a head that takes too long, and a connection with nothing under way for too long.
    func expire(now: Double) {
        if let started = headStarted, now - started > WebRequestGate.headSeconds {
            refuse(408, "Request Timeout", "the request head took more than \(Int(WebRequestGate.headSeconds)) s")
        } else if isIdle && now - lastActivity > WebRequestGate.idleSeconds {
            failed = true
        }
    }

    func close() {
        Glibc.close(client)
        Glibc.close(upstream)
    }

    private func take(_ bytes: ArraySlice<UInt8>, now: Double) {
        if filter == .head && head.isEmpty && headStarted == nil { headStarted = now }
        switch RequestFilter.take(bytes, phase: &filter, head: &head, into: &toUpstream) {
        case .passed:
            headStarted = filter == .head && !head.isEmpty ? (headStarted ?? now) : nil
        case .refused(let code, let phrase, let why):
            refuse(code, phrase, why)
        }
    }

    private func refuse(_ code: Int, _ phrase: String, _ why: String) {
        guard !refusing else { return }
        refusing = true
        headStarted = nil
        let body = why + "\n"
        toClient += Array(
            ("HTTP/1.1 \(code) \(phrase)\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n"
                + "Content-Length: \(body.utf8.count)\r\n\r\n" + body).utf8)
    }

    private enum Received {
        case bytes([UInt8])
        case ended
        case failed
        case none
    }

    private static func receive(_ fd: Int32) -> Received {
        var buffer = [UInt8](repeating: 0, count: 16_384)
        let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        if n > 0 { return .bytes(Array(buffer[0..<n])) }
        if n == 0 { return .ended }
        return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? .none : .failed
    }

    /// Sends what it can; false when the socket failed.
    private static func send(_ pending: inout [UInt8], to fd: Int32) -> Bool {
        let n = pending.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        if n > 0 {
            pending.removeFirst(n)
            return true
        }
        return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
    }
}

// The web gate's request filter: what of a client's bytes reaches the HTTP server. Heads pass whole and
// only then, bodies by their length, a WebSocket raw; what has no bound gets a refusal.
@testable import OSCControl
import Testing

@Suite struct RequestFilterTests {
    private struct Client {
        var phase = RequestFilter.Phase.head
        var head: [UInt8] = []
        var passed: [UInt8] = []

        mutating func send(_ text: String) -> RequestFilter.Outcome { send(Array(text.utf8)) }

        mutating func send(_ bytes: [UInt8]) -> RequestFilter.Outcome {
            RequestFilter.take(bytes[...], phase: &phase, head: &head, into: &passed)
        }

        var passedText: String { String(decoding: passed, as: UTF8.self) }
    }

    private static let get = "GET /?HOST_INFO HTTP/1.1\r\nHost: 127.0.0.1:57131\r\n\r\n"

    @Test func aHeadPassesWholeAndOnlyOnceItIsWhole() {
        var client = Client()
        for byte in Self.get.utf8.dropLast() {
            #expect(client.send([byte]) == .passed)
            #expect(client.passed.isEmpty)
        }
        #expect(client.send("\n") == .passed)
        #expect(client.passedText == Self.get)
        #expect(client.phase == .head && client.head.isEmpty)
        // A reader that ends lines with \n alone is served as the server would serve it.
        var bare = Client()
        #expect(bare.send("GET / HTTP/1.1\nHost: localhost\n\n") == .passed)
        #expect(bare.passedText == "GET / HTTP/1.1\nHost: localhost\n\n")
    }

    @Test func pipelinedRequestsAndBodiesPassByTheirLengths() {
        var client = Client()
        let post = "POST /x HTTP/1.1\r\nHost: localhost\r\nContent-Length: 5\r\n\r\nhello"
        #expect(client.send(post + Self.get + "GET /a") == .passed)
        #expect(client.passedText == post + Self.get)
        #expect(client.phase == .head && String(decoding: client.head, as: UTF8.self) == "GET /a")
        // A body split across reads passes as it comes.
        var split = Client()
        #expect(split.send("PUT / HTTP/1.1\r\nContent-Length: 10\r\n\r\n0123") == .passed)
        #expect(split.phase == .body(6))
        #expect(split.send("456789GET") == .passed)
        #expect(split.passedText.hasSuffix("0123456789"))
        #expect(split.phase == .head && String(decoding: split.head, as: UTF8.self) == "GET")
    }

    @Test func aWebSocketPassesRawAfterItsUpgrade() {
        var client = Client()
        let upgrade =
            "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
        let frame: [UInt8] = [0x82, 0x85, 1, 2, 3, 4, 10, 13, 10, 13, 10]  // a masked frame with CRLFs in it
        #expect(client.send(Array(upgrade.utf8) + frame) == .passed)
        #expect(client.phase == .raw)
        #expect(client.passed == Array(upgrade.utf8) + frame)
        let long = [UInt8](repeating: 0x61, count: 100_000)
        #expect(client.send(long) == .passed)
        #expect(client.passed.count == upgrade.utf8.count + frame.count + long.count)
    }

    @Test func unboundedHeadsAreRefusedBeforeAnyOfThemPasses() {
        // A long URL: refused once the request line passes the line limit, whole or in pieces.
        var url = Client()
        let line = "GET /" + String(repeating: "a", count: 100_000)
        #expect(url.send(line) == .refused(414, "URI Too Long", "the request line is longer than 8192 bytes"))
        #expect(url.passed.isEmpty)
        var pieces = Client()
        var outcome = RequestFilter.Outcome.passed
        for _ in 0..<20 where outcome == .passed { outcome = pieces.send(String(repeating: "a", count: 1000)) }
        #expect(outcome != .passed && pieces.passed.isEmpty)
        // A long header line, and many short ones.
        var header = Client()
        if case .refused(let code, _, _) = header.send(
            "GET / HTTP/1.1\r\nX-Big: " + String(repeating: "b", count: 9000))
        {
            #expect(code == 431)
        } else {
            Issue.record("a 9000-byte header line passed")
        }
        var many = Client()
        let fields = (0..<1000).map { "X-Field-\($0): value\r\n" }.joined()
        if case .refused(let code, _, _) = many.send("GET / HTTP/1.1\r\n" + fields) {
            #expect(code == 431)
        } else {
            Issue.record("a 22 kB head of short lines passed")
        }
        #expect(many.passed.isEmpty)
    }

    /// Two Host fields (the server read the last, so `evil` then `127.0.0.1` passed the host check) and
    /// an absolute URI, whose authority overrides Host, are refused before the server reads them.
    @Test func ambiguousHostsAreRefused() {
        var twice = Client()
        let outcome = twice.send("GET / HTTP/1.1\r\nHost: evil.example\r\nHost: 127.0.0.1:57131\r\n\r\n")
        #expect(outcome == .refused(400, "Bad Request", "more than one Host header"))
        #expect(twice.passed.isEmpty)
        var absolute = Client()
        #expect(
            absolute.send("GET http://evil.example/ HTTP/1.1\r\nHost: 127.0.0.1:57131\r\n\r\n")
                == .refused(400, "Bad Request", "the request target must be a path (/…), not an absolute URI"))
        #expect(absolute.passed.isEmpty)
        var options = Client()
        #expect(options.send("OPTIONS * HTTP/1.1\r\nHost: localhost\r\n\r\n") == .passed)
    }

    @Test func bodiesTheServerCannotTakeAreRefused() {
        var chunked = Client()
        #expect(
            chunked.send("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n")
                == .refused(501, "Not Implemented", "request bodies in chunks are not taken"))
        var huge = Client()
        if case .refused(let code, _, _) = huge.send("POST / HTTP/1.1\r\nContent-Length: 5000000\r\n\r\n") {
            #expect(code == 413)
        } else {
            Issue.record("a 5 MB body was announced and passed")
        }
        var bad = Client()
        #expect(
            bad.send("POST / HTTP/1.1\r\nContent-Length: -3\r\n\r\n")
                == .refused(400, "Bad Request", "Content-Length '-3'"))
        #expect(chunked.passed.isEmpty && huge.passed.isEmpty && bad.passed.isEmpty)
    }
}

// Any thread (pure). What the web gate (`WebRequestGate`) lets through of a client's bytes: each
// request head once it is whole and within bounds, the body its Content-Length announces, and after a
// WebSocket upgrade everything. A head too long, a line too long, a chunked or oversized body, a second
// Host field or an absolute-URI target get an HTTP refusal instead.
enum RequestFilter {
    enum Phase: Equatable {
        /// Collecting a request head.
        case head
        /// Passing on this many more body bytes.
        case body(Int)
        /// A WebSocket: everything passes.
        case raw
    }

    enum Outcome: Equatable {
        case passed
        /// The status, its phrase and why, for the refusal sent back.
        case refused(Int, String, String)
    }

    /// Takes `bytes` from the client: what may pass is appended to `out`; `head` holds a head still
    /// incomplete between calls.
    static func take(
        _ bytes: ArraySlice<UInt8>, phase: inout Phase, head: inout [UInt8], into out: inout [UInt8]
    ) -> Outcome {
        var rest = bytes
        while !rest.isEmpty {
            switch phase {
            case .raw:
                out += rest
                return .passed
            case .body(let remaining):
                let count = min(remaining, rest.count)
                out += rest.prefix(count)
                rest = rest.dropFirst(count)
                phase = remaining == count ? .head : .body(remaining - count)
            case .head:
                let searchFrom = max(0, head.count - 2)
                head += rest
                rest = []
                guard let end = endOfHead(head, from: searchFrom) else {
                    let lineStart = head.lastIndex(of: newline).map { $0 + 1 } ?? 0
                    if head.count - lineStart > WebRequestGate.maximumLine {
                        return lineStart == 0 ? uriTooLong : fieldsTooLarge
                    }
                    return head.count > WebRequestGate.maximumHead ? fieldsTooLarge : .passed
                }
                let whole = Array(head[..<end])
                rest = head[end...]
                head = []
                switch next(after: whole) {
                case .failure(let refusal):
                    return refusal.outcome
                case .success(let following):
                    out += whole
                    phase = following
                }
            }
        }
        return .passed
    }

    private static let newline: UInt8 = 10
    private static let carriageReturn: UInt8 = 13
    private static let uriTooLong = Outcome.refused(
        414, "URI Too Long", "the request line is longer than \(WebRequestGate.maximumLine) bytes")
    private static let fieldsTooLarge = Outcome.refused(
        431, "Request Header Fields Too Large",
        "the request head is longer than \(WebRequestGate.maximumHead) bytes or has a line longer than "
            + "\(WebRequestGate.maximumLine)")

    /// The index just past the empty line that ends a head (`\r\n\r\n` or `\n\n`, as the server's reader
    /// takes either), looking from `start`; nil when there is none yet.
    static func endOfHead(_ bytes: [UInt8], from start: Int) -> Int? {
        var i = start
        while i < bytes.count {
            if bytes[i] == newline && i > 0 {
                if i + 1 < bytes.count && bytes[i + 1] == newline { return i + 2 }
                if i + 2 < bytes.count && bytes[i + 1] == carriageReturn && bytes[i + 2] == newline { return i + 3 }
            }
            i += 1
        }
        return nil
    }

    private struct Refusal: Error {
        let outcome: Outcome
    }

    /// What follows a whole head: its body, a WebSocket, or the next head; or why it is refused.
    private static func next(after head: [UInt8]) -> Result<Phase, Refusal> {
        let lines = head.split(separator: newline, omittingEmptySubsequences: false)
        if let first = lines.first, first.count > WebRequestGate.maximumLine {
            return .failure(Refusal(outcome: uriTooLong))
        }
        if lines.contains(where: { $0.count > WebRequestGate.maximumLine }) {
            return .failure(Refusal(outcome: fieldsTooLarge))
        }
        // Origin-form targets only (`/path`, or `*`): an absolute URI names a host of its own, which
        // would override the Host the gate checks (RFC 9112 §3.2.2); this server is no proxy.
        if let first = lines.first {
            let words = first.split(separator: UInt8(ascii: " "))
            if words.count >= 2, let start = words[1].first, start != UInt8(ascii: "/"), start != UInt8(ascii: "*") {
                return .failure(
                    Refusal(
                        outcome: .refused(
                            400, "Bad Request", "the request target must be a path (/…), not an absolute URI")))
            }
        }
        var length: Int?
        var upgrade = false
        var hosts = 0
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else { continue }
            let name = String(decoding: line[..<colon], as: UTF8.self).trimmingSpaces().lowercased()
            let value = String(decoding: line[line.index(after: colon)...], as: UTF8.self).trimmingSpaces()
            switch name {
            case "content-length":
                guard let n = Int(value), n >= 0, length == nil || length == n else {
                    return .failure(Refusal(outcome: .refused(400, "Bad Request", "Content-Length '\(value)'")))
                }
                length = n
            case "transfer-encoding":
                return .failure(
                    Refusal(outcome: .refused(501, "Not Implemented", "request bodies in chunks are not taken")))
            case "host":
                // Two Host fields leave which host was meant to whoever reads last (RFC 9112 §3.2).
                hosts += 1
                if hosts > 1 {
                    return .failure(Refusal(outcome: .refused(400, "Bad Request", "more than one Host header")))
                }
            case "upgrade":
                upgrade = value.lowercased().contains("websocket")
            default:
                break
            }
        }
        if let length, length > WebRequestGate.maximumBody {
            return .failure(
                Refusal(
                    outcome: .refused(
                        413, "Content Too Large", "request bodies of more than \(WebRequestGate.maximumBody) bytes")))
        }
        if upgrade { return .success(.raw) }
        if let length, length > 0 { return .success(.body(length)) }
        return .success(.head)
    }
}

extension String {
    /// Without leading and trailing spaces, tabs and carriage returns.
    fileprivate func trimmingSpaces() -> String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\r" }
        return String(drop(while: isSpace).reversed().drop(while: isSpace).reversed())
    }
}

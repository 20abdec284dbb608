// Any thread. One WebSocket of the web server as the OSC thread sees it (where its frames go), the
// work the web server hands to the OSC thread, and the OSC thread's record of the sockets.
import Foundation

/// A frame for a WebSocket: binary (an OSC packet) or text (an OSCQuery JSON command).
enum WebFrame: Sendable, Equatable {
    case binary([UInt8])
    case text(String)
}

/// A WebSocket client of the web server. Sending never blocks: frames queue for the socket's writer,
/// and a client that stops reading loses the oldest frames beyond a bound (meters, values) rather than
/// holding memory.
final class WebClient: Sendable {
    let id: Int
    /// Requests that would change the engine get `/error 14` (`--http-read-only`).
    let isReadOnly: Bool
    private let sink: @Sendable (WebFrame) -> Void

    init(id: Int, isReadOnly: Bool, sink: @escaping @Sendable (WebFrame) -> Void) {
        self.id = id
        self.isReadOnly = isReadOnly
        self.sink = sink
    }

    /// The client's key in the client table and subscriptions.
    var key: String { "ws:\(id)" }

    func send(_ frame: WebFrame) { sink(frame) }
}

/// An OSCQuery request (`GET path?attribute`) and where its answer goes.
struct WebQuery: Sendable {
    /// The OSC address asked for ("/" for the whole tree).
    var path: String
    /// `HOST_INFO`, an attribute name (`VALUE`, `RANGE`…), or nil for the node itself.
    var attribute: String?
    var answer: @Sendable (WebQueryAnswer) -> Void
}

/// What an OSCQuery request gets: 200 with JSON, 204 (the attribute exists but the node has no value),
/// or 404 (no such address) / 400 (an attribute OSCQuery does not define).
struct WebQueryAnswer: Sendable, Equatable {
    var status: Int
    var json: Data

    /// The service stopped before it could answer.
    static let unavailable = WebQueryAnswer(status: 503, json: Data(#"{"ERROR":"Soundstage is stopping"}"#.utf8))
}

/// What the web server hands to the OSC thread.
enum WebInboxItem: Sendable {
    case opened(WebClient)
    /// A binary frame: one OSC packet.
    case packet(WebClient, [UInt8])
    /// A text frame: an OSCQuery command (`{"COMMAND":"LISTEN","DATA":"/node/a/volume"}`).
    case text(WebClient, String)
    case closed(WebClient)
    case query(WebQuery)
}

/// The OSC thread's record of the web server's sockets.
struct WebState {
    var clients: [Int: WebClient] = [:]
    /// Client id → the OSC addresses it listens to.
    var listens: [Int: Set<String>] = [:]
    /// Client id → address → the value last sent.
    var sent: [Int: [String: [OSCArgument]]] = [:]
    var nextListenCheck = 0.0
    /// Seconds between checks of listened values (OSCQuery LISTEN).
    static let listenInterval = 0.02
}

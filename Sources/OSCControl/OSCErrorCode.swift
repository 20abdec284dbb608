// Control side. The numeric codes of `/error s:address i:code s:message` (table in docs/OSC.md).
import AudioGraph

/// Stable error codes sent over OSC: every engine code (`EngineError.Code`, 10–59) by construction, and the
/// OSC layer's own failures (60 and up). A code the engine adds is an OSC code at once, with its number;
/// the exhaustive `meaning` switch makes the compiler ask for its description.
public enum OSCErrorCode: Hashable, Sendable, CaseIterable, CustomStringConvertible {
    /// A refusal by the engine, sent with the engine's own number.
    case engine(EngineError.Code)
    /// A failure of the OSC layer.
    case layer(Layer)

    /// Failures of the OSC layer (60 and up; the engine's codes stay below 60).
    public enum Layer: Int32, Hashable, Sendable, CaseIterable {
        /// No address (or, for a pattern, no node address) matches.
        case unknownAddress = 60
        /// Wrong number or types of arguments for the address.
        case badArguments = 61
        /// The packet is not valid OSC (bad alignment, strings, type tags, bundle sizes…).
        case malformedPacket = 62
        /// The packet is larger than the server's maximum packet size.
        case packetTooLarge = 63
        /// A file path lies outside the allowed file roots.
        case fileOutsideRoots = 64
        /// A time tag too far in the future (more than the scheduling horizon).
        case badTimetag = 65
        /// `/renew` or `/meters` without an active `/notify` subscription.
        case notSubscribed = 66
        /// A patch file could not be loaded or saved (the message lists the problems).
        case patchError = 67
        /// A JACK port operation failed (unknown port, refused, server not running).
        case jackError = 68
        /// The address exists but this engine cannot do it (no JACK host, no quit handler…).
        case unsupported = 69
        /// The engine is not rendering, so the request cannot complete (e.g. /sync timed out).
        case notRendering = 70
        /// Too many future bundles are waiting; this one was dropped.
        case scheduleFull = 71
        /// `/sched/cancel` named a bundle that is not waiting (handed to the engine, cancelled, unknown).
        case unknownBundle = 72
        /// `/recorder/new` named a file another recorder already writes to.
        case pathInUse = 73
    }

    /// The OSC code for an engine error: the same number.
    public init(_ code: EngineError.Code) { self = .engine(code) }

    /// The number sent in `/error`.
    public var rawValue: Int32 {
        switch self {
        case .engine(let code): return Int32(code.rawValue)
        case .layer(let code): return code.rawValue
        }
    }

    /// Every code: the engine's, then the OSC layer's.
    public static var allCases: [OSCErrorCode] {
        EngineError.Code.allCases.map(OSCErrorCode.engine) + Layer.allCases.map(OSCErrorCode.layer)
    }

    /// The code's name, as in docs/OSC.md's table (`unknownNode`, `badArguments`…).
    public var description: String {
        switch self {
        case .engine(let code): return "\(code)"
        case .layer(let code): return "\(code)"
        }
    }

    /// A one-line meaning, for docs/OSC.md.
    public var meaning: String {
        switch self {
        case .engine(let code):
            switch code {
            case .unknownNode: return "no node with that name"
            case .duplicateName: return "a node with that name already exists"
            case .invalidName: return "not a valid node or buffer name (letters, digits, `_`, `-`, `.`; 1–64)"
            case .unknownKind: return "no node kind with that name"
            case .notAllowed: return "not allowed for this node (built-in node, wrong kind for a player command)"
            case .unknownParameter: return "the node kind has no parameter with that name"
            case .wrongType: return "the value has the wrong type for the parameter"
            case .outOfRange: return "the value is outside the parameter's range (never clamped)"
            case .readOnly: return "the parameter is read-only"
            case .invalidBus: return "no such bus on the node, or a malformed `node:bus` endpoint"
            case .cycle: return "the connection would make a cycle"
            case .notConnected: return "nothing to disconnect"
            case .unknownBuffer: return "no buffer with that name"
            case .bufferMismatch: return "the buffer does not fit (rate, empty, region)"
            case .fileError: return "the file cannot be read or decoded"
            case .busy: return "the render thread is not keeping up (command queue full); try again"
            }
        case .layer(let code):
            switch code {
            case .unknownAddress: return "no such address; for a pattern: it matches no node address"
            case .badArguments: return "wrong number or types of arguments"
            case .malformedPacket: return "the packet is not valid OSC"
            case .packetTooLarge: return "the packet exceeds the maximum packet size"
            case .fileOutsideRoots: return "the path is outside the allowed file roots (`--file-root`)"
            case .badTimetag: return "the time tag is further ahead than the scheduling horizon"
            case .notSubscribed: return "the client has no active `/notify` subscription"
            case .patchError: return "the patch could not be loaded or saved (all problems listed)"
            case .jackError: return "a JACK port operation failed"
            case .unsupported: return "this engine cannot do that (no JACK host, no quit handler)"
            case .notRendering: return "the engine is not rendering, so the request cannot complete"
            case .scheduleFull: return "too many future bundles are waiting"
            case .unknownBundle: return "no future bundle with that id is waiting (`/sched/list`)"
            case .pathInUse: return "another recorder already writes to that file (`/recorder/new`)"
            }
        }
    }
}

/// A refused OSC request: the code and message of its `/error` reply.
struct OSCFailure: Error, Sendable {
    var code: OSCErrorCode
    var message: String

    init(_ code: OSCErrorCode, _ message: String) {
        self.code = code
        self.message = message
    }

    /// A refusal with an engine code (`OSCFailure(.unknownNode, …)`).
    init(_ code: EngineError.Code, _ message: String) {
        self.init(.engine(code), message)
    }

    /// A failure of the OSC layer (`OSCFailure(.badArguments, …)`).
    init(_ code: OSCErrorCode.Layer, _ message: String) {
        self.init(.layer(code), message)
    }

    init(_ error: EngineError) {
        self.init(.engine(error.code), error.message)
    }
}

// Control side. The numeric codes of `/error s:address i:code s:message` (table in docs/OSC.md).
import AudioGraph

/// Stable error codes sent over OSC. 10–59 are the engine's own `EngineError.Code` values; 60 and up
/// are failures of the OSC layer.
public enum OSCErrorCode: Int32, Sendable, CaseIterable {
    // Engine (same numbers as EngineError.Code).
    case unknownNode = 10
    case duplicateName = 11
    case invalidName = 12
    case unknownKind = 13
    case notAllowed = 14
    case unknownParameter = 20
    case wrongType = 21
    case outOfRange = 22
    case readOnly = 23
    case invalidBus = 30
    case cycle = 31
    case notConnected = 32
    case unknownBuffer = 40
    case bufferMismatch = 41
    case fileError = 42
    case busy = 50
    // OSC layer.
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

    /// The OSC code for an engine error.
    public init(_ code: EngineError.Code) {
        self = OSCErrorCode(rawValue: Int32(code.rawValue)) ?? .busy
    }

    /// A one-line meaning, for docs/OSC.md.
    public var meaning: String {
        switch self {
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

    init(_ error: EngineError) {
        code = OSCErrorCode(error.code)
        message = error.message
    }
}

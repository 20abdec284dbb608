// Control side. Every way a control request can fail, with a stable numeric code for OSC replies.

/// A refused request. Nothing has changed when one is thrown.
public struct EngineError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Stable codes (documented in docs/OSC.md's error table). 10–59; OSC's `/error` replies carry them
    /// unchanged, beside the OSC layer's own codes (60 and up).
    public enum Code: Int, Sendable, CaseIterable {
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
    }

    public var code: Code
    public var message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }
}

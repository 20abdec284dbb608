// Control side. One end of a connection, written "node" or "node:bus".

/// One end of a connection: a node, and optionally one of its buses.
///
/// Text form: `node` or `node:bus`, where `bus` is a decimal integer ≥ 0 (digits only, no sign).
/// A missing bus means the engine's default for that node (normally bus 0).
public struct PatchEndpoint: Sendable, Hashable, CustomStringConvertible {
    /// Why a text is not a valid endpoint.
    public struct SyntaxError: Error, Sendable, Equatable, CustomStringConvertible {
        /// A one-line message naming the problem, without location.
        public var message: String
        public var description: String { message }
    }

    /// The node name (valid per the ``PatchNameRule`` it was parsed with).
    public var node: String
    /// The bus index, or `nil` when the text gave none.
    public var bus: Int?

    /// Creates an endpoint without checking the name.
    public init(node: String, bus: Int? = nil) {
        self.node = node
        self.bus = bus
    }

    /// Parses `node` or `node:bus`.
    ///
    /// Rejects an empty text, a missing node (`:3`), a missing bus (`p1:`), a bus that is not
    /// a decimal integer ≥ 0 (`p1:x`, `p1:-1`) and a node name `names` refuses.
    public init(parsing text: String, names: PatchNameRule) throws(SyntaxError) {
        if text.isEmpty {
            throw SyntaxError(message: "endpoint is empty; expected \"node\" or \"node:bus\"")
        }
        guard let colon = text.firstIndex(of: ":") else {
            if let problem = names.problem(text, "node name") {
                throw SyntaxError(message: "\(problem) in endpoint '\(text)'")
            }
            self.init(node: text, bus: nil)
            return
        }
        let node = String(text[..<colon])
        let busText = String(text[text.index(after: colon)...])
        if node.isEmpty {
            throw SyntaxError(message: "endpoint '\(text)' has no node name before ':'")
        }
        if let problem = names.problem(node, "node name") {
            throw SyntaxError(message: "\(problem) in endpoint '\(text)'")
        }
        if busText.isEmpty {
            throw SyntaxError(message: "endpoint '\(text)' has no bus number after ':'")
        }
        guard busText.unicodeScalars.allSatisfy({ ("0"..."9").contains($0) }), let bus = Int(busText) else {
            throw SyntaxError(message: "bus '\(busText)' in endpoint '\(text)' must be an integer >= 0")
        }
        self.init(node: node, bus: bus)
    }

    /// `node` or `node:bus`, the form ``init(parsing:)`` reads.
    public var description: String {
        bus.map { "\(node):\($0)" } ?? node
    }
}

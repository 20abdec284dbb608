// Control side. What `JackHost.start()` achieved: the names in force and each requested connection.

/// The outcome of one requested connection.
public struct JackConnectionResult: Sendable, Equatable, CustomStringConvertible {
    /// How a connection request ended.
    public enum Outcome: Sendable, Equatable {
        case connected
        /// The ports were already connected (JACK's EEXIST); counts as success.
        case alreadyConnected
        /// Why it failed, in words (unknown port, wrong direction, refused by the server…).
        case failed(String)
        /// Asked while the server is away: the request waits, and is carried out when it returns (a
        /// connection is made once both ports exist; a removal keeps it from coming back).
        case waitingForServer
    }

    /// Full name of the output (source) port, after resolving our own short names.
    public var source: String
    /// Full name of the input (destination) port.
    public var destination: String
    public var outcome: Outcome

    public init(source: String, destination: String, outcome: Outcome) {
        self.source = source
        self.destination = destination
        self.outcome = outcome
    }

    /// The failure of a request naming a port that does not exist.
    static func noPort(_ name: String) -> String { "no port named '\(name)' (jack_lsp lists the ports)" }

    /// A removal that failed because a port no longer exists: the connection went with the port.
    public var portIsGone: Bool {
        guard case .failed(let why) = outcome else { return false }
        return why == Self.noPort(source) || why == Self.noPort(destination)
    }

    /// True when the two ports end up connected (for a request waiting for the server: as it asks).
    public var isConnected: Bool {
        switch outcome {
        case .connected, .alreadyConnected, .waitingForServer: return true
        case .failed: return false
        }
    }

    public var description: String {
        switch outcome {
        case .connected: return "\(source) -> \(destination)"
        case .alreadyConnected: return "\(source) -> \(destination) (already connected)"
        case .failed(let why): return "\(source) -> \(destination) FAILED: \(why)"
        case .waitingForServer: return "\(source) -> \(destination) (the server is away: after its return)"
        }
    }
}

/// What a successful `JackHost.start()` opened.
public struct JackHostStartReport: Sendable, Equatable {
    /// The name asked for in the configuration.
    public var requestedClientName: String
    /// The name JACK gave the client (differs when the requested one was taken).
    public var actualClientName: String
    /// The server the client is on.
    public var serverName: String
    /// Server sample rate in Hz.
    public var sampleRate: Int
    /// Server period in frames.
    public var bufferSize: Int
    /// Full names of our playback ports (`actualClientName:out_1`, …).
    public var outputPorts: [String]
    /// Full names of our capture ports (`actualClientName:in_1`, …).
    public var inputPorts: [String]
    /// Every connection attempted (physical ones first, then the configured ones), in order.
    public var connections: [JackConnectionResult]

    /// True when JACK renamed the client because the requested name was taken.
    public var wasRenamed: Bool { actualClientName != requestedClientName }

    /// The attempts that failed.
    public var failedConnections: [JackConnectionResult] { connections.filter { !$0.isConnected } }
}

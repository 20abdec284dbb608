// Control side only (jack_get_ports allocates, jack_connect talks to jackd): listing, connecting and
// disconnecting ports by full name on an open client. Never call these from the process callback.
import CJack
import Glibc

/// Port queries and connections on an open JACK client (`jack_client_t *`).
///
/// `JackHost` wraps these for its own client (resolving `out_1`-style short names); the functions are
/// public so other control-side code holding a client can use them too.
public enum JackPorts {
    /// Which physical ports to list.
    public enum Direction: Sendable {
        /// Physical sinks (`system:playback_N`): our outputs connect to them.
        case playback
        /// Physical sources (`system:capture_N`): they connect to our inputs.
        case capture
    }

    /// Registers an audio port of `client` named `shortName` (flags: JackPortIsInput or JackPortIsOutput)
    /// and returns it with its full name, or nil when JACK refuses it.
    ///
    /// `jack_port_register`'s result is not trusted as it is: a reply read short (libjack then prints
    /// "JackClientSocket::Read time out" and goes on; seen when requests overlapped, before
    /// `JackRequests`) hands back whatever index the buffer held, which may name no port or another
    /// client's. A result is kept only if it is a port of this client with the name asked for; otherwise
    /// the port is looked up by its full name, in case the server did register it.
    public static func register(client: OpaquePointer, shortName: String, flags: UInt) -> (
        port: OpaquePointer, name: String
    )? {
        if let port = JackRequests.serialized({
            jack_port_register(client, shortName, JACK_DEFAULT_AUDIO_TYPE, flags, 0)
        }),
            let name = ownName(client: client, port: port, shortName: shortName)
        {
            return (port, name)
        }
        guard let clientName = jack_get_client_name(client) else { return nil }
        let fullName = String(cString: clientName) + ":" + shortName
        guard let port = jack_port_by_name(client, fullName),
            let name = ownName(client: client, port: port, shortName: shortName),
            UInt(bitPattern: Int(jack_port_flags(port))) & flags == flags
        else { return nil }
        return (port, name)
    }

    /// The full name of `port` if it is one of `client`'s ports named `shortName`, else nil.
    static func ownName(client: OpaquePointer, port: OpaquePointer, shortName: String) -> String? {
        // jack_port_is_mine answers -1 for an index that names no port, 1 for ours.
        guard jack_port_is_mine(client, port) == 1, let short = jack_port_short_name(port),
            String(cString: short) == shortName, let name = jack_port_name(port)
        else { return nil }
        return String(cString: name)
    }

    /// The full name of `port`, or nil when it names no port (libjack returns NULL then).
    public static func name(of port: OpaquePointer) -> String? {
        jack_port_name(port).map { String(cString: $0) }
    }

    /// Full names of the physical audio ports in `direction`, in the server's order.
    public static func physicalPorts(client: OpaquePointer, direction: Direction) -> [String] {
        // A physical playback port is an input of the graph (audio flows into it), and vice versa.
        let flag = direction == .playback ? JackPortIsInput.rawValue : JackPortIsOutput.rawValue
        return ports(
            client: client, pattern: nil, type: JACK_DEFAULT_AUDIO_TYPE,
            flags: UInt(flag | JackPortIsPhysical.rawValue))
    }

    /// Full names of ports matching `pattern` (a regular expression, nil for all), `type` (nil for all)
    /// and every bit of `flags` (JackPortFlags; 0 for any).
    public static func ports(client: OpaquePointer, pattern: String?, type: String?, flags: UInt) -> [String] {
        guard let list = jack_get_ports(client, pattern, type, flags) else { return [] }
        defer { jack_free(UnsafeMutableRawPointer(mutating: list)) }
        var names: [String] = []
        var index = 0
        while let name = list[index] {
            names.append(String(cString: name))
            index += 1
        }
        return names
    }

    /// Full names of the ports connected to `port`; empty when there are none or `port` is unknown.
    public static func connections(client: OpaquePointer, port: String) -> [String] {
        guard let handle = jack_port_by_name(client, port),
            let list = jack_port_get_all_connections(client, handle)
        else { return [] }
        defer { jack_free(UnsafeMutableRawPointer(mutating: list)) }
        var names: [String] = []
        var index = 0
        while let name = list[index] {
            names.append(String(cString: name))
            index += 1
        }
        return names
    }

    /// jackd (jack2) publishes graph changes at the next cycle boundary, so a connection just made may
    /// not be visible yet: polls for up to `pollLimit` × 5 ms = 250 ms (many periods at any usual size).
    static let pollLimit = 50

    private static func becomesConnected(_ port: OpaquePointer, _ other: String) -> Bool {
        for _ in 0..<pollLimit {
            if jack_port_connected_to(port, other) != 0 { return true }
            usleep(5_000)
        }
        return false
    }

    /// Connects two ports given by full name. The pair may be given in either order: the output port
    /// becomes the source. Already connected counts as success. The result is checked with
    /// `jack_port_connected_to`, because a server started with `-a a` returns 0 while ignoring
    /// self-connect requests.
    public static func connect(client: OpaquePointer, _ first: String, _ second: String) -> JackConnectionResult {
        switch requestConnection(client: client, first, second) {
        case .answered(let result):
            return result
        case .awaiting(let request):
            guard let port = jack_port_by_name(client, request.source), becomesConnected(port, request.destination)
            else { return request.ignored }
            return request.result
        }
    }

    /// A connection jackd accepted and has not shown in the graph yet.
    public struct ConnectionRequest: Sendable {
        public let source: String
        public let destination: String
        /// The outcome once the graph shows it.
        public let result: JackConnectionResult
        /// The outcome when it never does.
        public var ignored: JackConnectionResult {
            JackConnectionResult(
                source: source, destination: destination,
                outcome: .failed("the server ignored the request (self-connect policy `jackd -a`?)"))
        }
    }

    public enum ConnectionStep: Sendable {
        case answered(JackConnectionResult)
        case awaiting(ConnectionRequest)
    }

    /// The first half of `connect`: asks jackd for the connection and returns, without waiting for the
    /// graph to show it (`isConnected` tells), so a caller can wait without holding its locks.
    public static func requestConnection(client: OpaquePointer, _ first: String, _ second: String) -> ConnectionStep {
        switch orient(client: client, first, second) {
        case .failure(let failed):
            return .answered(failed.result)
        case .success(let (source, destination, sourcePort)):
            if jack_port_connected_to(sourcePort, destination) != 0 {
                return .answered(
                    JackConnectionResult(source: source, destination: destination, outcome: .alreadyConnected))
            }
            let code = JackRequests.serialized { jack_connect(client, source, destination) }
            if code != 0 && code != EEXIST {
                return .answered(
                    JackConnectionResult(
                        source: source, destination: destination,
                        outcome: .failed(
                            "jack_connect returned \(code) (incompatible port types"
                                + " or refused by the server's self-connect policy)")))
            }
            return .awaiting(
                ConnectionRequest(
                    source: source, destination: destination,
                    result: JackConnectionResult(
                        source: source, destination: destination,
                        outcome: code == EEXIST ? .alreadyConnected : .connected)))
        }
    }

    /// Whether the graph shows `source` (an output) connected to `destination`.
    public static func isConnected(client: OpaquePointer, _ source: String, _ destination: String) -> Bool {
        guard let port = jack_port_by_name(client, source) else { return false }
        return jack_port_connected_to(port, destination) != 0
    }

    /// Disconnects two ports given by full name, in either order. Returns `.connected` as the outcome
    /// when a connection was removed, `.failed` otherwise (including "were not connected").
    public static func disconnect(client: OpaquePointer, _ first: String, _ second: String) -> JackConnectionResult {
        switch orient(client: client, first, second) {
        case .failure(let failed):
            return failed.result
        case .success(let (source, destination, sourcePort)):
            // Asked of the server, not of our view of the graph, which lags by up to a cycle.
            let code = JackRequests.serialized { jack_disconnect(client, source, destination) }
            if code != 0 {
                let reason =
                    jack_port_connected_to(sourcePort, destination) == 0
                    ? "not connected" : "jack_disconnect returned \(code)"
                return JackConnectionResult(source: source, destination: destination, outcome: .failed(reason))
            }
            return JackConnectionResult(source: source, destination: destination, outcome: .connected)
        }
    }

    /// Looks both ports up and orders them output → input.
    private static func orient(client: OpaquePointer, _ first: String, _ second: String)
        -> Result<(String, String, OpaquePointer), FailedConnection>
    {
        guard let a = jack_port_by_name(client, first) else {
            return .failure(FailedConnection(first, second, JackConnectionResult.noPort(first)))
        }
        guard let b = jack_port_by_name(client, second) else {
            return .failure(FailedConnection(first, second, JackConnectionResult.noPort(second)))
        }
        let output = UInt32(JackPortIsOutput.rawValue)
        let input = UInt32(JackPortIsInput.rawValue)
        let flagsA = UInt32(bitPattern: jack_port_flags(a))
        let flagsB = UInt32(bitPattern: jack_port_flags(b))
        if flagsA & output != 0 && flagsB & input != 0 { return .success((first, second, a)) }
        if flagsA & input != 0 && flagsB & output != 0 { return .success((second, first, b)) }
        let kind = flagsA & output != 0 ? "outputs" : "inputs"
        return .failure(FailedConnection(first, second, "both ports are \(kind); connect an output to an input"))
    }
}

/// A connection result that is an error (so it can travel in `Result`).
struct FailedConnection: Error {
    let result: JackConnectionResult
    init(_ source: String, _ destination: String, _ why: String) {
        result = JackConnectionResult(source: source, destination: destination, outcome: .failed(why))
    }
}

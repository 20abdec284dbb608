// Control side (the host's event thread). The route, as the audio session means it: where our main
// outputs go and where our main inputs come from, written as the ports they are connected to; and why
// it changed.

/// Why the route changed (AVAudioSession.RouteChangeReason, as JACK events give them).
public enum JackRouteChangeReason: String, Sendable, Equatable {
    /// A physical port appeared, or one of our main ports got a new connection.
    case newDeviceAvailable
    /// A connection of our main ports went (`outputsLostLastConnection`: the outputs play nowhere now).
    case oldDeviceUnavailable
    /// The server's period or sample rate changed.
    case routeConfigurationChange
}

/// A route change (`JackHostEvent.routeChanged`).
public struct JackRouteChange: Sendable, Equatable {
    public var reason: JackRouteChangeReason
    /// The ports our main outputs and inputs were connected to, sorted.
    public var previousRoute: [String]
    public var currentRoute: [String]
    /// True when our main outputs had a connection and now have none (headphones pulled).
    public var outputsLostLastConnection: Bool

    public init(
        reason: JackRouteChangeReason, previousRoute: [String], currentRoute: [String],
        outputsLostLastConnection: Bool = false
    ) {
        self.reason = reason
        self.previousRoute = previousRoute
        self.currentRoute = currentRoute
        self.outputsLostLastConnection = outputsLostLastConnection
    }
}

/// The route as last announced, and the physical ports seen. Guarded by `JackHostCore.route`.
struct JackRouteWatch: Sendable {
    /// Ports connected to our main outputs, and to our main inputs.
    var outputs: Set<String> = []
    var inputs: Set<String> = []
    var physicalPorts: Set<String> = []

    var route: [String] { outputs.union(inputs).sorted() }

    /// The change `edges` (every connection of our ports) makes, if any. `mainOutputs`/`mainInputs` are
    /// our main ports' full names.
    mutating func observe(edges: Set<JackEdge>, mainOutputs: Set<String>, mainInputs: Set<String>)
        -> JackRouteChange?
    {
        let outputs = Set(edges.filter { mainOutputs.contains($0.source) }.map(\.destination))
        let inputs = Set(edges.filter { mainInputs.contains($0.destination) }.map(\.source))
        guard outputs != self.outputs || inputs != self.inputs else { return nil }
        let previous = route
        let gained = !outputs.isSubset(of: self.outputs) || !inputs.isSubset(of: self.inputs)
        let lostLast = !self.outputs.isEmpty && outputs.isEmpty
        self.outputs = outputs
        self.inputs = inputs
        return JackRouteChange(
            reason: gained ? .newDeviceAvailable : .oldDeviceUnavailable, previousRoute: previous,
            currentRoute: route, outputsLostLastConnection: lostLast)
    }

    /// The change new physical ports make (the route itself stays), if any.
    mutating func observe(physicalPorts now: Set<String>) -> JackRouteChange? {
        defer { physicalPorts = now }
        guard !now.isSubset(of: physicalPorts) else { return nil }
        return JackRouteChange(reason: .newDeviceAvailable, previousRoute: route, currentRoute: route)
    }
}

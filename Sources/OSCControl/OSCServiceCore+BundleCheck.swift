// OSC thread. A bundle is checked whole before any of it applies: each message against the graph as the
// messages before it would leave it (`EditPlan`), so a bundle with a bad message changes nothing.
import AudioGraph

extension OSCServiceCore {
    /// Vector addresses and the parameters their three values set.
    private static let vectorKeys: [String: [String]] = [
        "position": ["positionX", "positionY", "positionZ"], "velocity": ["velocityX", "velocityY", "velocityZ"],
        "direction": ["directionX", "directionY", "directionZ"],
        "listener/position": ["listenerX", "listenerY", "listenerZ"]
    ]

    /// The first request of a bundle that would fail the checks `EditPlan` can make, with the failure;
    /// nil when every request passes them.
    func firstFailure(inBundle requests: [OSCRequest]) -> (request: OSCRequest, failure: OSCFailure)? {
        var plan = engine.planEdits()
        for request in requests {
            do throws(OSCFailure) {
                try check(request, in: &plan)
            } catch {
                return (request, error)
            }
        }
        return nil
    }

    /// Checks one request and records in `plan` what it would change.
    private func check(_ r: OSCRequest, in plan: inout EditPlan) throws(OSCFailure) {
        switch r.address {
        case "/node/new":
            let (kind, name, parameters) = try nodeNewArguments(r)
            try engineCall { () throws(EngineError) in try plan.attach(kind, name: name, parameters: parameters) }
        case "/node/free":
            let names = try Self.nodeFreeArguments(r)
            try engineCall { () throws(EngineError) in try plan.detach(names) }
        case "/graph/connect", "/graph/disconnect":
            var a = OSCArguments(r)
            let endpoints = [try a.string("source"), try a.string("destination")]
            try a.end()
            for endpoint in endpoints where !Self.isJackPortName(endpoint) {
                let node = String(endpoint.prefix { $0 != ":" })
                _ = try engineCall { () throws(EngineError) in try plan.kind(of: node) }
            }
        default:
            guard r.address.hasPrefix("/node/") else { return }
            let rest = r.address.dropFirst("/node/".count)
            guard let slash = rest.firstIndex(of: "/") else { return }
            let node = String(rest[..<slash])
            let tail = String(rest[rest.index(after: slash)...])
            let kind = try engineCall { () throws(EngineError) in try plan.kind(of: node) }
            guard !r.arguments.isEmpty else { return }
            if let keys = Self.vectorKeys[tail] {
                var a = OSCArguments(r)
                let values = [try a.double("x"), try a.double("y"), try a.double("z")]
                try a.end()
                for (key, value) in zip(keys, values) {
                    try engineCall { () throws(EngineError) in try plan.set(node, key, to: .float(value)) }
                }
                return
            }
            guard Self.nodeRoutes[tail] == nil, !tail.contains("/"), r.arguments.count == 1,
                let value = r.arguments[0].parameterValue
            else { return }
            if case .string(let path) = value, !path.isEmpty, kind.isFilePathParameter(tail) {
                _ = try resolve(path)
            }
            try engineCall { () throws(EngineError) in try plan.set(node, tail, to: value) }
        }
    }
}

// OSC thread. /graph/*: node connections, and JACK port connections when both ends are full JACK port
// names ("client:port", the part after ':' not a bus number; made on the worker).
import AudioGraph

extension OSCServiceCore {
    /// True for "client:port" (a JACK port), false for "node" or "node:bus".
    static func isJackPortName(_ text: String) -> Bool {
        guard let colon = text.firstIndex(of: ":") else { return false }
        let client = text[..<colon]
        let port = text[text.index(after: colon)...]
        return !client.isEmpty && !port.isEmpty && !port.allSatisfy(\.isNumber)
    }

    /// `/graph/connect s:source s:destination`, `/graph/disconnect s:source s:destination`
    func graphEdit(_ r: OSCRequest, connect: Bool) throws(OSCFailure) {
        var a = OSCArguments(r)
        let source = try a.string("source")
        let destination = try a.string("destination")
        try a.end()
        let jackSource = Self.isJackPortName(source)
        let jackDestination = Self.isJackPortName(destination)
        if jackSource || jackDestination {
            guard jackSource && jackDestination else {
                throw a.failure(
                    "give two node endpoints (\"node[:bus]\") or two full JACK port names "
                        + "(\"client:port\"), not one of each")
            }
            guard let host else { throw OSCFailure(.unsupported, "this engine has no JACK host") }
            // jackd answers within a period or so and the host then waits for the graph to show the
            // change: on the worker, so a burst of them never holds other requests or clients.
            let client = r.client.detached
            let address = r.address
            runJob {
                do throws(OSCHostError) {
                    if connect {
                        try host.connect(source, to: destination)
                    } else {
                        try host.disconnect(source, from: destination)
                    }
                    return { core in core.done(client, address, [.string(source), .string(destination)]) }
                } catch {
                    let failure = OSCFailure(.jackError, error.message)
                    return { core in core.sendError(client, address: address, failure) }
                }
            }
            return
        } else {
            try engineCall { () throws(EngineError) in
                if connect {
                    try engine.connect(source, to: destination)
                } else {
                    try engine.disconnect(source, from: destination)
                }
            }
            mirror.dirty = true
        }
        done(r.client, r.address, [.string(source), .string(destination)])
    }

    /// `/graph/list` → `/graph/edge s:"src:bus" s:"dst:bus"` per node connection, then
    /// `/graph/edge s:port s:port` per JACK connection of our ports, then `/reply s:/graph/list`.
    func graphList(_ r: OSCRequest) throws(OSCFailure) {
        try OSCArguments(r).end()
        for c in engine.connections() {
            reply(
                r.client,
                OSCMessage(
                    "/graph/edge",
                    [
                        .string("\(c.source):\(c.sourceBus)"), .string("\(c.destination):\(c.destinationBus)")
                    ]))
        }
        for c in host?.listConnections() ?? [] {
            reply(r.client, OSCMessage("/graph/edge", [.string(c.source), .string(c.destination)]))
        }
        reply(r.client, OSCMessage("/reply", [.string("/graph/list")]))
    }
}

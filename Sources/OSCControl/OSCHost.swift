// Control side. What the OSC service needs from the audio host (JACK in the CLI; a mock in tests).

/// The audio host as seen from OSC: status for `/status`, JACK port connections for `/graph/*` with
/// full port names, and `/quit`. Methods are called on the OSC thread and may block briefly (JACK IPC).
public protocol OSCHost: AnyObject, Sendable {
    /// The host's state for `/status.reply`.
    func status() -> OSCHostStatus
    /// Connects two full port names (either order).
    func connect(_ source: String, to destination: String) throws(OSCHostError)
    /// Disconnects two full port names (either order).
    func disconnect(_ source: String, from destination: String) throws(OSCHostError)
    /// The port connections of this client's own ports, as (source, destination) full names.
    func listConnections() -> [(source: String, destination: String)]
    /// The connections a saved patch holds: the live ones and those the host remembers and will make
    /// again when their ports exist (all of them while the server is lost). Listed once each.
    func savedConnections() -> [(source: String, destination: String)]
    /// Asks the host to shut down (the CLI leaves its main loop). Called after `/done /quit` is sent.
    func quit()
    /// Suspends rendering: silence out; `renderAnyway` keeps the engine's time going (Wwise's Suspend).
    func suspend(renderAnyway: Bool) throws(OSCHostError)
    /// Ends a suspension.
    func wakeUp() throws(OSCHostError)
    /// The ports our main outputs and inputs are connected to, sorted.
    func route() -> [String]
    /// Asks the server for periods of `frames`; returns the period in force afterwards.
    func requestBufferSize(frames: Int) throws(OSCHostError) -> Int
    /// Publishes metadata on our client (key → text; JACK metadata under JACK), replacing what was set;
    /// the keys in `last` are written after all others, in that order.
    func publishProperties(_ properties: [String: String], writingLast last: [String])
    /// The render thread's scheduling for `/status/realtime`: a word (`realtime`, `not-realtime`,
    /// `denied`, `unknown`), the policy (`SCHED_FIFO`…) and the priority.
    func realtime() -> (state: String, policy: String, priority: Int)
    /// The metadata of every client on the server (ours included) whose keys start with `prefix`:
    /// client name → key → value (other sessions' published state).
    func clientProperties(withPrefix prefix: String) -> [String: [String: String]]
    /// Registers or unregisters the main outputs and inputs (the session's category); returns problems.
    func setMainPorts(outputs: Bool, inputs: Bool) -> [String]
    /// Publishes our metadata again when it is no longer there; true when it had to.
    func refreshProperties() -> Bool
    /// Whether a client of that name is open on the server.
    func clientExists(_ name: String) -> Bool
    /// Registers (or unregisters) the other-audio monitor port; returns a problem, or nil.
    func setOtherAudioMonitoring(_ on: Bool) -> String?
    /// The largest sample the monitor port heard since the last call (0 when not monitoring).
    func takeOtherAudioPeak() -> Float
    /// Plays the main outputs to `ports` only (nil: back to what they were connected to); problems.
    func overrideOutputs(_ ports: [String]?) -> [String]
}

extension OSCHost {
    public func savedConnections() -> [(source: String, destination: String)] { listConnections() }
    public func suspend(renderAnyway: Bool) throws(OSCHostError) {
        throw OSCHostError("this host cannot suspend rendering")
    }
    public func wakeUp() throws(OSCHostError) { throw OSCHostError("this host cannot suspend rendering") }
    public func route() -> [String] { [] }
    public func requestBufferSize(frames: Int) throws(OSCHostError) -> Int {
        throw OSCHostError("this host cannot change its period")
    }
    public func publishProperties(_ properties: [String: String], writingLast last: [String]) {}
    public func realtime() -> (state: String, policy: String, priority: Int) { ("unknown", "unknown", 0) }
    public func clientProperties(withPrefix prefix: String) -> [String: [String: String]] { [:] }
    public func setMainPorts(outputs: Bool, inputs: Bool) -> [String] { [] }
    public func refreshProperties() -> Bool { false }
    public func clientExists(_ name: String) -> Bool { false }
    public func setOtherAudioMonitoring(_ on: Bool) -> String? { "this host cannot monitor other audio" }
    public func takeOtherAudioPeak() -> Float { 0 }
    public func overrideOutputs(_ ports: [String]?) -> [String] { ["this host has no ports to override"] }
}

/// The host's state as `/status` reports it.
public struct OSCHostStatus: Sendable, Equatable {
    /// "running", "stopped", "server-lost", …
    public var state: String
    public var sampleRate: Int
    public var bufferSize: Int
    /// DSP load in percent.
    public var dspLoad: Double
    public var xrunCount: Int
    public var serverName: String
    public var clientName: String

    public init(
        state: String, sampleRate: Int, bufferSize: Int, dspLoad: Double, xrunCount: Int,
        serverName: String, clientName: String
    ) {
        self.state = state
        self.sampleRate = sampleRate
        self.bufferSize = bufferSize
        self.dspLoad = dspLoad
        self.xrunCount = xrunCount
        self.serverName = serverName
        self.clientName = clientName
    }
}

/// A failed host operation.
public struct OSCHostError: Error, Sendable, Equatable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// Host events the embedding layer forwards to `OSCService.post(_:)`; subscribers are notified.
public enum OSCHostEvent: Sendable, Equatable {
    /// The server reported xruns; `count` is the total so far.
    case xrun(count: Int, delayedMicroseconds: Double)
    /// The server went away.
    case serverLost(reason: String)
    /// A server of that name is back and the client is open again (every port registered, the
    /// connections restored as far as their other ends exist).
    case servicesReset(clientName: String, sampleRate: Int, bufferSize: Int)
    /// The route changed (`reason`: newDeviceAvailable, oldDeviceUnavailable, routeConfigurationChange);
    /// routes are the connected ports. `outputsLostLastConnection`: the outputs play nowhere now.
    case routeChanged(reason: String, previous: [String], current: [String], outputsLostLastConnection: Bool)
    /// JACK transport started (`rolling`) or stopped, or was located (`seconds`: the new position, when
    /// it moved other than by playing): remote control of the now-playing player.
    case transport(rolling: Bool, locatedSeconds: Double?)
    /// Period or rate changed.
    case configurationChanged(sampleRate: Int, bufferSize: Int)
    /// The patch file was reloaded (`run --watch`, SIGHUP): the graph now follows it.
    case patchReloaded(path: String)
    /// A reload was refused: `message` lists every problem (line:column); the graph is untouched.
    case patchReloadFailed(path: String, message: String)
    /// Other sessions' published state may have changed (metadata changed, a client came or went).
    case sessionPeersChanged
}

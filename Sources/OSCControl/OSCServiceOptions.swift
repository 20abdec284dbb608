// Control side. Settings of an OSCService (command-line options map onto these).
import Foundation

/// How an `OSCService` listens, schedules and rate-limits.
public struct OSCServiceOptions: Sendable {
    /// The default UDP/TCP port (documented in docs/OSC.md).
    public static let defaultPort = 57130

    /// UDP and TCP port; 0 picks a free port (tests). `start()` returns the bound port.
    public var port: Int
    /// Address to bind: "127.0.0.1" (default, loopback only), "0.0.0.0" (every IPv4 interface),
    /// "::" (every interface), or one interface's address.
    public var host: String
    /// Also listen on TCP (same port number).
    public var enablesTCP: Bool
    /// Folders OSC clients may read and write (buffers, player files, patches). Relative paths in
    /// requests are taken relative to the first one.
    public var fileRoots: [String]
    /// Subscription lease in seconds: a subscriber that neither renews (`/renew`, `/notify 1`) nor
    /// resubscribes within this time stops receiving traffic.
    public var leaseDuration: Double
    /// Largest packet accepted, in bytes (UDP datagrams and TCP frames); larger ones get /error 63.
    public var maxPacketSize: Int
    /// A future bundle is held by the service until this many seconds before its time tag, then handed
    /// to the engine with exact sample times (parameter sets and player transport land on their frame;
    /// other commands in the bundle take effect at release).
    public var schedulingLookahead: Double
    /// Time tags further ahead than this (seconds) are refused with /error 65.
    public var schedulingHorizon: Double
    /// Future bundles that may wait at once.
    public var maxScheduledBundles: Int
    /// `/error` (and `/late`) replies per client: burst size and sustained rate per second. Errors beyond
    /// that are counted (see /status) but not sent.
    public var errorBurst: Int
    public var errorsPerSecond: Double
    /// The service calls `engine.poll()` itself every 10 ms (for tests and hosts without a control loop).
    /// The CLI leaves this off: its main loop polls.
    public var pollsEngine: Bool
    /// The service installs the engine's event handler (player finished…) while it runs.
    public var handlesEngineEvents: Bool
    /// `/sync` replies `/error 70` when the engine renders nothing for this many seconds.
    public var syncTimeout: Double
    /// How often the service compares the engine's nodes and connections with what it last saw (to
    /// register node addresses and notify subscribers of changes made by others), in seconds.
    public var graphScanInterval: Double
    /// Shortest meter interval accepted, in milliseconds.
    public var minimumMeterInterval: Int
    /// Program name and version reported by `/version`.
    public var programName: String
    public var version: String
    /// The session's `pauseOnRouteLoss` at start (a patch's `session:` section; `/session/pauseOnRouteLoss`
    /// changes it).
    public var pauseOnRouteLoss: Bool
    /// The session's now-playing node at start (a patch's `session: nowPlaying`).
    public var nowPlaying: String?
    /// The session's category, mode, options and duck level at start, and whether it activates then (a
    /// patch's `session:` section).
    public var sessionStart = SessionStart()
    /// When set, `/quit` is refused with this reason (`/error /quit 69`): under a session manager the
    /// manager ends the program (SIGTERM), never a controller.
    public var quitRefusal: String?
    /// Called on the OSC thread with each audio-session notification (`/session/…`, `/engine/services_…`)
    /// as one line, whether or not anyone subscribed: `soundstage run` writes them to stderr for a rig's
    /// journal.
    public var sessionJournal: (@Sendable (String) -> Void)?
    /// The OSCQuery server and web view (HTTP and WebSocket); nil serves none.
    public var web: WebServerOptions?

    public init(
        port: Int = OSCServiceOptions.defaultPort, host: String = "127.0.0.1", enablesTCP: Bool = true,
        fileRoots: [String] = [FileManager.default.currentDirectoryPath], leaseDuration: Double = 10,
        maxPacketSize: Int = 16_384, schedulingLookahead: Double = 0.1, schedulingHorizon: Double = 3600,
        maxScheduledBundles: Int = 4096, errorBurst: Int = 20, errorsPerSecond: Double = 10,
        pollsEngine: Bool = false, handlesEngineEvents: Bool = true, syncTimeout: Double = 5,
        graphScanInterval: Double = 0.25, minimumMeterInterval: Int = 10,
        programName: String = "soundstage", version: String = "0.1.0", pauseOnRouteLoss: Bool = false,
        nowPlaying: String? = nil, sessionStart: SessionStart = SessionStart(), quitRefusal: String? = nil,
        sessionJournal: (@Sendable (String) -> Void)? = nil
    ) {
        self.sessionJournal = sessionJournal
        self.sessionStart = sessionStart
        self.port = port
        self.host = host
        self.enablesTCP = enablesTCP
        self.fileRoots = fileRoots
        self.leaseDuration = leaseDuration
        self.maxPacketSize = maxPacketSize
        self.schedulingLookahead = schedulingLookahead
        self.schedulingHorizon = schedulingHorizon
        self.maxScheduledBundles = maxScheduledBundles
        self.errorBurst = errorBurst
        self.errorsPerSecond = errorsPerSecond
        self.pollsEngine = pollsEngine
        self.handlesEngineEvents = handlesEngineEvents
        self.syncTimeout = syncTimeout
        self.graphScanInterval = graphScanInterval
        self.minimumMeterInterval = minimumMeterInterval
        self.programName = programName
        self.version = version
        self.pauseOnRouteLoss = pauseOnRouteLoss
        self.nowPlaying = nowPlaying
        self.quitRefusal = quitRefusal
    }
}

// OSC thread. The service's owned pieces of state, each with one job: the bundle scheduler, the
// worker-job ledger, the graph mirror and the subscription table. `OSCServiceCore` holds one of each
// and its handlers (one file per concern) read and change them; nothing else touches them.
import AudioGraph

/// What liblo's callbacks collect while one packet is dispatched: the requests and failures in order,
/// the bundle nesting, the UDP sender, and a pattern being fanned out.
struct DispatchCollector {
    var collected: [Collected] = []
    var bundleDepth = 0
    /// The packet being dispatched is a bundle.
    var isBundle = false
    /// The sender of the UDP datagram being dispatched (liblo does not know it: we read the socket).
    var udpClient: ClientRef?
    var pattern: PatternContext?
    var nextPatternID = 0
}

/// Future bundles held until their release time, in time tag order (equal tags in arrival order), and
/// the clock anchor that turns time tags into engine frames.
struct BundleScheduler {
    var held: [HeldBundle] = []
    /// The id the next held bundle gets; ids below it were held once (released or cancelled since).
    private(set) var nextID: Int32 = 1
    /// The clock mapping in use (see `OSCClockMapping.StableReference`).
    var clockReference = OSCClockMapping.StableReference()

    /// A new bundle id (they wrap after 2³¹ − 1 bundles, which at a thousand a second is 24 days).
    mutating func takeID() -> Int32 {
        defer { nextID = nextID == Int32.max ? 1 : nextID + 1 }
        return nextID
    }
}

/// Worker jobs issued and completed (in order: jobs run one at a time), and the `/sync`s waiting for
/// them.
struct JobLedger {
    var issued = 0
    var completed = 0
    /// CLOCK_MONOTONIC seconds of the last completion.
    var completedAt = 0.0
    var pendingSyncs: [PendingSync] = []
    /// File sets the engine finishes in the background (a live environment's `hrtf`), by node: who
    /// asked, so a failure reaches them as `/error` as well as subscribers.
    var awaitingFiles: [String: (client: ClientRef, address: String)] = [:]
}

/// The graph as OSC clients were last told it: node addresses registered with liblo, for pattern
/// dispatch and change notifications.
struct GraphMirror {
    var nodes: [String: NodeKind] = [:]
    var connections: Set<Connection> = []
    /// The addresses registered with liblo for each node.
    var paths: [String: [String]] = [:]
    var scanned = false
    /// An edit may have changed the graph: scan before the next packet.
    var dirty = true
    /// CLOCK_MONOTONIC seconds of the next periodic scan (edits made by other threads).
    var nextScan = 0.0
}

/// Clients that asked for notifications, their meter feeds and the reply routes they registered.
struct SubscriptionTable {
    var byID: [Int32: Subscription] = [:]
    var nextID: Int32 = 1
    /// Client key → the subscription whose URL gets that client's replies.
    var replyRoutes: [String: Int32] = [:]
    var meteredNodes: Set<String> = []
    var nextMeterTick = 0.0
    /// An xrun notification waiting for the rate limit: the count and the largest delay.
    var pendingXrun: (count: Int, delay: Double)?
    var lastXrunSent = -1.0
}

// Control side. Whether the JACK process thread got real-time scheduling, as the kernel sees it.
import CJack
import Glibc

/// The scheduling of this client's process thread (the thread that renders).
///
/// `serverIsRealtime` is what the server asks for (`jack_is_realtime`: jackd started without
/// `--no-realtime`); `policy` and `priority` are what the thread really got (`pthread_getschedparam` on
/// `jack_client_thread_id`). A real-time server whose client thread runs `SCHED_OTHER` means the
/// process may not raise its priority: no `rtprio` limit (the `audio` group's
/// `/etc/security/limits.d/audio.conf`, or `LimitRTPRIO=` in a systemd unit).
public struct JackRealtimeStatus: Sendable, Equatable, CustomStringConvertible {
    public var serverIsRealtime: Bool
    /// `SCHED_FIFO`, `SCHED_RR`, `SCHED_OTHER`, … (or `unknown`).
    public var policy: String
    /// The thread's static priority (0 for `SCHED_OTHER`).
    public var priority: Int
    /// The priority the server asked its clients to use (`jack_client_real_time_priority`), −1 when none.
    public var requestedPriority: Int

    public init(serverIsRealtime: Bool, policy: String, priority: Int, requestedPriority: Int) {
        self.serverIsRealtime = serverIsRealtime
        self.policy = policy
        self.priority = priority
        self.requestedPriority = requestedPriority
    }

    /// True when the process thread runs under a real-time policy.
    public var isRealtime: Bool { policy == "SCHED_FIFO" || policy == "SCHED_RR" }

    /// One word for `/status`: `realtime`, `not-realtime` (the server runs without it) or `denied` (the
    /// server asked for it and the thread did not get it).
    public var word: String { isRealtime ? "realtime" : serverIsRealtime ? "denied" : "not-realtime" }

    public var description: String {
        if isRealtime { return "yes (\(policy), priority \(priority))" }
        if serverIsRealtime {
            return
                "NO: the server is real-time (priority \(requestedPriority) asked) but the process thread runs \(policy); "
                + "allow real-time priority (the audio group's rtprio limit, or LimitRTPRIO= and LimitMEMLOCK= in "
                + "the systemd unit; see docs/SERVICE.md)"
        }
        return
            "no: the JACK server runs without real-time scheduling (jackd --no-realtime); the process thread runs \(policy)"
    }

    static func policyName(_ policy: Int32) -> String {
        switch policy {
        case SCHED_FIFO: return "SCHED_FIFO"
        case SCHED_RR: return "SCHED_RR"
        case SCHED_OTHER: return "SCHED_OTHER"
        case 3: return "SCHED_BATCH"  // not exported by Glibc's Swift overlay
        case 5: return "SCHED_IDLE"
        default: return "policy \(policy)"
        }
    }
}

extension JackHost {
    /// The process thread's scheduling now, or nil when the client is not open. The thread exists once
    /// the client is active (after `start()`).
    public var realtimeStatus: JackRealtimeStatus? {
        withClientAndName { client, _ in
            let serverIsRealtime = jack_is_realtime(client) != 0
            let requested = Int(jack_client_real_time_priority(client))
            let thread = jack_client_thread_id(client)
            var policy: Int32 = 0
            var parameters = sched_param()
            let known = thread != 0 && pthread_getschedparam(thread, &policy, &parameters) == 0
            return JackRealtimeStatus(
                serverIsRealtime: serverIsRealtime, policy: known ? JackRealtimeStatus.policyName(policy) : "unknown",
                priority: known ? Int(parameters.sched_priority) : 0, requestedPriority: requested)
        }
    }
}

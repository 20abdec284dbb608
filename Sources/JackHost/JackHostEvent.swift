// Control side. Notifications from the JACK host, delivered on the host's event thread (never the
// process thread, never a libjack thread).

/// Something the JACK server did to the host.
public enum JackHostEvent: Sendable, Equatable {
    /// The server reported an xrun. `count` is the host's total so far; `delayedMicroseconds` is
    /// `jack_get_xrun_delayed_usecs()` for the latest one. Several xruns may arrive as one event.
    case xrun(count: Int, delayedMicroseconds: Double)
    /// The period changed (for example `jack_bufsize 128`). Nothing is reallocated: the render engine
    /// sub-blocks any period.
    case bufferSizeChanged(frames: Int)
    /// The server's sample rate changed; the embedding layer should call `Engine.setSampleRate`.
    case sampleRateChanged(rate: Int)
    /// The server went away (jackd exited or was killed). The client is already closed when this
    /// arrives. With `reconnectsAfterServerLoss` the host waits for the server and opens again
    /// (`serverReturned`); otherwise it is stopped and may be started again once a server is back.
    case serverLost(reason: String)
    /// A server of the same name is back (`reconnectsAfterServerLoss`): the client is open again under
    /// its name, with every port, and the remembered connections are restored. A changed rate or
    /// period is announced just before.
    case serverReturned(JackHostReturnReport)
    /// Our main ports' connections changed, a physical port appeared, or the period or rate changed
    /// (after `bufferSizeChanged` / `sampleRateChanged`). Not sent while the server is away: a return
    /// starts a new route (in `serverReturned`'s report), followed by `routeConfigurationChange` when it
    /// brought another rate or period.
    case routeChanged(JackRouteChange)
    /// Metadata changed somewhere on the server, a client opened or closed, or a new listing of the
    /// metadata store came in (JackHost+StaleStore): other sessions' published state may differ
    /// (`JackHost.clientProperties(withPrefix:)` reads it). Delivered on the event thread, or on the
    /// metadata queue for a listing.
    case peersChanged
}

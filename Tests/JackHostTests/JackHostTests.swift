// Integration tests against private jackd servers (dummy backend, no realtime). All JACK suites nest
// in this serialized suite: on 2 cores, parallel servers would starve each other into xruns.
import Testing

@Suite("JACK host (private dummy servers)", .serialized)
struct JackHostTests {}

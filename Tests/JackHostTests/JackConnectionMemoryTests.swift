// What the host remembers of its ports' connections for a server's return: everything the last
// snapshot showed, plus what went in the seconds before the loss (jackd, stopping, may disconnect its
// clients before it announces the shutdown), and nothing a user removed earlier. Pure; no server.
@testable import JackHost
import Testing

@Suite("JACK connection memory")
struct JackConnectionMemoryTests {
    private let ours = JackEdge(source: "ss:out_1", destination: "system:playback_1")
    private let peers = JackEdge(source: "peer:output2", destination: "ss:room_in_2")

    @Test func everyConnectionShownAtTheLossWaitsForTheReturn() {
        var memory = JackConnectionMemory()
        memory.observe([ours, peers], now: 10)
        memory.serverLost(now: 30)
        #expect(memory.pending == [ours, peers])
        #expect(memory.observed.isEmpty)
    }

    /// jackd tearing down on SIGTERM removes a peer before it tells us the server is gone; on a loaded
    /// machine that gap has exceeded a second.
    @Test func aConnectionGoneJustBeforeTheLossIsRestoredWithTheRest() {
        for gap in [0.1, 1.5, JackConnectionMemory.lossGrace - 0.01] {
            var memory = JackConnectionMemory()
            memory.observe([ours, peers], now: 10)
            memory.observe([ours], now: 20)
            memory.serverLost(now: 20 + gap)
            #expect(memory.pending == [ours, peers], "removed \(gap) s before the loss")
        }
    }

    /// A connection asked away (or whose peer quit) while the server lives is forgotten, as every JACK
    /// client forgets it.
    @Test func aConnectionGoneLongBeforeTheLossIsForgotten() {
        var memory = JackConnectionMemory()
        memory.observe([ours, peers], now: 10)
        memory.observe([ours], now: 20)
        memory.observe([ours], now: 20 + JackConnectionMemory.lossGrace + 1)
        memory.serverLost(now: 20 + JackConnectionMemory.lossGrace + 1.5)
        #expect(memory.pending == [ours])
    }

    @Test func aConnectionMadeAgainIsNoLongerWaiting() {
        var memory = JackConnectionMemory()
        memory.observe([ours, peers], now: 10)
        memory.serverLost(now: 11)
        memory.observe([ours], now: 12)
        #expect(memory.pending == [peers])
    }

    /// PipeWire's libjack may list a connection we made after a return only some time later, and the
    /// snapshot the return woke may not show it: made again, it is still restored at the next loss.
    @Test func aConnectionMadeAgainIsRememberedBeforeASnapshotShowsIt() {
        var memory = JackConnectionMemory()
        memory.observe([ours, peers], now: 10)
        memory.serverLost(now: 11)
        memory.observe([], now: 12)
        memory.made([ours, peers])
        #expect(memory.pending.isEmpty)
        memory.serverLost(now: 12 + JackConnectionMemory.lossGrace + 5)
        #expect(memory.pending == [ours, peers])
    }
}

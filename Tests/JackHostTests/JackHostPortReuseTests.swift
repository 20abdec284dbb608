// A port that goes leaves no connection behind for the next port JACK gives its number to.
import AudioGraph
import CJack
import Foundation
import JackHost
import Testing

extension JackHostTests {
    @Suite("Port numbers reused")
    struct PortReuse {
        /// JACK gives a new port the lowest free number at once, but a cycle already under way keeps
        /// reading the connections as they were when it started. An output of ours connected to one of
        /// our inputs, unregistered while its connection stood and its number taken by a new input in
        /// the same cycle, made `jack_port_get_buffer` on our input follow the old connection to the new
        /// input and back, for ever: the process thread's stack overflowed and the engine died (fast
        /// create/connect/free of voice processors over OSC did it).
        ///
        /// Here `x` has `x_in_1` and `x_out_1`, and `x_out_1` feeds our `keep_in_1`; `y` replaces `x` in
        /// one layout, so its `y_in_2` takes `x_out_1`'s number. A client that sleeps 4 ms of each
        /// 5.3 ms period feeds `keep_in_2`, so our callback reads its ports late in every cycle, after
        /// the control side's changes early in it.
        @Test func aReusedPortNumberNeverLoopsThroughAnOldConnection() throws {
            let server = try PrivateJackServer()
            let engine = Engine(configuration: EngineConfiguration(sampleRate: 48_000, blockFrames: 64))
            let host = try startInsertHost(engine, on: server)
            defer { host.stop() }
            let keep = HostInsert(node: "keep", channelCount: 2, base: 0, latencyFrames: 0)
            var version = 1_000
            func apply(_ inserts: [HostInsert]) {
                version += 1
                #expect(host.setInserts(HostInsertLayout(version: version, inserts: inserts)).isEmpty)
            }
            apply([keep])
            let slow = try JackToneSource(
                server: server.name, frequency: 1_000, amplitude: 0, busyMicroseconds: 4_000)
            defer { slow.close() }
            let client = try #require(host.actualClientName)
            #expect(slow.connect(to: "\(client):keep_in_2").isConnected)
            let x = HostInsert(node: "x", channelCount: 1, base: 2, latencyFrames: 0)
            let y = HostInsert(node: "y", channelCount: 2, base: 2, latencyFrames: 0)
            for round in 0..<30 {
                apply([keep, x])
                #expect(host.connect("x_out_1", to: "keep_in_1").isConnected, "round \(round)")
                apply([keep, y])
                apply([keep])
            }
            let before = host.processCycleCount
            #expect(waitUntil(timeout: 3) { host.processCycleCount > before + 20 }, "the process thread runs")
        }
    }
}

// The player schedule queue (/node/<name>/enqueue) and system sounds (/sound/play) over OSC.
import AudioGraph
import Foundation
@testable import OSCControl
import Testing

@Suite struct OSCScheduleAndSoundTests {
    @Test func enqueueReportsCompletionsOfTheRequestedKind() throws {
        let f = try OSCFixture()
        try f.engine.addBuffer(
            SampleBuffer(name: "blip", channels: [Array(repeating: 0.5, count: 480)], sampleRate: 48_000))
        _ = f.client.command("/node/new", [.string("player"), .string("p")])
        _ = f.client.command("/graph/connect", [.string("p"), .string("main")])
        #expect(f.client.command("/notify", [.int32(1)])?.address == "/done")
        let done = f.client.command("/node/p/enqueue", [.string("blip"), .string("dataConsumed")])
        #expect(done?.address == "/done")
        guard case .int32(let id)? = done?.arguments.last else {
            Issue.record("no item id in \(String(describing: done))")
            return
        }
        f.client.send("/node/p/play")
        f.client.receive(timeout: 3) { $0.address == "/player/completed" }
        let completed = try #require(f.client.take("/player/completed").first)
        #expect(completed.arguments[0] == .string("p"))
        #expect(completed.arguments[1] == .int32(id))
        #expect(completed.arguments[2] == .string("dataConsumed"))
        #expect(completed.arguments[3] == .int32(1))
        #expect(f.client.command("/node/p/enqueue", [.string("blip"), .string("sideways")])?.errorCode == 61)
        #expect(f.client.command("/node/p/enqueue", [.string("nothing")])?.errorCode == 40)
    }

    @Test func soundsPlayAndReportTheirEnd() throws {
        let f = try OSCFixture()
        try f.engine.addBuffer(
            SampleBuffer(name: "blip", channels: [Array(repeating: 0.5, count: 480)], sampleRate: 48_000))
        #expect(f.client.command("/notify", [.int32(1)])?.address == "/done")
        let done = f.client.command("/sound/play", [.string("blip"), .float(0.5), .float(-1)])
        #expect(done?.address == "/done")
        f.client.receive(timeout: 3) { $0.address == "/sound/finished" }
        let finished = try #require(f.client.take("/sound/finished").first)
        #expect(finished.arguments[1] == .int32(1))
        #expect(f.client.command("/sound/play", [.string("blip"), .float(3)])?.errorCode == 22)
        #expect(f.client.command("/sound/play", [.string("nothing")])?.errorCode == 40)
    }
}

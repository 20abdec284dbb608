// A voice processor over OSC: made and set like any node, its figures on the meter feed as `/voice/meter`,
// and a muted talker reported as `/voice/activity` (muted-talker detection).
import AudioGraph
import Foundation
@testable import OSCControl
import Testing

@Suite struct OSCVoiceTests {
    /// A talker-like signal: a 150 Hz voice with harmonics in syllables (4 per second), 2 s, looping.
    static let talker: [Float] = (0..<96_000).map { i in
        let t = Double(i) / 48_000
        let syllable = max(0, sin(2 * Double.pi * 2 * t))
        var voice = 0.0
        for h in 1...12 { voice += sin(2 * Double.pi * 150 * Double(h) * t) / Double(h) }
        return Float(0.15 * syllable * voice)
    }

    @Test func figuresArriveOnTheMeterFeedAndAMutedTalkerIsReported() throws {
        let f = try OSCFixture()
        try f.engine.addBuffer(SampleBuffer(name: "talk", channels: [Self.talker], sampleRate: 48_000))
        #expect(
            f.client.command(
                "/node/new",
                [
                    .string("voiceprocessor"), .string("vp"), .string("ports"), .bool(false),
                    .string("inputMuted"), .bool(true), .string("referenceChannels"), .int32(1)
                ])?.arguments == [.string("/node/new"), .string("vp")])
        #expect(f.client.command("/node/new", [.string("player"), .string("p")])?.errorCode == nil)
        _ = f.client.command("/graph/connect", [.string("p"), .string("vp:0")])
        _ = f.client.command("/graph/connect", [.string("vp"), .string("main")])
        _ = f.client.command("/notify", [.int32(1)])
        #expect(f.client.command("/meters", [.int32(50), .string("vp")])?.errorCode == nil)
        // The talker starts while the processor is muted.
        _ = f.client.command("/node/p/schedule/buffer", [.string("talk"), .string("loop")])
        f.client.send("/node/p/playing", [.bool(true)])
        f.client.receive(timeout: 2.0)
        let meters = f.client.take("/voice/meter")
        let meter = try #require(meters.last, "no /voice/meter arrived")
        #expect(meter.arguments.count == 4)
        #expect(meter.arguments.first == .string("vp"))
        if meter.arguments.count == 4 {
            guard case .float = meter.arguments[1], case .float(let delay) = meter.arguments[2],
                case .int32(let doubleTalk) = meter.arguments[3]
            else {
                Issue.record("/voice/meter types: \(meter.arguments)")
                return
            }
            #expect(delay == -1 || delay >= 0)
            #expect(doubleTalk == 0, "no far end, no double talk")
        }
        let activity = f.client.take("/voice/activity")
        #expect(activity.first?.arguments == [.string("vp"), .string("started")], "\(activity)")
        // Muted, the processor's output is silence.
        let out = f.renderer.channel(0).suffix(4_800)
        #expect(out.allSatisfy { $0 == 0 })
    }
}

import AudioGraph
import DSPTestSupport
import Synchronization
import Testing

@Suite struct TapTests {
    @Test func tapDeliversExactlyWhatTheNodeRendersEvenWhenNotConnected() throws {
        let engine = TestEngine.make()
        let ramp = TestSignal.ramp(frames: 20_000)
        try engine.addBuffer(SampleBuffer(name: "r", channels: [ramp], sampleRate: TestEngine.rate))
        try engine.attach(.player, name: "p", parameters: ["buffer": .string("r"), "playing": .bool(true)])
        let received = Mutex<[Float]>([])
        let starts = Mutex<[Int]>([])
        try engine.installTap(on: "p", frameCount: 1000) { block in
            received.withLock { $0 += block.channels[0] }
            starts.withLock { $0.append(block.streamFrame) }
        }
        let out = TestEngine.render(engine, frames: 10_000, block: 333)
        #expect(out[0].allSatisfy { $0 == 0 })  // not connected to the output
        #expect(received.withLock { $0 } == Array(ramp[0..<10_000]))
        #expect(starts.withLock { $0 } == Array(stride(from: 0, to: 10_000, by: 1000)))
    }

    @Test func slowConsumerCausesReportedDropsNotBlocking() throws {
        let engine = TestEngine.make()
        try engine.addBuffer(TestEngine.constant("x", value: 0.1))
        try engine.attach(.player, name: "p", parameters: ["buffer": .string("x"), "loop": .bool(true), "playing": .bool(true)])
        try engine.connect("p", to: "main")
        try engine.installTap(on: "main", frameCount: 512) { _ in }
        let events = Mutex<[EngineEvent]>([])
        engine.setEventHandler { e in events.withLock { $0.append(e) } }
        // Render 5 s without polling: the 1 s ring overflows.
        let renderer = OfflineRenderer(engine: engine, pollInterval: 1 << 30)
        _ = renderer.render(frameCount: 240_000, hostBlockFrames: 256)
        let drops = events.withLock { $0 }.compactMap { e -> Int? in
            if case .tapOverflow(_, let frames) = e { return frames }
            return nil
        }
        #expect(drops.reduce(0, +) > 0)
    }
}

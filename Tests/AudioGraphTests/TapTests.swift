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
        try engine.attach(
            .player, name: "p", parameters: ["buffer": .string("x"), "loop": .bool(true), "playing": .bool(true)])
        try engine.connect("p", to: "main")
        let delivered = Mutex<[Int]>([])
        try engine.installTap(on: "main", frameCount: 512) { block in delivered.withLock { $0.append(block.frameCount) }
        }
        let events = Mutex<[EngineEvent]>([])
        engine.setEventHandler { e in events.withLock { $0.append(e) } }
        // Render 5 s without polling: the ring overflows. It holds max(4 × 512, 1 s) frames of the two
        // channels, rounded up to a power of two samples: 96 000 → 131 072 samples, 65 536 frames. The
        // engine pushes 64-frame sub-blocks whole (65 536 is a multiple of 64), so the first 65 536 frames
        // fit and every later sub-block is dropped; the final poll reports them and delivers the rest.
        let renderer = OfflineRenderer(engine: engine, pollInterval: 1 << 30)
        let total = 240_000
        _ = renderer.render(frameCount: total, hostBlockFrames: 256)
        var ringSamples = 2
        while ringSamples < max(4 * 512, 48_000) * 2 { ringSamples <<= 1 }
        let ringFrames = ringSamples / 2
        #expect(ringFrames == 65_536)
        let drops = events.withLock { $0 }.compactMap { e -> Int? in
            if case .tapOverflow(let node, let frames) = e, node == "main" { return frames }
            return nil
        }
        #expect(drops == [total - ringFrames])
        #expect(delivered.withLock { $0 } == Array(repeating: 512, count: ringFrames / 512))
    }
}

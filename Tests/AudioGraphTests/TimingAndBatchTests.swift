import AudioGraph
import DSPTestSupport
import Foundation
import Testing

@Suite struct TimingAndBatchTests {
    @Test func timedParameterChangeStartsOnItsFrame() throws {
        let engine = TestEngine.make(outputs: 1)
        try engine.addBuffer(TestEngine.constant("one", value: 1))
        try engine.attach(
            .player, name: "p", parameters: ["buffer": .string("one"), "loop": .bool(true), "playing": .bool(true)])
        try engine.attach(.mixer, name: "m", parameters: ["channels": .int(1)])
        try engine.connect("p", to: "m")
        try engine.connect("m", to: "output")
        _ = TestEngine.render(engine, frames: 1000, block: 100)
        try engine.set("m", "outputVolume", to: .float(0), atSampleTime: 5_000)
        try engine.pause("p", atSampleTime: 20_000)
        let out = TestEngine.render(engine, frames: 20_000, block: 333)[0]
        // Frames 1000..<5000 untouched, the glide starts exactly at engine frame 5000.
        #expect(out[3_999] == 1)
        #expect(out[4_000] == 1)
        #expect(out[4_001] < 1)
        #expect(out[4_000 + 960] == 0)
        let engine2 = TestEngine.make(outputs: 1)
        try engine2.addBuffer(TestEngine.constant("one", value: 1))
        try engine2.attach(
            .player, name: "p", parameters: ["buffer": .string("one"), "loop": .bool(true), "playing": .bool(true)])
        try engine2.connect("p", to: "output")
        try engine2.stop("p", atSampleTime: 7_777)
        let out2 = TestEngine.render(engine2, frames: 10_000, block: 1000)[0]
        #expect(out2[7_776] == 1 && out2[7_777] == 0)
    }

    @Test func aBatchTakesEffectInOneCycle() throws {
        let engine = TestEngine.make()
        try engine.addBuffer(TestEngine.constant("one", value: 1, channels: 2))
        try engine.attach(
            .player, name: "a", parameters: ["buffer": .string("one"), "loop": .bool(true), "playing": .bool(true)])
        try engine.connect("a", to: "output")
        _ = TestEngine.render(engine, frames: 256)
        // A new node, a connection replacing another, and a transport change: all in the same cycle.
        try engine.batch { () throws(EngineError) in
            try engine.attach(.player, name: "b", parameters: ["buffer": .string("one"), "loop": .bool(true)])
            try engine.connect("b", to: "output")
            try engine.play("b")
        }
        let renderer = OfflineRenderer(engine: engine)
        let out = renderer.render(frameCount: 960, hostBlockFrames: 64)[0]
        // The old edge fades out while the new one fades in over the same 480 frames: the sum stays 1.
        for i in 0..<960 {
            #expect(abs(out[i] - 1) < 1e-5, "frame \(i): \(out[i])"); if abs(out[i] - 1) >= 1e-5 { break }
        }
    }

    @Test func batchedCommandsAreHeldUntilTheBatchEnds() throws {
        let engine = TestEngine.make()
        try engine.attach(.player, name: "p")
        let before = engine.renderEngine.commands.producedCount
        try engine.batch { () throws(EngineError) in
            try engine.set("p", "volume", to: .float(0.5))
            try engine.set("p", "pan", to: .float(0.5))
            #expect(engine.renderEngine.commands.producedCount == before)
        }
        #expect(engine.renderEngine.commands.producedCount == before + 2)
    }

    @Test func aBatchThatChangesTheGraphAfterItsCommandsHandsOverTheProgramFirst() throws {
        let engine = TestEngine.make()
        try engine.attach(.player, name: "p")
        try engine.attach(.mixer, name: "m")
        _ = TestEngine.render(engine, frames: 64)
        let queue = engine.renderEngine.commands
        let before = queue.producedCount
        try engine.batch { () throws(EngineError) in
            try engine.set("p", "volume", to: .float(0.5))
            try engine.set("p", "pan", to: .float(0.5))
            try engine.connect("m", to: "output")
            #expect(queue.producedCount == before)
        }
        #expect(queue.producedCount >= before + 3)
        // The render thread takes the program before the commands sent ahead of it in the batch.
        guard case .takeProgram = queue.peek()?.command else {
            Issue.record("the batch does not start with its program")
            return
        }
        _ = TestEngine.render(engine, frames: 64)
        #expect(queue.count == 0)
    }

    @Test func aBatchTheQueueCannotTakeIsRefusedWhole() throws {
        let engine = TestEngine.make(outputs: 1)
        try engine.addBuffer(TestEngine.constant("one", value: 1))
        try engine.attach(
            .player, name: "p", parameters: ["buffer": .string("one"), "loop": .bool(true), "playing": .bool(true)])
        try engine.attach(.mixer, name: "m", parameters: ["channels": .int(1)])
        try engine.connect("p", to: "m")
        try engine.connect("m", to: "output")
        _ = TestEngine.render(engine, frames: 64)
        let queue = engine.renderEngine.commands
        while queue.freeCount > 2 { try engine.set("m", "outputVolume", to: .float(1)) }
        let before = queue.producedCount
        let error = #expect(throws: EngineError.self) {
            try engine.batch { () throws(EngineError) in
                for _ in 0..<3 { try engine.set("m", "outputVolume", to: .float(0.5)) }
            }
        }
        #expect(error?.code == .busy)
        #expect(queue.producedCount == before)
        // Commands that find no free slot wait, in order, after those written in place, and go with them
        // when the queue has room by the end of the batch.
        try engine.batch { () throws(EngineError) in
            for volume in [0.1, 0.2, 0.3, 0.4] { try engine.set("m", "outputVolume", to: .float(volume)) }
            #expect(queue.producedCount == before)
            for _ in 0..<4 { _ = queue.pop() }  // As the render thread would meanwhile.
        }
        #expect(queue.producedCount == before + 4)
        let out = TestEngine.render(engine, frames: 4_800)[0]
        #expect(abs(out[out.count - 1] - 0.4) < 1e-4, "\(out[out.count - 1])")
    }

    @Test func metersReportPeakAndRMSInDecibels() throws {
        let engine = TestEngine.make()
        let sine = TestSignal.sine(frequency: 1000, sampleRate: 48_000, frames: 48_000, amplitude: 0.5)
        try engine.addBuffer(SampleBuffer(name: "s", channels: [sine, sine.map { $0 * 0.1 }], sampleRate: 48_000))
        try engine.attach(
            .player, name: "p", parameters: ["buffer": .string("s"), "loop": .bool(true), "playing": .bool(true)])
        try engine.connect("p", to: "output")
        try engine.setMetering("p", enabled: true)
        _ = TestEngine.render(engine, frames: 48_000)
        let levels = try #require(engine.readMeters()["p"])
        #expect(levels.count == 2)
        #expect(abs(levels[0].peakDecibels - Float(Decibels.fromAmplitude(0.5))) < 0.01)
        #expect(abs(levels[0].rmsDecibels - Float(Decibels.fromAmplitude(0.5 / 2.0.squareRoot()))) < 0.01)
        #expect(abs(levels[1].rmsDecibels - levels[0].rmsDecibels + 20) < 0.01)
        // A new interval starts after each read; with the player paused it is silent.
        try engine.pause("p")
        _ = TestEngine.render(engine, frames: 4800)
        _ = engine.readMeters()
        _ = TestEngine.render(engine, frames: 4800)
        #expect(engine.readMeters()["p"]?.allSatisfy { $0.peakDecibels == -160 && $0.rmsDecibels == -160 } == true)
    }

    @Test func clockAnchorFollowsRenderedFrames() throws {
        let engine = TestEngine.make()
        #expect(engine.clockAnchor() == nil)
        func monotonicNow() -> Int64 {
            var now = timespec()
            clock_gettime(CLOCK_MONOTONIC, &now)
            return Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec)
        }
        let before = monotonicNow()
        _ = TestEngine.render(engine, frames: 1024, block: 256)
        let after = monotonicNow()
        let anchor = try #require(engine.clockAnchor())
        #expect(anchor.sampleTime == 768)
        #expect(anchor.sampleRate == 48_000)
        // CLOCK_MONOTONIC at the start of the last cycle: inside the render, not just any positive number.
        #expect(
            (before...after).contains(anchor.monotonicNanoseconds),
            "\(before) … \(after): \(anchor.monotonicNanoseconds)")
    }
}

// The `audioplayer` node: AVAudioPlayer's semantics (loop counts, seek, pause and stop that keep the
// position, fades, metering, notifications), checked sample by sample on offline renders.
import AudioDSP
import AudioGraph
import DSPTestSupport
import Foundation
import Synchronization
import Testing

@Suite struct AudioPlayerTests {
    static let frames = 1_000
    /// A ramp whose every sample differs, so any skipped, repeated or misplaced frame shows.
    static let ramp: [Float] = (0..<frames).map { 0.1 + 0.5 * Float($0) / Float(frames) }
    /// Gain of a mono source at centre pan on each side of the stereo main mixer.
    static let centre = EqualPowerPanner.monoGains(pan: 0).left

    private func engine(_ parameters: [String: ParameterValue], events: EventBox? = nil) throws -> Engine {
        let engine = TestEngine.make()
        try engine.addBuffer(SampleBuffer(name: "ramp", channels: [Self.ramp], sampleRate: TestEngine.rate))
        var p = parameters
        p["buffer"] = .string("ramp")
        try engine.attach(.audioplayer, name: "ap", parameters: p)
        try engine.connect("ap", to: "main")
        if let events { engine.setEventHandler { events.append($0) } }
        return engine
    }

    /// File frame carried by an output sample (nil for silence).
    private func frameIndex(_ sample: Float) -> Int? {
        let value = sample / Self.centre
        guard value > 0.05 else { return nil }
        return Int(((value - 0.1) / 0.5 * Float(Self.frames)).rounded())
    }

    /// Asserts `output[range]` is the ramp from `firstFrame`, wrapping at the end of the material.
    private func expectRamp(_ output: [Float], _ range: Range<Int>, from firstFrame: Int, _ label: String) {
        var bad = 0
        for (k, i) in range.enumerated()
        where abs(output[i] - Self.ramp[(firstFrame + k) % Self.frames] * Self.centre) > 1e-6 {
            bad += 1
        }
        #expect(bad == 0, "\(label): \(bad) of \(range.count) samples are not the ramp from frame \(firstFrame)")
    }

    @Test(arguments: [0, 1, 4])
    func numberOfLoopsGivesThatManyExtraPassesWithoutASeam(loops: Int) throws {
        let events = EventBox()
        let engine = try engine(["numberOfLoops": .int(loops), "playing": .bool(true)], events: events)
        let total = (loops + 1) * Self.frames
        let out = TestEngine.render(engine, frames: total + 2_000, block: 100)[0]
        expectRamp(out, 0..<total, from: 0, "passes")
        #expect(out[total...].allSatisfy { $0 == 0 }, "sound after the last pass")
        #expect(events.all.contains(.audioPlayerFinished(node: "ap", successfully: true)))
        #expect(try engine.get("ap", "playing") == .bool(false))
        #expect(try engine.get("ap", "currentTime") == .float(0), "a finished player rewinds")
    }

    /// `numberOfLoops` set while playing: the current pass finishes, then that many more passes follow
    /// without a seam (0 ends playback with this pass), from a looping player and from a finite one.
    @Test(arguments: [(-1, 0), (-1, 2), (5, 0), (5, 1), (3, -1)])
    func changingNumberOfLoopsWhilePlayingFinishesTheCurrentPassThenPlaysTheNewCount(from: Int, to: Int) throws {
        let events = EventBox()
        let engine = try engine(["numberOfLoops": .int(from), "playing": .bool(true)], events: events)
        // Into the second pass (frame 300 of it), then the change.
        var out = TestEngine.render(engine, frames: Self.frames + 300, block: 100)[0]
        try engine.set("ap", "numberOfLoops", to: .int(to))
        out += TestEngine.render(engine, frames: 8 * Self.frames, block: 100)[0]
        if to < 0 {
            expectRamp(out, 0..<out.count, from: 0, "looping on")
            #expect(!events.all.contains(.audioPlayerFinished(node: "ap", successfully: true)))
            return
        }
        // A finite player set to loop forever before its last pass ended keeps going; else the pass
        // playing at the change (the second) plus `to` more.
        let total = (2 + to) * Self.frames
        expectRamp(out, 0..<total, from: 0, "passes up to the end")
        #expect(out[total...].allSatisfy { $0 == 0 }, "sound after the last pass")
        #expect(events.all.filter { $0 == .audioPlayerFinished(node: "ap", successfully: true) }.count == 1)
        #expect(try engine.get("ap", "playing") == .bool(false))
    }

    /// An audioplayer that plays while nothing renders it (disconnected) does not advance: `currentTime`
    /// and `playerTime` stand where the render left it, and when it is connected again it resumes from
    /// exactly that frame.
    @Test func currentTimeStandsStillWhileAPlayingAudioplayerIsNotRendered() throws {
        let engine = TestEngine.make()
        let count = 48_000
        let ramp = (0..<count).map { 0.1 + 0.5 * Float($0) / Float(count) }
        try engine.addBuffer(SampleBuffer(name: "long", channels: [ramp], sampleRate: TestEngine.rate))
        try engine.attach(.audioplayer, name: "ap", parameters: ["buffer": .string("long"), "playing": .bool(true)])
        try engine.connect("ap", to: "main")
        _ = TestEngine.render(engine, frames: 9_600)
        try engine.disconnect("ap", from: "main")
        _ = TestEngine.render(engine, frames: 14_400)  // 0.3 s unheard
        let stood = try #require(try engine.get("ap", "currentTime").doubleValue)
        // It played on through the 10 ms fade of the disconnection (480 frames) until the program without it
        // was installed (after the next poll), then stood still: nowhere near the 0.5 s of engine time.
        #expect(stood >= (9_600 + 480) / 48_000 && stood <= (9_600 + 480 + 2_048) / 48_000, "currentTime \(stood) s")
        let frozen = try #require(try engine.playerTime("ap", forSampleTime: engine.sampleTime))
        #expect(try engine.playerTime("ap", forSampleTime: engine.sampleTime + 4_800) == frozen)
        try engine.connect("ap", to: "main")
        let out = TestEngine.render(engine, frames: 4_800)[0]
        // After the connection's fade-in, each output frame is the file frame `stood` seconds in, plus its
        // offset: the audioplayer resumed exactly where currentTime said it stood.
        let start = Int((stood * 48_000).rounded())
        for f in [1_000, 2_000, 4_799] {
            let heard = out[f] / Self.centre
            #expect(abs(heard - ramp[start + f]) < 0.5 / Float(count), "frame \(f): \(heard) vs \(ramp[start + f])")
        }
        let now = try #require(try engine.get("ap", "currentTime").doubleValue)
        #expect(abs(now - (stood + 0.1)) < 1e-9)
    }

    @Test func negativeLoopsPlayUntilStoppedAndShortMaterialNeverRunsDry() throws {
        let engine = try engine(["numberOfLoops": .int(-1), "playing": .bool(true)])
        // 30 passes of a 21 ms file, rendered in 1024-frame periods with a poll after each.
        let out = TestEngine.render(engine, frames: 30 * Self.frames, block: 1024)[0]
        expectRamp(out, 0..<out.count, from: 0, "endless loop")
    }

    @Test func manyFinitePassesAreQueuedAsTheyPlay() throws {
        // 200 loops: far more than the 64-item queue; passes are added as earlier ones end.
        let engine = try engine(["numberOfLoops": .int(199), "playing": .bool(true)])
        let out = TestEngine.render(engine, frames: 200 * Self.frames + 500, block: 512)[0]
        expectRamp(out, 0..<(200 * Self.frames), from: 0, "200 passes")
        #expect(out[(200 * Self.frames)...].allSatisfy { $0 == 0 })
    }

    @Test func pauseAndStopKeepThePositionAndPlayResumes() throws {
        let engine = try engine(["numberOfLoops": .int(-1), "playing": .bool(true)])
        var out = TestEngine.render(engine, frames: 640, block: 64)[0]
        try engine.pause("ap")
        out += TestEngine.render(engine, frames: 640, block: 64)[0]
        let paused = try engine.get("ap", "currentTime").doubleValue ?? -1
        #expect(abs(paused - 640 / TestEngine.rate) < 1e-9, "paused at \(paused * TestEngine.rate) frames")
        try engine.play("ap")
        out += TestEngine.render(engine, frames: 640, block: 64)[0]
        try engine.stop("ap")
        let stopped = try engine.get("ap", "currentTime").doubleValue ?? -1
        // 1280 frames played of a 1000-frame loop: the second pass is at frame 280.
        #expect(abs(stopped - 280 / TestEngine.rate) < 1e-9, "stopped at \(stopped * TestEngine.rate) frames")
        out += TestEngine.render(engine, frames: 640, block: 64)[0]
        try engine.play("ap")
        out += TestEngine.render(engine, frames: 640, block: 64)[0]
        expectRamp(out, 0..<640, from: 0, "before the pause")
        #expect(out[640..<1_280].allSatisfy { $0 == 0 }, "paused")
        expectRamp(out, 1_280..<1_920, from: 640, "resumed after the pause")
        #expect(out[1_920..<2_560].allSatisfy { $0 == 0 }, "stopped")
        expectRamp(out, 2_560..<3_200, from: 1_280, "played after the stop, from where it stopped")
    }

    @Test func seekingWhilePlayingJumpsWithinOneCycle() throws {
        let engine = try engine(["numberOfLoops": .int(-1), "playing": .bool(true)])
        var out = TestEngine.render(engine, frames: 256, block: 64)[0]
        try engine.set("ap", "currentTime", to: .float(700 / TestEngine.rate))
        out += TestEngine.render(engine, frames: 512, block: 64)[0]
        expectRamp(out, 0..<256, from: 0, "before the seek")
        expectRamp(out, 256..<768, from: 700, "after the seek (wrapping to the start at the end)")
        let now = try engine.get("ap", "currentTime").doubleValue ?? -1
        #expect(
            abs(now * TestEngine.rate - Double((700 + 512) % Self.frames)) < 0.5, "currentTime \(now * TestEngine.rate)"
        )
    }

    /// A seek sent right after a pause, while the render's report of the pause still waits to be read:
    /// that report is older than the seek's stop, and `currentTime` stays where the seek put it, before
    /// the render has applied the seek and after.
    @Test func aSeekRightAfterAPauseIsReadBackAtOnce() throws {
        let engine = try engine(["numberOfLoops": .int(-1), "playing": .bool(true)])
        _ = TestEngine.render(engine, frames: 640, block: 64)
        try engine.pause("ap")
        // One block without a poll: the render applies the pause and reports it.
        let left = UnsafeMutablePointer<Float>.allocate(capacity: 64)
        let right = UnsafeMutablePointer<Float>.allocate(capacity: 64)
        defer {
            left.deallocate()
            right.deallocate()
        }
        let outputs: [UnsafeMutablePointer<Float>?] = [left, right]
        outputs.withUnsafeBufferPointer {
            engine.renderEngine.render(
                frameCount: 64, inputs: nil, inputCount: 0, outputs: $0.baseAddress!, outputCount: 2)
        }
        try engine.set("ap", "currentTime", to: .float(300 / TestEngine.rate))
        engine.poll()
        let before = try #require(try engine.get("ap", "currentTime").doubleValue) * TestEngine.rate
        #expect(abs(before - 300) < 0.5, "read before the render applied the seek: frame \(before)")
        _ = TestEngine.render(engine, frames: 256, block: 64)
        let after = try #require(try engine.get("ap", "currentTime").doubleValue) * TestEngine.rate
        #expect(abs(after - 300) < 0.5, "read after: frame \(after)")
        try engine.play("ap")
        let out = TestEngine.render(engine, frames: 256, block: 64)[0]
        expectRamp(out, 0..<256, from: 300, "played from the seek")
    }

    @Test func seekingWhileStoppedSetsWherePlayStarts() throws {
        let engine = try engine([:])
        try engine.set("ap", "currentTime", to: .float(250 / TestEngine.rate))
        #expect(try engine.get("ap", "currentTime") == .float(250 / TestEngine.rate))
        #expect(try engine.prepareToPlay("ap"))
        try engine.play("ap")
        let out = TestEngine.render(engine, frames: 900, block: 64)[0]
        expectRamp(out, 0..<750, from: 250, "from the seek point to the end")
        #expect(out[750...].allSatisfy { $0 == 0 })
    }

    @Test func volumeFadesLinearlyOverTheGivenDuration() throws {
        let engine = TestEngine.make()
        try engine.addBuffer(TestEngine.constant("dc", value: 0.5))
        try engine.attach(
            .audioplayer, name: "ap",
            parameters: [
                "buffer": .string("dc"), "numberOfLoops": .int(-1),
                "playing": .bool(true)
            ])
        try engine.connect("ap", to: "main")
        _ = TestEngine.render(engine, frames: 4_800)
        try engine.fadeVolume("ap", to: 0, over: 0.5)
        let out = TestEngine.render(engine, frames: 48_000)[0]
        let full = 0.5 * Self.centre
        #expect(abs(out[12_000] / full - 0.5) < 1e-3, "half-way through the fade: \(out[12_000] / full)")
        #expect(abs(out[6_000] / full - 0.75) < 1e-3, "a quarter of the way: \(out[6_000] / full)")
        #expect(out[24_000...].allSatisfy { $0 == 0 }, "silent after the fade")
        #expect(try engine.get("ap", "volume") == .float(0))
    }

    @Test func meteringReportsAverageAndPeakPowerInDecibels() throws {
        let engine = TestEngine.make()
        let sine = TestSignal.sine(frequency: 1_000, sampleRate: TestEngine.rate, frames: 48_000, amplitude: 0.5)
        try engine.addBuffer(SampleBuffer(name: "sine", channels: [sine, sine], sampleRate: TestEngine.rate))
        try engine.attach(
            .audioplayer, name: "ap",
            parameters: [
                "buffer": .string("sine"), "meteringEnabled": .bool(true),
                "numberOfLoops": .int(-1), "playing": .bool(true)
            ])
        try engine.connect("ap", to: "main")
        #expect(throws: EngineError.self) { try engine.audioPlayerPower("main") }
        _ = TestEngine.render(engine, frames: 9_600)
        let levels = try engine.audioPlayerPower("ap")
        try #require(levels.count == 2)
        for level in levels {
            #expect(abs(level.peak - Float(20 * log10(0.5))) < 0.05, "peak \(level.peak) dBFS")
            #expect(
                abs(level.average - Float(20 * log10(0.5 / 2.0.squareRoot()))) < 0.05, "average \(level.average) dBFS")
        }
        try engine.set("ap", "meteringEnabled", to: .bool(false))
        #expect(throws: EngineError.self) { try engine.audioPlayerPower("ap") }
    }

    /// After a stop, the meters read silence: nothing from before the stop is carried into the first
    /// reading (AVAudioPlayer's meters fall with its output).
    @Test func aStoppedPlayersFirstMeterIsSilent() throws {
        let engine = TestEngine.make()
        let sine = TestSignal.sine(frequency: 1_000, sampleRate: TestEngine.rate, frames: 48_000, amplitude: 0.5)
        try engine.addBuffer(SampleBuffer(name: "sine", channels: [sine], sampleRate: TestEngine.rate))
        try engine.attach(
            .audioplayer, name: "ap",
            parameters: [
                "buffer": .string("sine"), "meteringEnabled": .bool(true),
                "numberOfLoops": .int(-1), "playing": .bool(true)
            ])
        try engine.connect("ap", to: "main")
        _ = TestEngine.render(engine, frames: 9_600)
        try engine.stop("ap")
        _ = TestEngine.render(engine, frames: 4_800)
        let levels = try engine.audioPlayerPower("ap")
        #expect(levels.allSatisfy { $0.peak <= -150 }, "first reading after stop: \(levels)")
        // A player that was never played reads silence too.
        try engine.attach(
            .audioplayer, name: "quiet", parameters: ["buffer": .string("sine"), "meteringEnabled": .bool(true)])
        try engine.connect("quiet", to: "main")
        _ = TestEngine.render(engine, frames: 4_800)
        #expect(try engine.audioPlayerPower("quiet").allSatisfy { $0.peak <= -150 })
    }

    @Test func propertiesDescribeTheMaterial() throws {
        let engine = try engine([:])
        #expect(try engine.get("ap", "duration") == .float(Double(Self.frames) / TestEngine.rate))
        #expect(try engine.get("ap", "channels") == .int(1))
        #expect(throws: EngineError.self) { try engine.set("ap", "duration", to: .float(3)) }
        #expect(throws: EngineError.self) { try engine.set("ap", "rate", to: .float(1.5)) }
    }

    @Test func aFileThatCannotBeDecodedIsReportedAndChangesNothing() throws {
        let events = EventBox()
        let engine = Engine(
            configuration: EngineConfiguration(sampleRate: TestEngine.rate),
            fileLoader: { path, _ in throw EngineError(.fileError, "cannot decode '\(path)'") })
        engine.setEventHandler { events.append($0) }
        try engine.attach(.audioplayer, name: "ap")
        #expect(throws: EngineError.self) { try engine.set("ap", "file", to: .string("broken.wav")) }
        engine.poll()
        #expect(events.all.contains(.audioPlayerDecodeError(node: "ap", message: "cannot decode 'broken.wav'")))
        #expect(try engine.get("ap", "file") == .string(""))
    }

    @Test func manyPlayersPlayAtOnceEachExactly() throws {
        let engine = TestEngine.make()
        try engine.addBuffer(SampleBuffer(name: "ramp", channels: [Self.ramp], sampleRate: TestEngine.rate))
        for i in 0..<32 {
            try engine.attach(
                .audioplayer, name: "ap\(i)",
                parameters: [
                    "buffer": .string("ramp"), "numberOfLoops": .int(i % 3), "playing": .bool(true),
                    "volume": .float(1.0 / 32)
                ])
            try engine.connect("ap\(i)", to: "main")
        }
        let out = TestEngine.render(engine, frames: 3_500, block: 128)[0]
        // Passes: 11 players play once, 11 twice, 10 three times.
        for (range, players) in [(0..<1_000, 32), (1_000..<2_000, 21), (2_000..<3_000, 10)] {
            for i in range {
                let expected = Self.ramp[i % Self.frames] * Self.centre * Float(players) / 32
                #expect(abs(out[i] - expected) < 1e-5, "frame \(i): \(out[i]), expected \(expected)")
                if abs(out[i] - expected) >= 1e-5 { break }
            }
        }
        #expect(out[3_000...].allSatisfy { $0 == 0 })
    }
}

/// Collects engine events (poll runs on the rendering thread here).
final class EventBox: Sendable {
    private let events = Mutex<[EngineEvent]>([])
    func append(_ event: EngineEvent) { events.withLock { $0.append(event) } }
    var all: [EngineEvent] { events.withLock { $0 } }
}

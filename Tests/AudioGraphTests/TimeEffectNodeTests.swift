// Time effects in the graph: their sources run on the effect's clock (a player through varispeed at rate
// 2 plays twice as fast and an octave up; through timepitch at rate 2 twice as fast at the same pitch),
// the output does not depend on the host block size, and graphs they cannot render are refused.
import AudioDSP
@testable import AudioGraph
import DSPTestSupport
import Testing

@Suite struct TimeEffectNodeTests {
    static let rate = TestEngine.rate

    /// A player of `seconds` of a 1 kHz sine at 0.5 (played once) → `kind` with `parameters` → main.
    private func chain(
        _ kind: NodeKind, _ parameters: [String: ParameterValue], seconds: Double = 1,
        events: EventBox? = nil
    ) throws -> Engine {
        let engine = TestEngine.make()
        let sine = TestSignal.sine(
            frequency: 1_000, sampleRate: Self.rate, frames: Int(seconds * Self.rate), amplitude: 0.5)
        try engine.addBuffer(SampleBuffer(name: "sine", channels: [sine, sine], sampleRate: Self.rate))
        try engine.attach(.player, name: "p", parameters: ["buffer": .string("sine"), "playing": .bool(true)])
        try engine.attach(kind, name: "fx", parameters: parameters)
        try engine.connect("p", to: "fx")
        try engine.connect("fx", to: "main")
        if let events { engine.setEventHandler { events.append($0) } }
        return engine
    }

    /// The frame at which the player reported its material finished.
    private func finishFrame(_ events: EventBox) -> Int64? {
        events.all.compactMap { if case .playerFinished(_, let t) = $0 { return t } else { return nil } }.first
    }

    @Test func varispeedAtRateTwoPlaysTwiceAsFastAnOctaveUp() throws {
        let events = EventBox()
        let engine = try chain(.varispeed, ["rate": .float(2)], events: events)
        let out = TestEngine.render(engine, frames: 48_000)[0]
        let level = Goertzel.measure(out[4_800..<19_200], frequency: 2_000, sampleRate: Self.rate).amplitude
        let original = Goertzel.measure(out[4_800..<19_200], frequency: 1_000, sampleRate: Self.rate).amplitude
        #expect(abs(Decibels.fromAmplitude(level / 0.5)) < 0.5, "2 kHz at \(level)")
        #expect(original < 0.005, "1 kHz left at \(original)")
        // One second of material at twice the speed ends half a second in (plus the kernel's latency).
        let end = try #require(finishFrame(events), "the player never finished: \(events.all)")
        #expect(abs(Double(end) - 24_000) < 512, "finished at frame \(end)")
    }

    @Test func timePitchAtRateTwoPlaysTwiceAsFastAtTheSamePitch() throws {
        let events = EventBox()
        let engine = try chain(.timepitch, ["rate": .float(2)], events: events)
        let out = TestEngine.render(engine, frames: 48_000)[0]
        let level = Goertzel.measure(out[9_600..<19_200], frequency: 1_000, sampleRate: Self.rate).amplitude
        #expect(abs(Decibels.fromAmplitude(level / 0.5)) < 1.5, "1 kHz at \(level)")
        let end = try #require(finishFrame(events), "the player never finished: \(events.all)")
        #expect(abs(Double(end) - 24_000) < 8_192, "finished at frame \(end) (rate 2 plus the stretcher's latency)")
    }

    @Test func timePitchShiftsPitchWithoutChangingSpeed() throws {
        let events = EventBox()
        let engine = try chain(.timepitch, ["pitch": .float(1_200)], seconds: 0.5, events: events)
        let out = TestEngine.render(engine, frames: 48_000)[0]
        let octave = Goertzel.measure(out[9_600..<19_200], frequency: 2_000, sampleRate: Self.rate).amplitude
        #expect(abs(Decibels.fromAmplitude(octave / 0.5)) < 1.5, "2 kHz at \(octave)")
        let end = try #require(finishFrame(events))
        #expect(abs(Double(end) - 24_000) < 8_192, "pitch alone must not change the speed: finished at \(end)")
    }

    /// A live engine takes time-pitch kernels built ahead on a worker. A taken kernel must sound exactly
    /// as one built on the spot (a null test, for a node and an audioplayer's rate stage), and the shelf
    /// fills again behind it.
    @Test func aTimePitchKernelBuiltAheadSoundsExactlyLikeOneBuiltOnTheSpot() throws {
        let parameters: [String: ParameterValue] = ["rate": .float(1.5), "pitch": .float(-300)]
        let fresh = try chain(.timepitch, parameters)
        let reference = TestEngine.render(fresh, frames: 24_000)

        let engine = TestEngine.make()
        engine.keepTimePitchSpares(1, channelCounts: [2])
        engine.services.timePitchSpares.waitForBuilds()
        let shape = TimePitchSpares.Shape(sampleRate: Self.rate, maxBlockFrames: 64, channelCount: 2)
        #expect(engine.services.timePitchSpares.readyCount(shape) == 1)
        let sine = TestSignal.sine(frequency: 1_000, sampleRate: Self.rate, frames: 48_000, amplitude: 0.5)
        try engine.addBuffer(SampleBuffer(name: "sine", channels: [sine, sine], sampleRate: Self.rate))
        try engine.attach(.player, name: "p", parameters: ["buffer": .string("sine"), "playing": .bool(true)])
        try engine.attach(.timepitch, name: "fx", parameters: parameters)
        try engine.connect("p", to: "fx")
        try engine.connect("fx", to: "main")
        let out = TestEngine.render(engine, frames: 24_000)
        #expect(out == reference, "a kernel built ahead renders differently")
        #expect(SignalStats.peak(out[0][12_000...]) > 0.1, "silent")
        #expect(engine.services.timePitchSpares.takenCount == 1, "the node did not take the ready kernel")
        engine.services.timePitchSpares.waitForBuilds()
        #expect(engine.services.timePitchSpares.readyCount(shape) == 1, "the shelf was not refilled")

        // After a rate change the spares follow the new rate; the old rate's are freed.
        engine.setSampleRate(44_100)
        engine.keepTimePitchSpares(1, channelCounts: [2])
        engine.services.timePitchSpares.waitForBuilds()
        let moved = TimePitchSpares.Shape(sampleRate: 44_100, maxBlockFrames: 64, channelCount: 2)
        #expect(
            engine.services.timePitchSpares.readyCount(shape) == 0
                && engine.services.timePitchSpares.readyCount(moved) == 1)

        // An audioplayer's rate stage takes one too, and sounds the same.
        func audioPlayer(spares: Bool) throws -> [[Float]] {
            let engine = TestEngine.make()
            if spares {
                engine.keepTimePitchSpares(1, channelCounts: [2])
                engine.services.timePitchSpares.waitForBuilds()
            }
            try engine.addBuffer(SampleBuffer(name: "sine", channels: [sine, sine], sampleRate: Self.rate))
            try engine.attach(
                .audioplayer, name: "a",
                parameters: [
                    "buffer": .string("sine"), "enableRate": .bool(true),
                    "rate": .float(0.8), "playing": .bool(true)
                ])
            if spares {
                #expect(engine.services.timePitchSpares.takenCount == 1, "the rate stage did not take the ready kernel")
            }
            try engine.connect("a", to: "main")
            return TestEngine.render(engine, frames: 24_000)
        }
        #expect(try audioPlayer(spares: true) == audioPlayer(spares: false), "the rate stage built ahead differs")
    }

    @Test(arguments: [NodeKind.timepitch, .varispeed])
    func outputDoesNotDependOnTheHostBlockSize(kind: NodeKind) throws {
        let parameters: [String: ParameterValue] =
            kind == .timepitch
            ? ["rate": .float(1.5), "pitch": .float(-300)]
            : ["rate": .float(0.75)]
        var reference: [Float]?
        for block in [64, 100, 256, 1000] {
            let engine = try chain(kind, parameters)
            let out = TestEngine.render(engine, frames: 24_000, block: block)[0]
            if let reference {
                #expect(out == reference, "\(kind.rawValue): block \(block) differs from block 64")
            } else {
                reference = out
                #expect(SignalStats.peak(out[12_000...]) > 0.1, "\(kind.rawValue) is silent")
            }
        }
    }

    /// The engine's sub-block (`engine.blockFrames`) down to one frame: the time-pitch's 2686 frames of
    /// priming once needed several quanta of at most 512 rounds each, and the output started 3–4 frames
    /// late at sub-blocks of 1–4. A sub-block changes how Rubber Band is fed, so the samples differ a
    /// little; the timing must not.
    @Test(arguments: [1, 2, 3, 4, 8])
    func aTinySubBlockKeepsTheTimePitchOnTime(block: Int) throws {
        func render(_ block: Int) throws -> [Float] {
            let engine = TestEngine.make(block: block)
            let noise = VoiceProcessorNodeTests.noise(24_000, seed: 3)
            try engine.addBuffer(SampleBuffer(name: "n", channels: [noise], sampleRate: Self.rate))
            try engine.attach(.player, name: "p", parameters: ["buffer": .string("n"), "playing": .bool(true)])
            try engine.attach(.timepitch, name: "fx", parameters: ["pitch": .float(300)])
            try engine.connect("p", to: "fx")
            try engine.connect("fx", to: "main")
            return TestEngine.render(engine, frames: 12_000, block: 256)[0]
        }
        let reference = try render(64)
        let out = try render(block)
        let lag = crossCorrelationLag(Array(reference[2_000..<10_000]), Array(out[2_000..<10_000]), maximumLag: 50)
        #expect(abs(lag) < 0.5, "sub-block \(block): \(lag) frames late")
        // The first frames are the stretcher's, not silence.
        #expect(SignalStats.peak(out[0..<64]) > 0.01, "sub-block \(block) starts silent")
    }

    @Test func graphsATimeEffectCannotRenderAreRefused() throws {
        let engine = TestEngine.make(inputs: 2)
        try engine.attach(.input, name: "mic")
        try engine.attach(.timepitch, name: "tp")
        try engine.attach(.mixer, name: "bus")
        try engine.attach(.player, name: "p")
        let direct = #expect(throws: EngineError.self) { try engine.connect("mic", to: "tp") }
        #expect(direct?.message.contains("live input") == true, "\(String(describing: direct))")
        try engine.connect("mic", to: "bus")
        let indirect = #expect(throws: EngineError.self) { try engine.connect("bus", to: "tp") }
        #expect(indirect?.message.contains("through") == true, "\(String(describing: indirect))")
        try engine.connect("p", to: "tp")
        let shared = #expect(throws: EngineError.self) { try engine.connect("p", to: "main") }
        #expect(shared?.message.contains("also 'main'") == true, "\(String(describing: shared))")
        // After the effect, fan-out is fine.
        try engine.connect("tp", to: "main")
        try engine.connect("tp", to: "bus")
        // A varispeed cannot be a JACK insert (a time-pitch can, at rate 1: TimePitchInsertTests).
        try engine.attach(.varispeed, name: "vs")
        #expect(throws: EngineError.self) { try engine.set("vs", "insert", to: .bool(true)) }
    }

    @Test func audioPlayerRateKeepsThePitchAndPlaysFaster() throws {
        let engine = TestEngine.make()
        let events = EventBox()
        engine.setEventHandler { events.append($0) }
        let sine = TestSignal.sine(frequency: 1_000, sampleRate: Self.rate, frames: 48_000, amplitude: 0.5)
        try engine.addBuffer(SampleBuffer(name: "sine", channels: [sine], sampleRate: Self.rate))
        try engine.attach(
            .audioplayer, name: "ap",
            parameters: [
                "buffer": .string("sine"), "enableRate": .bool(true),
                "rate": .float(2), "playing": .bool(true)
            ])
        try engine.connect("ap", to: "main")
        let out = TestEngine.render(engine, frames: 48_000)[0]
        let level = Goertzel.measure(out[9_600..<19_200], frequency: 1_000, sampleRate: Self.rate).amplitude
        let centre = Double(EqualPowerPanner.monoGains(pan: 0).left)
        #expect(abs(Decibels.fromAmplitude(level / (0.5 * centre))) < 1.5, "1 kHz at \(level)")
        #expect(events.all.contains(.audioPlayerFinished(node: "ap", successfully: true)), "\(events.all)")
        #expect(SignalStats.peak(out[36_000...]) < 0.01, "still sounding after 0.75 s at rate 2")
    }
}

@Suite struct TimePitchInsertTests {
    @Test func anInsertedTimePitchRunsOnTheEngineClockAndLeavesOnlyIfTheGraphAllows() throws {
        let engine = TestEngine.make(inputs: 1)
        try engine.attach(.input, name: "mic")
        try engine.attach(.timepitch, name: "tp", parameters: ["insert": .bool(true), "pitch": .float(700)])
        // Live input may feed it: at rate 1 it consumes exactly what arrives.
        try engine.connect("mic", to: "tp")
        try engine.connect("tp", to: "main")
        let refusal = #expect(throws: EngineError.self) { try engine.set("tp", "insert", to: .bool(false)) }
        #expect(refusal?.message.contains("live input") == true, "\(String(describing: refusal))")
        #expect(try engine.get("tp", "insert") == .bool(true))
        let latency = engine.hostInsertLayout.inserts.first?.latencyFrames ?? 0
        #expect(latency > 0, "its latency is reported")
        #expect(try engine.get("tp", "latency") == .int(latency), "the same figure as a read-only parameter")
        #expect(throws: EngineError.self) { try engine.set("tp", "latency", to: .int(0)) }
        #expect(throws: EngineError.self) {
            try engine.attach(.varispeed, name: "vs", parameters: ["insert": .bool(true)])
        }
    }

    /// A time-pitch node runs Rubber Band over at most 8 channels: 9 is refused by name, as a range,
    /// instead of stopping the engine in the kernel's precondition; varispeed takes 64.
    @Test func aTimePitchWiderThanEightChannelsIsRefused() throws {
        let engine = TestEngine.make()
        do {
            try engine.attach(.timepitch, name: "tp", parameters: ["channels": .int(9)])
            Issue.record("nine time-pitch channels were accepted")
        } catch {
            #expect(error.code == .outOfRange)
            #expect(error.message.contains("tp.channels = 9 is out of range 1…8"), "\(error.message)")
        }
        try engine.attach(.timepitch, name: "tp", parameters: ["channels": .int(8)])
        try engine.attach(.varispeed, name: "vs", parameters: ["channels": .int(64)])
    }
}

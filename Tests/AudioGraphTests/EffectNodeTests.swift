import AudioDSP
import AudioGraph
import DSPTestSupport
import Foundation
import Testing

@Suite struct EffectNodeTests {
    /// source player → effect → output (mono), so samples come out as the effect made them.
    func chain(_ kind: NodeKind, _ params: [String: ParameterValue], source: [Float]) throws -> Engine {
        let engine = TestEngine.make(outputs: 1)
        try engine.addBuffer(SampleBuffer(name: "src", channels: [source], sampleRate: 48_000))
        try engine.attach(.player, name: "p", parameters: ["buffer": .string("src"), "playing": .bool(true)])
        var p = params
        p["channels"] = .int(1)
        try engine.attach(kind, name: "fx", parameters: p)
        try engine.connect("p", to: "fx")
        try engine.connect("fx", to: "output")
        return engine
    }

    @Test func delayNodePutsTheEchoOnItsFrame() throws {
        var click = [Float](repeating: 0, count: 4_800)
        click[0] = 1
        let engine = try chain(
            .delay, ["delayTime": .float(0.01), "feedback": .float(0), "wetDryMix": .float(100)],
            source: click)
        let out = TestEngine.render(engine, frames: 4_800, block: 128)[0]
        #expect(abs(out[480] - 1) < 1e-6)
        #expect(out.enumerated().allSatisfy { $0.offset == 480 || abs($0.element) < 1e-6 })
    }

    @Test func eqLowPassBandMatchesItsAnalyticResponse() throws {
        let sine = TestSignal.sine(frequency: 2_000, sampleRate: 48_000, frames: 48_000, amplitude: 0.5)
        let engine = try chain(
            .eq,
            [
                "band0.filterType": .string("lowPass"), "band0.frequency": .float(1_000),
                "band0.bypass": .bool(false)
            ], source: sine)
        let out = TestEngine.render(engine, frames: 48_000, block: 256)[0]
        let measured = Goertzel.amplitude(Array(out[24_000..<48_000]), frequency: 2_000, sampleRate: 48_000) / 0.5
        let design = BiquadCoefficients.eqBand(
            type: .lowPass, frequency: 1_000, bandwidth: 0.5, gainDecibels: 0,
            sampleRate: 48_000)
        let expected = design.response(at: 2_000, sampleRate: 48_000).magnitude
        #expect(abs(Decibels.fromAmplitude(measured) - Decibels.fromAmplitude(expected)) < 0.05)
    }

    @Test func presetsAcceptNamesAndNumbersAndRefuseUnknownNames() throws {
        let engine = TestEngine.make()
        try engine.attach(.reverb, name: "r", parameters: ["preset": .string("cathedral")])
        #expect(try engine.get("r", "preset") == .string("cathedral"))
        try engine.set("r", "preset", to: .int(5))
        #expect(try engine.get("r", "preset") == .string("plate"))
        let error = #expect(throws: EngineError.self) { try engine.set("r", "preset", to: .string("bathroom")) }
        #expect(error?.code == .outOfRange)
        #expect(error?.message.contains("largeHall2") == true)
        #expect(#expect(throws: EngineError.self) { try engine.set("r", "channels", to: .int(1)) }?.code == .readOnly)
        try engine.attach(.eq, name: "e", parameters: ["bands": .int(8)])
        try engine.set("e", "band7.gain", to: .float(6))
        #expect(
            #expect(throws: EngineError.self) { try engine.set("e", "band8.gain", to: .float(6)) }?.code
                == .unknownParameter)
    }

    @Test func bypassedEffectPassesItsInputBitExactly() throws {
        var noise = SeededRandom(seed: 5)
        let source = (0..<24_000).map { _ in noise.nextFloat() * 0.5 }
        let engine = try chain(.distortion, ["preset": .int(9), "bypass": .bool(true)], source: source)
        let out = TestEngine.render(engine, frames: 24_000, block: 100)[0]
        #expect(out == source)
    }

    @Test func resetClearsADelayTail() throws {
        var click = [Float](repeating: 0, count: 100)
        click[0] = 1
        let engine = try chain(
            .delay, ["delayTime": .float(0.5), "feedback": .float(0), "wetDryMix": .float(100)],
            source: click)
        _ = TestEngine.render(engine, frames: 1_000)
        try engine.resetNode("fx")
        let out = TestEngine.render(engine, frames: 48_000)[0]
        #expect(SignalStats.peak(out[...]) < 1e-6)
        #expect(#expect(throws: EngineError.self) { try engine.resetNode("p") }?.code == .notAllowed)
    }
}

// An environment under a rate change (a JACK server back at another rate): its reverb, its sources'
// filters, Doppler lines and HRTF sets are made again at the new rate from the node's values.
import AudioDSP
@testable import AudioGraph
import DSPTestSupport
import Testing

@Suite struct EnvironmentRateChangeTests {
    static let newRate = 44_100.0
    /// Equal-power gain straight ahead: −3 dB on each side.
    static let front = 0.5.squareRoot()

    /// A 5 kHz tone 1 m ahead, obstructed by −20 dB, which the environment defines at 5 kHz exactly: after
    /// the change it still measures −20 dB there (a filter kept at its 48 kHz design gives −20.7 dB).
    @Test func obstructionKeepsItsLevelAtFiveKilohertzAcrossARateChange() throws {
        let engine = TestEngine.make()
        func tone(_ rate: Double) -> SampleBuffer {
            let samples = TestSignal.sine(frequency: 5_000, sampleRate: rate, frames: 44_100, amplitude: 0.5)
            return SampleBuffer(name: "tone", channels: [samples], sampleRate: rate)
        }
        try engine.addBuffer(tone(TestEngine.rate))
        try engine.attach(.environment, name: "env")
        try engine.attach(
            .player, name: "src",
            parameters: [
                "buffer": .string("tone"), "loop": .bool(true), "playing": .bool(true),
                "positionZ": .float(-1), "obstruction": .float(-20)
            ])
        try engine.connect("src", to: "env")
        try engine.connect("env", to: "main")
        _ = TestEngine.render(engine, frames: 4_800)
        let problems = engine.setSampleRate(Self.newRate)
        #expect(problems.isEmpty, "\(problems)")
        // The host makes its buffers again at the new rate (the player rewinds).
        try engine.addBuffer(tone(Self.newRate))
        let out = TestEngine.render(engine, frames: 22_050)
        for channel in 0..<2 {
            let level = Goertzel.measure(out[channel][11_025...], frequency: 5_000, sampleRate: Self.newRate).amplitude
            let gain = Decibels.fromAmplitude(level / (0.5 * Self.front))
            #expect(abs(gain + 20) < 0.1, "channel \(channel): obstruction −20 dB measured \(gain) dB at 5 kHz")
        }
    }

    /// HRTF sets are loaded again at the new rate: a set whose left ear delays by 10 ms puts a click
    /// 441 frames late at 44.1 kHz (480 with the set of 48 kHz), offline and in a live engine whose set was
    /// still loading at the old rate when the rate changed.
    @Test(arguments: [false, true])
    func anHRTFSetIsLoadedAgainAtTheNewRate(live: Bool) throws {
        let sets = HRTFSetSource(defaultPath: "ten-ms.sofa") { _, _, rate throws(HRTFLoadError) in
            LeftEarHRIRSet(sampleRate: rate, leftDelaySeconds: 0.01, maximumDelayFrames: 512)
        }
        let engine = Engine(
            configuration: EngineConfiguration(sampleRate: TestEngine.rate, blockFrames: 64, outputChannelCount: 2),
            hrtfSets: sets)
        engine.setLoadsHRTFSetsInBackground(live)
        var click = [Float](repeating: 0, count: 4_096)
        click[0] = 1
        try engine.addBuffer(SampleBuffer(name: "click", channels: [click], sampleRate: TestEngine.rate))
        // Live: the set's first load (at 48 kHz) is held until the rate has changed.
        let gate = live ? engine.services.hrtfLoader.holdLoads() : nil
        try engine.attach(.environment, name: "env")
        try engine.attach(
            .player, name: "src",
            parameters: ["buffer": .string("click"), "positionZ": .float(-1), "renderingAlgorithm": .string("HRTF")])
        try engine.connect("src", to: "env")
        try engine.connect("env", to: "main")
        _ = TestEngine.render(engine, frames: 4_800)
        let problems = engine.setSampleRate(Self.newRate)
        #expect(problems.isEmpty, "\(problems)")
        try engine.addBuffer(SampleBuffer(name: "click", channels: [click], sampleRate: Self.newRate))
        gate?.signal()
        engine.waitForHRTFSets()
        // The set's crossfade from silence is over before the click.
        _ = TestEngine.render(engine, frames: 1_024)
        try engine.set("src", "playing", to: .bool(true))
        let out = TestEngine.render(engine, frames: 2_048)
        let peak = out[0].indices.max { abs(out[0][$0]) < abs(out[0][$1]) } ?? -1
        #expect(peak == 441, "the click reaches the left ear at frame \(peak)")
        // 1 m ahead: distance gain 1; the set's left ear passes the click whole, its right ear nothing.
        #expect(abs(out[0][max(0, peak)] - 1) < 1e-4, "left ear \(out[0][max(0, peak)])")
        #expect((out[1].map(abs).max() ?? 1) < 1e-6, "right ear")
    }

    /// After the change, an environment with reverb, a return filter, a turned listener and two moving,
    /// occluded sources renders as the same environment made at the new rate, and everything it replaced
    /// is released once the render thread has moved on.
    @Test func anEnvironmentRendersAsOneMadeAtTheNewRate() throws {
        /// The sources' buffers at `rate`: noise, and a 700 Hz tone.
        func addBuffers(_ engine: Engine, rate: Double) throws {
            var random = SeededRandom(seed: 5)
            let noise = (0..<44_100).map { _ in 0.5 * random.nextFloat() }
            let tone = TestSignal.sine(frequency: 700, sampleRate: rate, frames: 44_100, amplitude: 0.5)
            try engine.addBuffer(SampleBuffer(name: "noise", channels: [noise], sampleRate: rate))
            try engine.addBuffer(SampleBuffer(name: "tone", channels: [tone], sampleRate: rate))
        }
        func scene(_ rate: Double) throws -> Engine {
            let engine = Engine(
                configuration: EngineConfiguration(sampleRate: rate, blockFrames: 64, outputChannelCount: 2),
                hrtfSets: TestEngine.sofaFiles)
            try addBuffers(engine, rate: rate)
            try engine.attach(
                .environment, name: "env",
                parameters: [
                    "reverb": .bool(true), "reverbPreset": .string("largeHall"), "reverbLevel": .float(-6),
                    "reverbFilterBypass": .bool(false), "reverbFilterType": .string("lowPass"),
                    "reverbFilterFrequency": .float(2_000), "outputVolume": .float(0.8),
                    "listenerYaw": .float(30)
                ])
            try engine.attach(
                .player, name: "a",
                parameters: [
                    "buffer": .string("noise"), "loop": .bool(true), "renderingAlgorithm": .string("sphericalHead"),
                    "positionX": .float(2), "positionY": .float(0.5), "positionZ": .float(-1),
                    "velocityX": .float(-10), "occlusion": .float(-10), "obstruction": .float(-6),
                    "reverbBlend": .float(0.4)
                ])
            try engine.attach(
                .player, name: "b",
                parameters: [
                    "buffer": .string("tone"), "loop": .bool(true), "renderingAlgorithm": .string("soundField"),
                    "positionX": .float(-3), "positionZ": .float(2), "velocityZ": .float(15),
                    "reverbBlend": .float(0.7)
                ])
            for source in ["a", "b"] { try engine.connect(source, to: "env") }
            try engine.connect("env", to: "main")
            return engine
        }
        let changed = try scene(TestEngine.rate)
        _ = TestEngine.render(changed, frames: 4_800)
        let problems = changed.setSampleRate(Self.newRate)
        #expect(problems.isEmpty, "\(problems)")
        try addBuffers(changed, rate: Self.newRate)
        let made = try scene(Self.newRate)
        for engine in [changed, made] {
            try engine.batch { () throws(EngineError) in
                for source in ["a", "b"] { try engine.set(source, "playing", to: .bool(true)) }
            }
        }
        let out = TestEngine.render(changed, frames: 22_050)
        let reference = TestEngine.render(made, frames: 22_050)
        #expect(SignalStats.rms(reference[0][11_025...]) > 0.01, "silent")
        for channel in 0..<2 {
            let worst = zip(out[channel], reference[channel]).map { abs($0 - $1) }.max() ?? 1
            #expect(worst < 1e-6, "channel \(channel) differs from an environment made at 44.1 kHz by \(worst)")
        }
        for _ in 0..<4 {
            _ = TestEngine.render(changed, frames: 256)
            changed.poll()
        }
        #expect(changed.pendingReleaseCount == 0)
    }
}

// The environment node in a graph: distance models, mirror symmetry, motion without clicks, Doppler,
// speaker rigs, reverb send, obstruction — measured on offline renders against the closed forms.
import AudioDSP
@testable import AudioGraph
import DSPTestSupport
import Foundation
import Testing

@Suite struct EnvironmentNodeTests {
    static let rate = TestEngine.rate
    /// Equal-power gain straight ahead: −3 dB on each side.
    static let front = Float(0.5).squareRoot()

    /// An engine with environment `env` → main and a looping mono source `src` (a constant or a sine).
    private func scene(
        outputs: Int = 2, environment: [String: ParameterValue] = [:], source: [String: ParameterValue] = [:],
        sine: Double? = nil
    ) throws -> Engine {
        let engine = TestEngine.make(outputs: outputs)
        let samples =
            sine.map { TestSignal.sine(frequency: $0, sampleRate: Self.rate, frames: 48_000, amplitude: 0.5) }
            ?? Array(repeating: 0.5, count: 48_000)
        try engine.addBuffer(SampleBuffer(name: "s", channels: [samples], sampleRate: Self.rate))
        try engine.attach(.environment, name: "env", parameters: environment)
        var p = source
        p["buffer"] = .string("s")
        p["loop"] = .bool(true)
        p["playing"] = .bool(true)
        try engine.attach(.player, name: "src", parameters: p)
        try engine.connect("src", to: "env")
        try engine.connect("env", to: "main")
        return engine
    }

    @Test(arguments: [
        ("inverseClamped", [0.5, 1, 2, 4, 10.0]), ("linearClamped", [0.5, 1, 3, 7, 20]),
        ("exponentClamped", [0.5, 1, 2, 5, 9])
    ])
    func levelFollowsTheDistanceModel(model: String, distances: [Double]) throws {
        let parameters: [String: ParameterValue] = [
            "distanceModel": .string(model), "referenceDistance": .float(1),
            "maximumDistance": .float(10), "rolloffFactor": .float(0.8)
        ]
        let attenuation = DistanceAttenuation(
            model: NodeKind.distanceModels[NodeKind.distanceModelNames.firstIndex(of: model)!],
            referenceDistance: 1, maximumDistance: 10, rolloffFactor: 0.8)
        for d in distances {
            let engine = try scene(environment: parameters, source: ["positionZ": .float(-d)])
            let out = TestEngine.render(engine, frames: 4_800)
            let expected = 0.5 * Self.front * Float(attenuation.gain(distance: d))
            #expect(
                abs(out[0][4_000] - expected) < 1e-5 && abs(out[1][4_000] - expected) < 1e-5,
                "\(model) at \(d) m: \(out[0][4_000]), \(out[1][4_000]); expected \(expected)")
        }
    }

    @Test(arguments: ["equalPowerPanning", "sphericalHead", "HRTF", "HRTFHQ", "soundField"])
    func mirroringTheSourceSwapsTheChannels(algorithm: String) throws {
        var outputs: [[[Float]]] = []
        for x in [1.5, -1.5] {
            let engine = try scene(
                source: [
                    "positionX": .float(x), "positionZ": .float(-1),
                    "renderingAlgorithm": .string(algorithm)
                ], sine: 440)
            outputs.append(TestEngine.render(engine, frames: 9_600))
        }
        let left = outputs[0][0], right = outputs[1][1]
        let worst = zip(left, right).map { abs($0 - $1) }.max() ?? 1
        #expect(worst < 1e-6, "\(algorithm): x → −x differs by \(worst)")
        #expect(SignalStats.rms(left[4_800...]) > 0.01, "\(algorithm) is silent")
        #expect(
            SignalStats.rms(outputs[0][1][4_800...]) > SignalStats.rms(outputs[0][0][4_800...]),
            "\(algorithm): a source on the right (x > 0) must be louder on the right")
    }

    @Test(arguments: ["equalPowerPanning", "sphericalHead", "HRTF", "vectorBasedPanning"])
    func aSourceOrbitingAtSixtyUpdatesPerSecondDoesNotClick(algorithm: String) throws {
        let engine = try scene(source: ["positionZ": .float(-2), "renderingAlgorithm": .string(algorithm)], sine: 500)
        let renderer = OfflineRenderer(engine: engine)
        var left: [Float] = []
        // One revolution per second, a new position every 800 frames (60 per second), for 2 s.
        for step in 0..<120 {
            let angle = 2 * Double.pi * Double(step) / 60
            try engine.setVector("src", "position", 2 * sin(angle), 0, -2 * cos(angle))
            left += renderer.render(frameCount: 800, hostBlockFrames: 800)[0]
        }
        let ratio = ClickDetector.secondDifferenceRatio(left[4_800...], frequency: 500, sampleRate: Self.rate)
        #expect(
            ratio < 1.5, "\(algorithm): second-difference ratio \(ratio) at \(ClickDetector.worstIndex(left[4_800...]))"
        )
    }

    @Test func dopplerShiftsAnApproachingToneByTheClosedForm() throws {
        let speed = 20.0
        let engine = try scene(
            environment: ["speedOfSound": .float(343.3)],
            source: ["positionZ": .float(-10), "velocityZ": .float(speed)], sine: 1_000)
        let out = TestEngine.render(engine, frames: 24_000)[0]
        let measured = FrequencyEstimator.zeroCrossingFrequency(out[12_000...], sampleRate: Self.rate)
        let expected = 1_000 * 343.3 / (343.3 - speed)
        #expect(abs(measured - expected) / expected < 0.002, "\(measured) Hz, closed form \(expected) Hz")
    }

    @Test func aQuadRigPlaysASourceAtASpeakerOnThatSpeakerAlone() throws {
        // Quad speakers at −45, 45, −135, 135 degrees on channels 1…4.
        let engine = try scene(
            outputs: 4, environment: ["layout": .string("quad")],
            source: [
                "positionX": .float(sin(Double.pi / 4)), "positionZ": .float(-cos(Double.pi / 4)),
                "renderingAlgorithm": .string("auto")
            ])
        #expect(try engine.get("env", "channels") == .int(4))
        let out = TestEngine.render(engine, frames: 4_800)
        #expect(abs(out[1][4_000] - 0.5) < 1e-4, "front right: \(out[1][4_000])")
        for c in [0, 2, 3] { #expect(abs(out[c][4_000]) < 1e-4, "speaker \(c + 1): \(out[c][4_000])") }
    }

    @Test func theReverbSendKeepsSoundingAfterTheSourceStops() throws {
        var tails: [Double] = []
        for reverb in [false, true] {
            let engine = try scene(
                environment: ["reverb": .bool(reverb), "reverbPreset": .string("largeHall")],
                source: ["reverbBlend": .float(1), "positionZ": .float(-1)], sine: 700)
            _ = TestEngine.render(engine, frames: 24_000)
            try engine.stop("src")
            let after = TestEngine.render(engine, frames: 24_000)[0]
            tails.append(SignalStats.rms(after[4_800..<14_400]))
        }
        #expect(tails[0] < 1e-6, "without reverb the environment is silent once the source stops: \(tails[0])")
        #expect(tails[1] > 1e-3, "the reverb tail is missing: \(tails[1])")
    }

    @Test func obstructionCutsTheDirectPathAtFiveKilohertz() throws {
        var levels: [Double] = []
        for obstruction in [0.0, -20] {
            let engine = try scene(source: ["obstruction": .float(obstruction), "positionZ": .float(-1)], sine: 5_000)
            let out = TestEngine.render(engine, frames: 24_000)[0]
            levels.append(Goertzel.measure(out[12_000...], frequency: 5_000, sampleRate: Self.rate).amplitude)
        }
        let drop = Decibels.fromAmplitude(levels[1] / levels[0])
        #expect(abs(drop + 20) < 0.5, "obstruction −20 dB measured \(drop) dB at 5 kHz")
    }

    @Test func listenerOrientationAsVectorsAndAnglesAgree() throws {
        let engine = try scene(source: ["positionX": .float(1)])
        try engine.setListenerOrientation("env", forward: (1, 0, 0), up: (0, 1, 0))
        #expect(abs((try engine.get("env", "listenerYaw").doubleValue ?? 0) - 90) < 1e-9)
        // Facing the source (to the right), it is straight ahead: equal on both sides.
        let out = TestEngine.render(engine, frames: 4_800)
        #expect(abs(out[0][4_000] - out[1][4_000]) < 1e-5, "\(out[0][4_000]) vs \(out[1][4_000])")
        #expect(throws: EngineError.self) {
            try engine.setListenerOrientation("env", forward: (0, 1, 0), up: (0, 2, 0))
        }
    }

    @Test func stereoSourcesPassThroughUnlessTheModeSaysOtherwise() throws {
        let engine = TestEngine.make()
        try engine.addBuffer(
            SampleBuffer(
                name: "st",
                channels: [
                    Array(repeating: 0.25, count: 4_800),
                    Array(repeating: -0.5, count: 4_800)
                ], sampleRate: Self.rate))
        try engine.attach(.environment, name: "env")
        try engine.attach(
            .player, name: "bed",
            parameters: [
                "buffer": .string("st"), "loop": .bool(true),
                "playing": .bool(true), "positionX": .float(5)
            ])
        try engine.connect("bed", to: "env")
        try engine.connect("env", to: "main")
        let out = TestEngine.render(engine, frames: 2_400)
        #expect(
            out[0][2_000] == 0.25 && out[1][2_000] == -0.5,
            "a stereo bed passes through: \(out[0][2_000]), \(out[1][2_000])")
        try engine.set("bed", "sourceMode", to: .string("pointSource"))
        let placed = TestEngine.render(engine, frames: 4_800)
        #expect(abs(placed[1][4_000]) > abs(placed[0][4_000]), "as a point source at x = 5 it is on the right")
    }

    @Test func everySourceConnectedToTheEnvironmentIsHeard() throws {
        let engine = TestEngine.make()
        try engine.addBuffer(TestEngine.constant("dc", value: 0.5))
        try engine.attach(.environment, name: "env")
        for (name, x) in [("left", -1.0), ("right", 1.0), ("ahead", 0.0)] {
            try engine.attach(
                .player, name: name,
                parameters: [
                    "buffer": .string("dc"), "loop": .bool(true),
                    "playing": .bool(true), "positionX": .float(x),
                    "positionZ": .float(x == 0 ? -1 : 0)
                ])
            try engine.connect(name, to: "env")
        }
        try engine.connect("env", to: "main")
        #expect(engine.connections().filter { $0.destination == "env" }.count == 3)
        let out = TestEngine.render(engine, frames: 4_800)
        // Hard left (1, 0), hard right (0, 1) and ahead (−3 dB each): 0.5 · (1 + 0.7071) per side.
        let expected = 0.5 * (1 + Self.front)
        #expect(
            abs(out[0][4_000] - expected) < 1e-4 && abs(out[1][4_000] - expected) < 1e-4,
            "\(out[0][4_000]), \(out[1][4_000]); expected \(expected) on each side")
    }
}

@Suite struct EnvironmentBadInputTests {
    @Test func impossibleSettingsAreRefusedAndTheOldValuesStay() throws {
        let engine = TestEngine.make()
        try engine.attach(
            .environment, name: "env", parameters: ["referenceDistance": .float(2), "maximumDistance": .float(50)])
        #expect(throws: EngineError.self) { try engine.set("env", "maximumDistance", to: .float(1)) }
        #expect(try engine.get("env", "maximumDistance") == .float(50))
        #expect(throws: EngineError.self) {
            try engine.attach(
                .environment, name: "bad",
                parameters: [
                    "referenceDistance": .float(9), "maximumDistance": .float(3)
                ])
        }
        #expect(throws: EngineError.self) { try engine.set("env", "hrtf", to: .string("/nonexistent.sofa")) }
        #expect(try engine.get("env", "hrtf") == .string(""))
        #expect(throws: EngineError.self) { try engine.setVector("env", "listener", .nan, 0, 0) }
        #expect(throws: EngineError.self) { try engine.setVector("env", "listener", .infinity, 0, 0) }
        #expect(try engine.get("env", "listenerX") == .float(0))
        #expect(throws: EngineError.self) {
            try engine.setListenerOrientation("env", forward: (0, 0, 0), up: (0, 1, 0))
        }
        #expect(throws: EngineError.self) {
            try engine.attach(.environment, name: "rig", parameters: ["speakers": .string("0, left")])
        }
        #expect(engine.nodes().allSatisfy { $0.name != "bad" && $0.name != "rig" })
    }

    @Test func aCustomRigWithAnLFEChannelPlacesSourcesOnItsSpeakers() throws {
        let engine = TestEngine.make(outputs: 4)
        try engine.addBuffer(TestEngine.constant("dc", value: 0.5))
        try engine.attach(.environment, name: "env", parameters: ["speakers": .string("-90, lfe, 90, 180")])
        #expect(try engine.get("env", "channels") == .int(4))
        try engine.attach(
            .player, name: "p",
            parameters: [
                "buffer": .string("dc"), "loop": .bool(true), "playing": .bool(true),
                "positionX": .float(1), "renderingAlgorithm": .string("auto")
            ])
        try engine.connect("p", to: "env")
        try engine.connect("env", to: "main")
        let out = TestEngine.render(engine, frames: 4_800)
        // Hard right is the speaker at 90 degrees, on channel 3; the LFE channel stays silent.
        #expect(
            abs(out[2][4_000] - 0.5) < 1e-4 && abs(out[1][4_000]) < 1e-6 && abs(out[0][4_000]) < 1e-4,
            "\(out.map { $0[4_000] })")
    }

    @Test func theReverbReturnFilterShapesTheTail() throws {
        var tails: [Double] = []
        for bypass in [true, false] {
            let engine = TestEngine.make()
            // Seeded: the same noise for both renders and every run.
            var random = SeededRandom(seed: 11)
            let noise = (0..<48_000).map { _ in 0.5 * random.nextFloat() }
            try engine.addBuffer(SampleBuffer(name: "n", channels: [noise], sampleRate: TestEngine.rate))
            try engine.attach(
                .environment, name: "env",
                parameters: [
                    "reverb": .bool(true), "reverbFilterBypass": .bool(bypass), "reverbFilterType": .string("lowPass"),
                    "reverbFilterFrequency": .float(500)
                ])
            try engine.attach(
                .player, name: "p",
                parameters: [
                    "buffer": .string("n"), "playing": .bool(true),
                    "reverbBlend": .float(1)
                ])
            try engine.connect("p", to: "env")
            try engine.connect("env", to: "main")
            let out = TestEngine.render(engine, frames: 72_000)[0]
            // The tail's level over 4–8 kHz (17 bins), not one bin: a single bin of a noise tail is
            // Rayleigh-distributed and once came out 14 times below its usual level.
            var power = 0.0
            for frequency in stride(from: 4_000.0, through: 8_000.0, by: 250.0) {
                let amplitude = Goertzel.measure(
                    out[50_000..<62_000], frequency: frequency, sampleRate: TestEngine.rate
                )
                .amplitude
                power += amplitude * amplitude
            }
            tails.append(power.squareRoot())
        }
        // Measured: about 0.008 (−42 dB), as a second-order low-pass 3.5 octaves above its corner gives.
        #expect(tails[1] < tails[0] * 0.1, "a 500 Hz low-pass on the return must cut 4–8 kHz in the tail: \(tails)")
    }
}

@Suite struct SetVectorFastPathTests {
    /// setVector checks moves against fixed limits; they must be exactly the parameter tables' ranges.
    @Test func theFastPathsLimitsAreTheParameterRanges() throws {
        for kind in NodeKind.allCases {
            for name in ["position", "velocity", "direction", "listener"] {
                let specs = ["X", "Y", "Z"].compactMap { kind.parameter(named: name + $0) }
                let limit = Engine.vectorLimit(name, kind: kind)
                if specs.isEmpty {
                    #expect(limit == nil, "\(kind.rawValue) has no \(name), but the fast path accepts it")
                } else {
                    for spec in specs {
                        #expect(
                            spec.minimum == -(limit ?? .nan) && spec.maximum == limit, "\(kind.rawValue).\(spec.name)")
                    }
                }
            }
        }
    }
}

/// HRTF sets loaded in the background (live engines): the source renders with the spherical head until
/// its set is ready, then with HRTF, exactly as an engine that loaded the set at once.
@Suite struct BackgroundHRTFLoadingTests {
    private func engine(algorithm: String, background: Bool) throws -> Engine {
        let engine = TestEngine.make()
        try populate(engine, algorithm: algorithm, background: background)
        return engine
    }

    /// A looping 700 Hz source at (1, 0, −1) through an environment into `main`.
    private func populate(_ engine: Engine, algorithm: String, background: Bool) throws {
        engine.setLoadsHRTFSetsInBackground(background)
        let samples = TestSignal.sine(frequency: 700, sampleRate: TestEngine.rate, frames: 48_000, amplitude: 0.5)
        try engine.addBuffer(SampleBuffer(name: "s", channels: [samples], sampleRate: TestEngine.rate))
        try engine.attach(.environment, name: "env")
        try engine.attach(
            .player, name: "src",
            parameters: [
                "buffer": .string("s"), "loop": .bool(true), "playing": .bool(true), "positionX": .float(1),
                "positionZ": .float(-1), "renderingAlgorithm": .string(algorithm)
            ])
        try engine.connect("src", to: "env")
        try engine.connect("env", to: "main")
    }

    @Test func aSourceUsesTheSphericalHeadUntilItsSetArrivesThenHRTF() throws {
        let live = TestEngine.make()
        // The set's load is held until the first render is done, however fast the worker is.
        let gate = live.services.hrtfLoader.holdLoads()
        try populate(live, algorithm: "HRTF", background: true)
        let head = try engine(algorithm: "sphericalHead", background: false)
        let loaded = try engine(algorithm: "HRTF", background: false)
        let before = TestEngine.render(live, frames: 4_800)
        #expect(before == TestEngine.render(head, frames: 4_800), "while loading, the spherical head renders")
        _ = TestEngine.render(loaded, frames: 4_800)
        gate.signal()
        live.waitForHRTFSets()
        // After the switch's crossfade and the filter's length, the two engines render the same.
        let after = TestEngine.render(live, frames: 9_600)
        let reference = TestEngine.render(loaded, frames: 9_600)
        let worst = zip(after[0][4_800...], reference[0][4_800...]).map { abs($0 - $1) }.max() ?? 1
        #expect(worst < 1e-5, "after the set arrived the output differs from HRTF by \(worst)")
        let headNow = TestEngine.render(head, frames: 9_600)
        let fromHead = zip(after[1][4_800...], headNow[1][4_800...]).map { abs($0 - $1) }.max() ?? 0
        #expect(fromHead > 1e-3, "the source still renders with the spherical head")
    }

    /// A source switched to HRTF while its set loads keeps the algorithm it had (here equal power), not
    /// the spherical head, and switches once the set is ready; nothing waits for the load meanwhile.
    @Test func aSourceKeepsItsAlgorithmWhileTheNewHRTFSetLoads() throws {
        let live = TestEngine.make()
        try populate(live, algorithm: "equalPowerPanning", background: true)
        let panned = try engine(algorithm: "equalPowerPanning", background: false)
        #expect(TestEngine.render(live, frames: 4_800) == TestEngine.render(panned, frames: 4_800))
        let gate = live.services.hrtfLoader.holdLoads()
        try live.set("src", "renderingAlgorithm", to: .string("HRTF"))  // returns with the load still held
        let whileLoading = TestEngine.render(live, frames: 9_600)
        #expect(whileLoading == TestEngine.render(panned, frames: 9_600), "equal power until the set is ready")
        gate.signal()
        live.waitForHRTFSets()
        let after = TestEngine.render(live, frames: 9_600)
        let stillPanned = TestEngine.render(panned, frames: 9_600)
        let moved = zip(after[0][4_800...], stillPanned[0][4_800...]).map { abs($0 - $1) }.max() ?? 0
        #expect(moved > 1e-3, "HRTF once the set arrived")
    }
}

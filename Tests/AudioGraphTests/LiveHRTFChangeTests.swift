// Live engines read an environment's `hrtf` file on the loading worker: no request waits for it, the
// environment keeps the set it had until the new one is ready, and a file that fails is reported.
import AudioDSP
@testable import AudioGraph
import DSPTestSupport
import Testing

@Suite struct LiveHRTFChangeTests {
    static let leftEarOnly = "left-ear-only.sofa"

    /// SOFA files as usual, plus `leftEarOnly`.
    static let sets = HRTFSetSource(defaultPath: TestEngine.sofaFiles.defaultPath) {
        path, quality, rate throws(HRTFLoadError) in
        if path == leftEarOnly { return LeftEarHRIRSet(sampleRate: rate) }
        return try TestEngine.sofaFiles.load(path, quality, rate)
    }

    /// A looping 700 Hz source at (1, 0, −1), rendered with HRTF through `env` (made with `hrtf`).
    private func engine(live: Bool, hrtf: String = "") throws -> Engine {
        let engine = Engine(
            configuration: EngineConfiguration(
                sampleRate: TestEngine.rate, blockFrames: 64,
                outputChannelCount: 2), hrtfSets: Self.sets)
        engine.setLoadsHRTFSetsInBackground(live)
        let samples = TestSignal.sine(frequency: 700, sampleRate: TestEngine.rate, frames: 48_000, amplitude: 0.5)
        try engine.addBuffer(SampleBuffer(name: "s", channels: [samples], sampleRate: TestEngine.rate))
        try engine.attach(.environment, name: "env", parameters: hrtf.isEmpty ? [:] : ["hrtf": .string(hrtf)])
        try engine.attach(
            .player, name: "src",
            parameters: [
                "buffer": .string("s"), "loop": .bool(true), "playing": .bool(true), "positionX": .float(1),
                "positionZ": .float(-1), "renderingAlgorithm": .string("HRTF")
            ])
        try engine.connect("src", to: "env")
        try engine.connect("env", to: "main")
        return engine
    }

    @Test func settingHRTFKeepsTheOldSetUntilTheNewOneIsReady() throws {
        // Two live engines with the same history render the same.
        let live = try engine(live: true)
        live.waitForHRTFSets()
        let reference = try engine(live: true)
        reference.waitForHRTFSets()
        #expect(TestEngine.render(live, frames: 4_800) == TestEngine.render(reference, frames: 4_800))

        let gate = live.services.hrtfLoader.holdLoads()
        try live.set("env", "hrtf", to: .string(Self.leftEarOnly))
        // The request did not wait for the set: the environment still has its old value and set.
        #expect(try live.get("env", "hrtf") == .string(""))
        #expect(
            TestEngine.render(live, frames: 4_800) == TestEngine.render(reference, frames: 4_800),
            "while the new set loads, the old one renders")
        gate.signal()
        live.waitForHRTFSets()
        #expect(try live.get("env", "hrtf") == .string(Self.leftEarOnly))
        let after = TestEngine.render(live, frames: 9_600)
        #expect(SignalStats.rms(after[0][4_800...]) > 0.01, "the left ear passes the source")
        #expect((after[1][4_800...].map(abs).max() ?? 1) < 1e-6, "the new set silences the right ear")
    }

    @Test func aFileThatFailsIsReportedAndChangesNothing() throws {
        let live = try engine(live: true)
        let reference = try engine(live: true)
        let events = EventBox()
        live.setEventHandler { events.append($0) }
        live.waitForHRTFSets()
        reference.waitForHRTFSets()
        try live.set("env", "hrtf", to: .string("/nonexistent.sofa"))
        live.waitForHRTFSets()
        live.poll()  // events raised while a poll adopts sets go out with the next one
        #expect(try live.get("env", "hrtf") == .string(""))
        let problems = events.all.compactMap { event -> String? in
            if case .environmentProblem(let node, let message) = event, node == "env" { return message }
            return nil
        }
        #expect(
            problems.count == 1 && problems.first?.hasPrefix("env.hrtf: /nonexistent.sofa: ") == true, "\(problems)")
        #expect(
            TestEngine.render(live, frames: 4_800) == TestEngine.render(reference, frames: 4_800),
            "the environment renders with the set it had")
    }

    @Test func anEnvironmentMadeWithAFileDoesNotWaitForIt() throws {
        // Made while the worker is held: the sources render with the spherical head meanwhile.
        let live = Engine(
            configuration: EngineConfiguration(
                sampleRate: TestEngine.rate, blockFrames: 64,
                outputChannelCount: 2), hrtfSets: Self.sets)
        let gate = live.services.hrtfLoader.holdLoads()
        live.setLoadsHRTFSetsInBackground(true)
        let samples = TestSignal.sine(frequency: 700, sampleRate: TestEngine.rate, frames: 48_000, amplitude: 0.5)
        try live.addBuffer(SampleBuffer(name: "s", channels: [samples], sampleRate: TestEngine.rate))
        try live.attach(.environment, name: "env", parameters: ["hrtf": .string(Self.leftEarOnly)])
        try live.attach(
            .player, name: "src",
            parameters: [
                "buffer": .string("s"), "loop": .bool(true), "playing": .bool(true), "positionX": .float(1),
                "positionZ": .float(-1), "renderingAlgorithm": .string("HRTF")
            ])
        try live.connect("src", to: "env")
        try live.connect("env", to: "main")
        let before = TestEngine.render(live, frames: 4_800)
        #expect(SignalStats.rms(before[1][2_400...]) > 0.01, "the spherical head renders until the set is ready")
        gate.signal()
        live.waitForHRTFSets()
        let after = TestEngine.render(live, frames: 9_600)
        #expect((after[1][4_800...].map(abs).max() ?? 1) < 1e-6, "then the environment's own set")
        // Offline, the same environment has its set from the first frame.
        let offline = try engine(live: false, hrtf: Self.leftEarOnly)
        #expect((TestEngine.render(offline, frames: 4_800)[1].map(abs).max() ?? 1) < 1e-6)
    }

    @Test func anEnvironmentMadeWithAFileThatFailsIsReported() throws {
        let live = Engine(configuration: EngineConfiguration(sampleRate: TestEngine.rate), hrtfSets: Self.sets)
        live.setLoadsHRTFSetsInBackground(true)
        let events = EventBox()
        live.setEventHandler { events.append($0) }
        try live.attach(.environment, name: "env", parameters: ["hrtf": .string("/nonexistent.sofa")])
        live.waitForHRTFSets()
        live.poll()
        #expect(
            events.all.contains {
                if case .environmentProblem("env", let m) = $0 { m.contains("/nonexistent.sofa") } else { false }
            })
        // Known to fail now: a second environment naming it is refused at once.
        #expect(throws: EngineError.self) {
            try live.attach(.environment, name: "env2", parameters: ["hrtf": .string("/nonexistent.sofa")])
        }
        // Offline, the file is refused at creation.
        let offline = Engine(configuration: EngineConfiguration(sampleRate: TestEngine.rate), hrtfSets: Self.sets)
        #expect(throws: EngineError.self) {
            try offline.attach(.environment, name: "env", parameters: ["hrtf": .string("/nonexistent.sofa")])
        }
    }
}

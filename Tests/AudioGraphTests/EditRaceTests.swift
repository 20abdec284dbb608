// Graph edits racing commands scheduled for later: a timed command that points at a node, voice,
// fade or buffer must never reach memory an edit has released. Each scenario schedules a command a
// little ahead, makes the edit, and renders past the command's frame with `poll()` between blocks (as
// a host does). Under the address sanitizer (scripts/sanitize.sh) a use after free fails the run; in
// every build the scenarios check what can be seen from outside: the render counters, the output and
// that everything released is eventually freed.
import AudioDSP
@testable import AudioGraph
import DSPTestSupport
import Testing

@Suite struct EditRaceTests {
    static let rate = TestEngine.rate

    /// A looping mono player `p` (`source` parameters added) feeding `main`.
    private func engineWithPlayer(kind: NodeKind = .player, source: [String: ParameterValue] = [:]) throws -> Engine {
        let engine = TestEngine.make()
        let samples = TestSignal.sine(frequency: 440, sampleRate: Self.rate, frames: 24_000, amplitude: 0.3)
        try engine.addBuffer(SampleBuffer(name: "s", channels: [samples], sampleRate: Self.rate))
        var p = source
        p["buffer"] = .string("s")
        if kind == .player { p["loop"] = .bool(true) }
        p["playing"] = .bool(true)
        try engine.attach(kind, name: "p", parameters: p)
        return engine
    }

    /// Renders `frames` in host blocks of 256 frames with `poll()` between them (the JACK host's rhythm),
    /// returning the left channel.
    @discardableResult
    private func run(_ engine: Engine, frames: Int) -> [Float] {
        OfflineRenderer(engine: engine).render(frameCount: frames, hostBlockFrames: 256)[0]
    }

    /// Renders until every released object has been freed (at most 2 s of audio).
    private func drain(_ engine: Engine) -> Int {
        for _ in 0..<40 where engine.pendingReleaseCount > 0 { run(engine, frames: 2_400) }
        return engine.pendingReleaseCount
    }

    private func allFinite(_ samples: [Float]) -> Bool { samples.allSatisfy(\.isFinite) }

    // MARK: The render side's promise

    /// A timed command is not settled while it waits for its frame; it settles once applied, and a
    /// purge settles it at once. Deferred frees wait for `settledCommandCount`, not for the queue's
    /// consumer cursor (which passes a timed command as soon as it is filed).
    @Test func aTimedCommandSettlesOnlyWhenAppliedOrPurged() throws {
        let render = RenderEngine(maxBlockFrames: 64)
        let ramp = UnsafeMutablePointer<ParameterRamp>.allocate(capacity: 1)
        ramp.initialize(to: ParameterRamp(0))
        defer { ramp.deallocate() }
        var out = [Float](repeating: 0, count: 256)
        func cycle() {
            out.withUnsafeMutableBufferPointer { buffer in
                var channel: UnsafeMutablePointer<Float>? = buffer.baseAddress
                withUnsafePointer(to: &channel) { outputs in
                    render.process(
                        frameCount: 256, inputs: nil, inputCount: 0, outputs: outputs, outputCount: 1,
                        inserts: .none)
                }
            }
        }
        // Queue position 0: due at frame 1,000; position 1: immediate.
        #expect(render.commands.push(TimedCommand(time: 1_000, .setFade(ramp, target: 1, rampFrames: 0))))
        #expect(render.commands.push(TimedCommand(.setFade(ramp, target: 0.5, rampFrames: 0))))
        cycle()
        #expect(render.commands.consumedCount == 2)
        #expect(render.settledCommandCount == 0, "the timed command is still pending")
        #expect(ramp.pointee.value == 0.5)
        cycle(); cycle()
        #expect(render.settledCommandCount == 0, "frame 1,000 is in the fourth cycle")
        cycle()
        #expect(render.settledCommandCount == 2)
        #expect(ramp.pointee.value == 1)
        // A purge settles a pending command without applying it.
        #expect(render.commands.push(TimedCommand(time: 100_000, .setFade(ramp, target: 0.25, rampFrames: 0))))
        cycle()
        #expect(render.settledCommandCount == 2)
        #expect(render.commands.push(TimedCommand(.purge(UnsafeMutableRawPointer(ramp)))))
        cycle()
        #expect(render.settledCommandCount == 4)
        #expect(ramp.pointee.value == 1, "a purged command must not apply")
    }

    // MARK: Scenarios (the crash reports' reproducers, in process)

    /// The reproducer: an environment made, fed and freed while a move of its source waits for its frame.
    @Test(arguments: ["sphericalHead", "HRTF", "equalPowerPanning"])
    func freeingAnEnvironmentWithAMovePendingIsSafe(algorithm: String) throws {
        let engine = try engineWithPlayer(source: ["renderingAlgorithm": .string(algorithm)])
        var output: [Float] = []
        // Each HRTF environment loads its set (about a second): fewer loops there.
        for loop in 0..<(algorithm == "HRTF" ? 6 : 40) {
            let env = "env\(loop)"
            try engine.attach(.environment, name: env)
            try engine.connect(env, to: "main")
            try engine.connect("p", to: env)
            output += run(engine, frames: 512)
            try engine.setVector("p", "position", Double(loop % 5) - 2, 0, -2, atSampleTime: engine.sampleTime + 9_600)
            if loop % 2 == 0 {
                try engine.detach(env)
            } else {
                try engine.disconnect("p", from: env)
                output += run(engine, frames: 256)
                try engine.detach(env)
            }
            output += run(engine, frames: 1_440)
        }
        output += run(engine, frames: 12_000)
        #expect(allFinite(output))
        #expect(drain(engine) == 0, "released objects were never freed")
    }

    /// A source disconnected (not freed) from a live environment while a move waits: the voice goes,
    /// the pending move must not reach it.
    @Test func disconnectingASourceWithAMovePendingIsSafe() throws {
        let engine = try engineWithPlayer(source: ["renderingAlgorithm": .string("HRTF")])
        try engine.attach(.environment, name: "env")
        try engine.connect("env", to: "main")
        for loop in 0..<30 {
            try engine.connect("p", to: "env")
            run(engine, frames: 768)
            for k in 0..<4 {
                try engine.setVector(
                    "p", "position", Double(k), 0, -1, atSampleTime: engine.sampleTime + Int64(2_000 * (k + 1)))
            }
            try engine.disconnect("p", from: "env")
            run(engine, frames: loop % 3 == 0 ? 256 : 2_000)
        }
        let out = run(engine, frames: 12_000)
        #expect(allFinite(out))
        #expect(drain(engine) == 0)
    }

    /// Players and audioplayers freed while a timed play, pause, volume and stop wait: the commands are
    /// dropped with the node (no transport event from a node that is gone) and its state is freed.
    @Test(arguments: [NodeKind.player, .audioplayer])
    func freeingAPlayerWithTransportPendingIsSafe(kind: NodeKind) throws {
        let engine = try engineWithPlayer(kind: kind)
        try engine.connect("p", to: "main")
        for loop in 0..<30 {
            let name = "q\(loop)"
            var parameters: [String: ParameterValue] = ["buffer": .string("s")]
            if kind == .player { parameters["loop"] = .bool(true) }
            try engine.attach(kind, name: name, parameters: parameters)
            try engine.connect(name, to: "main")
            run(engine, frames: 512)
            let now = engine.sampleTime
            try engine.play(name, atSampleTime: now + 2_400)
            try engine.set(name, "volume", to: .float(0.5), atSampleTime: now + 3_000)
            try engine.pause(name, atSampleTime: now + 4_000)
            try engine.stop(name, atSampleTime: now + 4_800)
            try engine.detach(name)
            run(engine, frames: loop % 2 == 0 ? 256 : 6_000)
        }
        #expect(allFinite(run(engine, frames: 9_600)))
        #expect(drain(engine) == 0)
    }

    /// Effects and time effects between a player and an environment, freed while a timed parameter change
    /// and a timed listener move (which re-places the effect's voice) wait.
    @Test(arguments: [NodeKind.reverb, .delay, .eq, .distortion, .timepitch, .varispeed])
    func freeingAnEffectWithAParameterPendingIsSafe(kind: NodeKind) throws {
        let engine = try engineWithPlayer(source: ["renderingAlgorithm": .string("sphericalHead")])
        try engine.attach(.environment, name: "env")
        try engine.connect("env", to: "main")
        let parameter: (String, ParameterValue) =
            switch kind {
            case .reverb, .delay, .distortion: ("wetDryMix", .float(30))
            case .eq: ("globalGain", .float(-6))
            case .timepitch: ("pitch", .float(300))
            case .varispeed: ("rate", .float(1.5))
            default: ("bypass", .bool(true))
            }
        for loop in 0..<20 {
            let name = "fx\(loop)"
            try engine.attach(kind, name: name)
            try engine.connect("p", to: name)
            try engine.connect(name, to: "env")
            run(engine, frames: 1_024)
            let now = engine.sampleTime
            try engine.batch { () throws(EngineError) in
                try engine.set(name, parameter.0, to: parameter.1, atSampleTime: now + 4_800)
                try engine.setVector("env", "listener", Double(loop % 3), 0, 0, atSampleTime: now + 4_800)
            }
            try engine.detach(name)
            run(engine, frames: loop % 2 == 0 ? 256 : 7_200)
        }
        #expect(allFinite(run(engine, frames: 9_600)))
        #expect(drain(engine) == 0)
    }

    /// A buffer freed while a timed enqueue of it waits: the enqueue keeps the buffer's memory until it
    /// has applied (or been dropped), and the freed buffer is released after.
    @Test func freeingABufferWithAnEnqueuePendingIsSafe() throws {
        let engine = try engineWithPlayer()
        try engine.connect("p", to: "main")
        for loop in 0..<20 {
            let name = "b\(loop)"
            let samples = TestSignal.sine(frequency: 330, sampleRate: Self.rate, frames: 4_800, amplitude: 0.2)
            try engine.addBuffer(SampleBuffer(name: name, channels: [samples], sampleRate: Self.rate))
            try engine.scheduleBuffer(
                "p", buffer: name, options: [.interrupts], atSampleTime: engine.sampleTime + 2_400)
            try engine.removeBuffer(name)
            run(engine, frames: loop % 2 == 0 ? 1_024 : 6_000)
        }
        #expect(allFinite(run(engine, frames: 9_600)))
        #expect(drain(engine) == 0)
    }

    /// Connections made and removed while timed volume changes of their source wait (the fades are
    /// freed once silent).
    @Test func rewiringWithVolumeChangesPendingIsSafe() throws {
        let engine = try engineWithPlayer()
        try engine.attach(.mixer, name: "m")
        try engine.connect("m", to: "main")
        for loop in 0..<40 {
            try engine.connect("p", to: loop % 2 == 0 ? "m" : "main")
            run(engine, frames: 512)
            try engine.set("p", "volume", to: .float(Double(loop % 4) / 4), atSampleTime: engine.sampleTime + 3_000)
            try engine.disconnectAll("p", inputs: false)
            if loop % 5 == 0 {
                try engine.detach("m")
                try engine.attach(.mixer, name: "m")
                try engine.connect("m", to: "main")
            }
            run(engine, frames: 700)
        }
        #expect(allFinite(run(engine, frames: 9_600)))
        #expect(drain(engine) == 0)
    }
}

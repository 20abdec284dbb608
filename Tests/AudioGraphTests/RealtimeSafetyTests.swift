import AudioGraph
import DSPTestSupport
import Foundation
import Synchronization
import Testing

@Suite(.serialized) struct RealtimeSafetyTests {
    /// Renders 12 s of audio on a dedicated thread while this thread keeps editing the graph (frees
    /// racing commands scheduled for later among the edits), and counts heap allocations and mutex locks
    /// made by the render thread after a warm-up second.
    @Test(.disabled(if: AllocationProbe.isSanitized, "the sanitizer owns malloc; the plain build counts"))
    func renderThreadNeverAllocatesOrLocksWhileTheGraphChanges() throws {
        try #require(AllocationProbe.isActive, "the allocation counter is not linked in")
        let engine = TestEngine.make()
        try engine.addBuffer(
            SampleBuffer(
                name: "sine", channels: [TestSignal.sine(frequency: 220, sampleRate: 48_000, frames: 48_000)],
                sampleRate: 48_000))
        try engine.addBuffer(TestEngine.constant("dc", value: 0.1, frames: 5000, channels: 2))
        for i in 0..<8 {
            try engine.attach(
                .player, name: "p\(i)",
                parameters: [
                    "buffer": .string(i % 2 == 0 ? "sine" : "dc"),
                    "loop": .bool(true), "playing": .bool(true)
                ])
            try engine.connect("p\(i)", to: "main")
        }
        // Effects on the render path too: p0 runs through a reverb, an EQ and a delay.
        try engine.attach(.reverb, name: "verb", parameters: ["preset": .string("largeHall")])
        try engine.attach(.eq, name: "eq", parameters: ["band0.bypass": .bool(false), "band0.gain": .float(6)])
        try engine.attach(.delay, name: "echo", parameters: ["delayTime": .float(0.25)])
        try engine.disconnect("p0", from: "main")
        try engine.connect("p0", to: "verb")
        try engine.connect("verb", to: "eq")
        try engine.connect("eq", to: "echo")
        try engine.connect("echo", to: "main")
        // Time effects too: p1 through time-pitch (Rubber Band), p2 through varispeed.
        try engine.attach(.timepitch, name: "stretch", parameters: ["rate": .float(1.25), "pitch": .float(300)])
        try engine.attach(.varispeed, name: "vari", parameters: ["rate": .float(0.8)])
        for (player, effect) in [("p1", "stretch"), ("p2", "vari")] {
            try engine.disconnect(player, from: "main")
            try engine.connect(player, to: effect)
            try engine.connect(effect, to: "main")
        }
        // A 3D scene too: p3 through an environment with HRTF, p4 with the spherical head, moving.
        try engine.attach(.environment, name: "room", parameters: ["reverb": .bool(true)])
        try engine.connect("room", to: "main")
        for (player, algorithm) in [("p3", "HRTF"), ("p4", "sphericalHead")] {
            try engine.disconnect(player, from: "main")
            try engine.set(player, "renderingAlgorithm", to: .string(algorithm))
            try engine.set(player, "reverbBlend", to: .float(0.3))
            try engine.connect(player, to: "room")
        }
        // A voice processor: p6 is its microphone, p7 its reference, the engine's output too.
        try engine.attach(
            .voiceprocessor, name: "vp", parameters: ["reference": .string("engine"), "ports": .bool(false)])
        try engine.disconnect("p6", from: "main")
        try engine.disconnect("p7", from: "main")
        try engine.connect("p6", to: "vp:0")
        try engine.connect("p7", to: "vp:1")
        try engine.connect("vp", to: "main")
        try engine.installTap(on: "main", frameCount: 1024) { _ in }

        let totalFrames = 48_000 * 12
        let warmupFrames = 48_000
        let done = Atomic<Bool>(false)
        let editRounds = Atomic<Int>(0)
        let counts = Mutex<(allocations: Int64, locks: Int64, frames: Int, measuredFrom: Int, swaps: Int)>(
            (0, 0, 0, -1, 0))
        let probe = AllocationProbe()
        let thread = Thread {
            let block = 256
            let out = UnsafeMutablePointer<Float>.allocate(capacity: 2 * block)
            let pointers = UnsafeMutablePointer<UnsafeMutablePointer<Float>?>.allocate(capacity: 2)
            pointers[0] = out
            pointers[1] = out + block
            let render = engine.renderEngine
            var rendered = 0
            var baseline: (Int64, Int64) = (0, 0)
            var warmedUp = false
            var measuredFrom = -1
            var generationAtWarmup = 0
            probe.trackCurrentThread(true)
            // Render at least 12 s of audio, and keep going until the control thread has made 60 rounds
            // of edits, however fast or slow either thread runs on this machine.
            while rendered < totalFrames || editRounds.load(ordering: .relaxed) < 60 {
                if !warmedUp && rendered >= warmupFrames {
                    warmedUp = true
                    measuredFrom = rendered
                    generationAtWarmup = render.installedGeneration
                    AllocationProbe.armTrap(true)
                    baseline = (probe.allocations, probe.locks)
                }
                render.render(
                    frameCount: block, inputs: nil, inputCount: 0, outputs: UnsafePointer(pointers), outputCount: 2)
                rendered += block
                // Pace loosely so the control thread's edits interleave with rendering.
                if rendered % 4096 == 0 { usleep(200) }
            }
            let totals = (probe.allocations - baseline.0, probe.locks - baseline.1)
            AllocationProbe.armTrap(false)
            probe.trackCurrentThread(false)
            let swaps = render.installedGeneration - generationAtWarmup
            counts.withLock { $0 = (totals.0, totals.1, rendered, measuredFrom, swaps) }
            out.deallocate()
            pointers.deallocate()
            done.store(true, ordering: .releasing)
        }
        thread.start()

        var edits = 0
        let movers = [try engine.nodeID("p3"), try engine.nodeID("p4")]
        var n = 0
        while !done.load(ordering: .acquiring) {
            let name = "x\(n)"
            try engine.attach(.player, name: name, parameters: ["buffer": .string("sine"), "playing": .bool(true)])
            try engine.connect(name, to: "main")
            try engine.set("p\(n % 8)", "volume", to: .float(Double(n % 10) / 10))
            try engine.set("p\(n % 8)", "pan", to: .float(Double(n % 21) / 10 - 1))
            try engine.set("main", "outputVolume", to: .float(0.9))
            try engine.set("verb", "preset", to: .int(n % 13))
            try engine.set("echo", "delayTime", to: .float(Double(n % 8) / 10))
            try engine.set("eq", "band0.frequency", to: .float(200 + Double(n % 50) * 100))
            try engine.set("stretch", "rate", to: .float(0.5 + Double(n % 7) / 4))
            try engine.set("stretch", "pitch", to: .float(Double(n % 9) * 100 - 400))
            try engine.set("vari", "rate", to: .float(0.5 + Double(n % 6) / 4))
            try engine.set("vp", "agc", to: .bool(n % 3 != 0))
            try engine.set("vp", "noiseSuppression", to: .bool(n % 4 != 0))
            try engine.set("vp", "inputMuted", to: .bool(n % 5 == 0))
            try engine.set("vp", "bypass", to: .bool(n % 6 == 0))
            let angle = Double(n) * 0.3
            try engine.setVector("p3", "position", 2 * sin(angle), 0, -2 * cos(angle))
            try engine.setVector("p4", "velocity", 10 * cos(angle), 0, 0)
            try engine.moveSources([
                SourceMove(node: movers[0], .position, 2 * cos(angle), 0.5, -2 * sin(angle)),
                SourceMove(node: movers[1], .position, -sin(angle), 0, -1)
            ])
            try engine.setListenerAngles("room", yaw: Double(n % 90), pitch: 0, roll: 0)
            try engine.set("p4", "occlusion", to: .float(-Double(n % 40)))
            try engine.set("p3", "sourceMode", to: .string(n % 4 == 1 ? "ambienceBed" : "pointSource"))
            try engine.attach(.mixer, name: "m\(n)")
            try engine.connect(name, to: "m\(n)")
            try engine.connect("m\(n)", to: "main")
            // Frees racing commands scheduled for later: an environment fed by p5 is made, its voice and
            // listener moved 50 ms ahead, the new nodes given timed changes, and all of it freed at once.
            let later = engine.sampleTime + 2_400
            try engine.attach(.environment, name: "e\(n)")
            try engine.connect("e\(n)", to: "main")
            try engine.connect("p5", to: "e\(n)")
            try engine.setVector("p5", "position", sin(angle), 0, -1, atSampleTime: later)
            try engine.setVector("e\(n)", "listener", 0, 0, Double(n % 3), atSampleTime: later)
            try engine.set(name, "volume", to: .float(0.5), atSampleTime: later)
            try engine.set("m\(n)", "outputVolume", to: .float(0.5), atSampleTime: later)
            try engine.play(name, atSampleTime: later)
            try engine.detach(name)
            try engine.detach("m\(n)")
            if n % 2 == 0 { try engine.disconnect("p5", from: "e\(n)") }
            try engine.detach("e\(n)")
            engine.poll()
            edits += 1
            editRounds.store(edits, ordering: .relaxed)
            n += 1
            usleep(500)
        }
        engine.poll()
        let result = counts.withLock { $0 }
        #expect(result.frames >= totalFrames)
        #expect(result.measuredFrom >= warmupFrames && result.measuredFrom < warmupFrames + 256)
        #expect(edits >= 60, "the control thread made \(edits) edit rounds")
        #expect(result.swaps > 100, "the render thread swapped in \(result.swaps) programs while measured")
        #expect(result.allocations == 0, "render thread allocated \(result.allocations) times")
        #expect(result.locks == 0, "render thread locked \(result.locks) times")
    }

    @Test func thousandProgramSwapsLeakNothing() throws {
        let before = RenderProgram.liveCount.load(ordering: .relaxed)
        do {
            let engine = TestEngine.make()
            try engine.addBuffer(TestEngine.constant("x", value: 0.1))
            try engine.attach(
                .player, name: "p", parameters: ["buffer": .string("x"), "playing": .bool(true), "loop": .bool(true)])
            let renderer = OfflineRenderer(engine: engine)
            for i in 0..<1000 {
                if i % 2 == 0 { try engine.connect("p", to: "main") } else { try engine.disconnect("p", from: "main") }
                try engine.attach(.mixer, name: "m\(i)")
                try engine.detach("m\(i)")
                _ = renderer.render(frameCount: 64, hostBlockFrames: 64)
            }
            // Let the last fades finish and their memory come back.
            _ = renderer.render(frameCount: 9600, hostBlockFrames: 64)
            #expect(engine.pendingReleaseCount == 0)
        }
        // Only programs of engines still alive in parallel tests may remain; this engine's are gone.
        let after = RenderProgram.liveCount.load(ordering: .relaxed)
        #expect(after <= before + 8)
    }
}

@Suite struct AllocationProbeTests {
    /// The probe must see allocations, or the zero-allocation test above proves nothing.
    @Test(.disabled(if: AllocationProbe.isSanitized, "the sanitizer owns malloc; the plain build counts"))
    func probeCountsAllocationsOnTheTrackedThreadOnly() throws {
        try #require(AllocationProbe.isActive)
        let probe = AllocationProbe()
        let bystander = AllocationProbe()
        probe.trackCurrentThread(true)
        let before = probe.allocations
        let array = Array(repeating: UInt8(1), count: 1000 + Int.random(in: 0..<10))
        let after = probe.allocations
        probe.trackCurrentThread(false)
        #expect(array.count >= 1000)
        #expect(after > before)
        #expect(bystander.allocations == 0, "another probe's channel counted this thread")
    }
}

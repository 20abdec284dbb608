// The voice processor as a node: its ports in the host insert layout, the framing of any period into the
// canceller's frames (exact latency), bypass, muting, the engine's output as reference, and what it
// refuses. Driven through the render engine with host insert buffers, as JACK drives it.
import AudioDSP
import Foundation
@testable import AudioGraph
import DSPTestSupport
import Synchronization
import Testing

@Suite struct VoiceProcessorNodeTests {
    /// Deterministic noise in [-0.5, 0.5).
    static func noise(_ frames: Int, seed: UInt32) -> [Float] {
        var state = seed
        return (0..<frames).map { _ in
            state = state &* 1_664_525 &+ 1_013_904_223
            return Float(Int32(bitPattern: state)) / Float(UInt32.max)
        }
    }

    /// Renders periods of `period` frames with `inputs[c]` on insert channel c; returns every insert
    /// output channel and the host's first output channel.
    static func run(_ engine: Engine, inputs: [[Float]], span: Int, period: Int) -> (outputs: [[Float]], main: [Float])
    {
        let render = engine.renderEngine
        let frames = inputs.map(\.count).max() ?? 0
        let inBuffers = UnsafeMutablePointer<UnsafePointer<Float>?>.allocate(capacity: span)
        let outBuffers = UnsafeMutablePointer<UnsafeMutablePointer<Float>?>.allocate(capacity: span)
        let inStorage = UnsafeMutablePointer<Float>.allocate(capacity: span * period)
        let outStorage = UnsafeMutablePointer<Float>.allocate(capacity: span * period)
        let main = UnsafeMutablePointer<Float>.allocate(capacity: 2 * period)
        let mainPointers = UnsafeMutablePointer<UnsafeMutablePointer<Float>?>.allocate(capacity: 2)
        defer {
            inBuffers.deallocate(); outBuffers.deallocate(); inStorage.deallocate(); outStorage.deallocate()
            main.deallocate(); mainPointers.deallocate()
        }
        mainPointers[0] = main
        mainPointers[1] = main + period
        var outputs = Array(repeating: [Float](), count: span)
        var mainOut: [Float] = []
        for p in 0..<(frames / period) {
            for c in 0..<span {
                let input = inStorage + c * period
                for i in 0..<period {
                    input[i] = c < inputs.count && p * period + i < inputs[c].count ? inputs[c][p * period + i] : 0
                }
                inBuffers[c] = UnsafePointer(input)
                outBuffers[c] = outStorage + c * period
                outBuffers[c]!.update(repeating: 0, count: period)
            }
            render.render(
                frameCount: period, inputs: nil, inputCount: 0, outputs: UnsafePointer(mainPointers), outputCount: 2,
                inserts: HostInsertIO(
                    inputs: UnsafePointer(inBuffers), outputs: UnsafePointer(outBuffers), channelCount: span))
            for c in 0..<span { outputs[c] += UnsafeBufferPointer(start: outStorage + c * period, count: period) }
            mainOut += UnsafeBufferPointer(start: main, count: period)
            engine.poll()
        }
        return (outputs, mainOut)
    }

    @Test func itsPortsAreTheMicrophoneThenTheReferenceInAndTheCleanedVoiceOut() throws {
        let engine = TestEngine.make()
        try engine.attach(.voiceprocessor, name: "vp", parameters: ["micChannels": .int(2)])
        let layout = engine.hostInsertLayout
        #expect(layout.inserts.count == 1)
        let insert = try #require(layout.inserts.first)
        #expect(insert.ports == .voice(micChannels: 2, referenceChannels: 2))
        #expect(insert.channelCount == 4)
        #expect(insert.portNames.inputs == ["vp_mic_1", "vp_mic_2", "vp_ref_1", "vp_ref_2"])
        #expect(insert.portNames.outputs == ["vp_out_1", "vp_out_2"])
        let latency = try #require(engine.get("vp", "latency").intValue)
        // One 10 ms frame of framing plus the canceller's own 5 ms (its suppressor's hop): 15 ms, the
        // most the issue allows.
        #expect(latency == 720)
        #expect(insert.latencyFrames == latency)
        // With its ports it renders for the host, connected or not (and listings say so).
        #expect(engine.nodes().first { $0.name == "vp" }?.isActive == true)
        #expect(engine.renderOrder().contains("vp"))

        try engine.attach(.voiceprocessor, name: "inside", parameters: ["ports": .bool(false)])
        #expect(engine.hostInsertLayout.inserts.map(\.node) == ["vp"])
        try engine.detach("vp")
        #expect(engine.hostInsertLayout.inserts.isEmpty)
    }

    @Test(arguments: [100, 256, 1000])
    func bypassPassesTheMicrophoneBitExactlyDelayedByTheLatency(period: Int) throws {
        let engine = TestEngine.make()
        try engine.attach(
            .voiceprocessor, name: "vp", parameters: ["bypass": .bool(true), "referenceChannels": .int(1)])
        let latency = try #require(engine.get("vp", "latency").intValue)
        let mic = Self.noise(12_000, seed: 7)
        let reference = Self.noise(12_000, seed: 8)
        let out = Self.run(engine, inputs: [mic, reference], span: 2, period: period).outputs[0]
        #expect(out.count >= 10_000)
        for i in 0..<out.count {
            let expected: Float = i < latency ? 0 : mic[i - latency]
            if out[i] != expected {
                Issue.record("frame \(i): \(out[i]) instead of \(expected)")
                return
            }
        }
    }

    @Test func aMutedProcessorOutputsDigitalSilence() throws {
        let engine = TestEngine.make()
        try engine.attach(
            .voiceprocessor, name: "vp", parameters: ["inputMuted": .bool(true), "referenceChannels": .int(1)])
        let mic = Self.noise(9_600, seed: 3)
        let out = Self.run(engine, inputs: [mic, []], span: 2, period: 256).outputs[0]
        #expect(out.allSatisfy { $0 == 0 })
        // Unmuted live (and bypassed, so the test does not depend on the canceller), the voice returns.
        try engine.set("vp", "inputMuted", to: .bool(false))
        try engine.set("vp", "bypass", to: .bool(true))
        let after = Self.run(engine, inputs: [mic, []], span: 2, period: 256).outputs[0]
        #expect(after.suffix(4_800).contains { $0 != 0 })
    }

    /// Muted-talker detection reports a talker who keeps talking, not the near end's blips: 40 ms bursts
    /// once a second (what residual echo taken for the near end looks like: a few frames, each held
    /// 200 ms by the detector's hangover) raise nothing; a second of talk raises `started`, and silence
    /// `ended`.
    @Test func aMutedTalkerIsReportedOnlyWhenTheyKeepTalking() throws {
        let engine = TestEngine.make()
        try engine.attach(
            .voiceprocessor, name: "vp",
            parameters: ["inputMuted": .bool(true), "referenceChannels": .int(1), "ports": .bool(false)])
        let events = EventBox()
        engine.setEventHandler { events.append($0) }
        let rate = 48_000
        var mic = [Float](repeating: 0, count: 7 * rate)
        let talk = Self.noise(rate + rate / 2, seed: 9).map { $0 * 0.3 }
        for second in 0..<4 {
            for i in 0..<(rate / 25) { mic[second * rate + i] = talk[i] }
        }
        for i in 0..<rate { mic[4 * rate + i] = talk[i] }
        try engine.addBuffer(SampleBuffer(name: "mic", channels: [mic], sampleRate: 48_000))
        try engine.attach(.player, name: "p", parameters: ["buffer": .string("mic"), "playing": .bool(true)])
        try engine.connect("p", to: "vp:0")
        try engine.connect("vp", to: "main")
        let renderer = OfflineRenderer(engine: engine)
        var changes: [(second: Double, started: Bool)] = []
        for block in 0..<(7 * rate / 4_800) {
            _ = renderer.render(frameCount: 4_800, hostBlockFrames: 256)
            engine.poll()
            for case .voiceActivity(_, let started) in events.all.suffix(from: changes.count) {
                changes.append((Double(block + 1) / 10, started))
            }
        }
        #expect(changes.map(\.started) == [true, false], "\(changes)")
        #expect(changes.first.map { $0.second > 4.25 && $0.second < 4.6 } == true, "\(changes)")
    }

    @Test func graphConnectionsFeedTheMicrophoneAndItsOutputFeedsTheGraph() throws {
        let engine = TestEngine.make()
        let mic = Self.noise(9_600, seed: 11)
        try engine.addBuffer(SampleBuffer(name: "mic", channels: [mic], sampleRate: TestEngine.rate))
        try engine.attach(.player, name: "p", parameters: ["buffer": .string("mic")])
        try engine.attach(.voiceprocessor, name: "vp", parameters: ["bypass": .bool(true), "ports": .bool(false)])
        try engine.connect("p", to: "vp:0")
        try engine.connect("vp", to: "main")
        let latency = try #require(engine.get("vp", "latency").intValue)
        let lock = Mutex<[Float]>([])
        try engine.installTap(on: "vp", frameCount: 480) { block in lock.withLock { $0 += block.channels[0] } }
        try engine.play("p")
        _ = TestEngine.render(engine, frames: 9_600, block: 333)
        engine.flushTaps()
        let captured = lock.withLock { $0 }
        #expect(captured.count == 9_600)
        for i in latency..<captured.count where captured[i] != mic[i - latency] {
            Issue.record("frame \(i): \(captured[i]) instead of \(mic[i - latency])")
            return
        }
    }

    @Test func badValuesAreRefusedByName() throws {
        let engine = TestEngine.make()
        do {
            try engine.attach(.voiceprocessor, name: "vp", parameters: ["micChannels": .int(3)])
            Issue.record("three microphone channels were accepted")
        } catch {
            #expect(error.code == .outOfRange)
            // A whole number is shown as one.
            #expect(error.message.contains("micChannels = 3 is out of range 1…2"), "\(error.message)")
        }
        #expect(engine.nodes().allSatisfy { $0.name != "vp" })
        try engine.attach(.voiceprocessor, name: "vp2")
        // Its two input buses are named when a third is asked for.
        try engine.attach(.player, name: "p")
        do {
            try engine.connect("p", to: "vp2:2")
            Issue.record("a third input bus was accepted")
        } catch {
            #expect(error.code == .invalidBus)
            #expect(error.message.contains("(it has buses 0 and 1)"), "\(error.message)")
        }
        for (parameter, value) in [("micChannels", ParameterValue.int(2)), ("mode", .string("lowComplexity"))] {
            do {
                try engine.set("vp2", parameter, to: value)
                Issue.record("\(parameter) changed after creation")
            } catch {
                #expect(error.code == .readOnly)
            }
        }
        do {
            try engine.set("vp2", "duckLevel", to: .string("loud"))
            Issue.record("an unknown ducking level was accepted")
        } catch {
            #expect(error.code == .outOfRange, "\(error)")
        }
        #expect(try engine.get("vp2", "duckLevel") == .string("default"))
    }

    /// Other-audio ducking: a player at 0.5 on the main output goes down to the level's gain within
    /// 50 ms; advanced ducking only while someone talks (here the far end, on the reference port).
    @Test(arguments: [("max", -25.0), ("min", -6.0), ("default", -10.0)])
    func duckingBringsThePlayersDownToTheLevel(level: String, decibels: Double) throws {
        let engine = TestEngine.make()
        try engine.addBuffer(TestEngine.constant("dc", value: 0.5, frames: 48_000))
        try engine.attach(.player, name: "music", parameters: ["buffer": .string("dc"), "loop": .bool(true)])
        try engine.connect("music", to: "main")
        try engine.attach(
            .voiceprocessor, name: "vp",
            parameters: ["duckOthers": .bool(true), "duckLevel": .string(level), "referenceChannels": .int(1)])
        try engine.play("music")
        let main = Self.run(engine, inputs: [[], []], span: 2, period: 256).main
        #expect(main.isEmpty)  // no frames asked for yet
        let out = Self.run(engine, inputs: [[Float](repeating: 0, count: 9_600), []], span: 2, period: 256).main
        // Mono into the stereo main mixer: equal-power centre, 0.5 × √½ before ducking.
        let unducked = Float(0.5 * 0.5.squareRoot())
        let expected = unducked * Float(pow(10, decibels / 20))
        #expect(abs(out.last! - expected) < 1e-4, "\(level): \(out.last!) instead of \(expected)")
        let glide = out.firstIndex { abs($0 - expected) < 1e-4 } ?? out.count
        #expect(glide < 480 + 2_400 + 512, "\(level) took \(glide) frames to settle")

        try engine.set("vp", "advancedDucking", to: .bool(true))
        let quiet = Self.run(engine, inputs: [[Float](repeating: 0, count: 48_000), []], span: 2, period: 256).main
        #expect(abs(quiet.last! - unducked) < 1e-4, "advanced ducking with nobody talking: \(quiet.last!)")
        let talk = Self.run(engine, inputs: [[], Self.noise(24_000, seed: 4)], span: 2, period: 256).main
        #expect(abs(talk.last! - expected) < 1e-4, "advanced ducking while the far end talks: \(talk.last!)")
        try engine.set("vp", "duckOthers", to: .bool(false))
        let off = Self.run(engine, inputs: [[Float](repeating: 0, count: 9_600), []], span: 2, period: 256).main
        #expect(abs(off.last! - unducked) < 1e-6)
    }

    @Test func anInputWithVoiceProcessingCleansTheCapturePortsBeforeTheGraph() throws {
        let engine = TestEngine.make(outputs: 1, inputs: 1)
        try engine.attach(.input, name: "mic", parameters: ["voiceProcessing": .bool(true), "bypass": .bool(true)])
        try engine.connect("mic", to: "main")
        let latency = try #require(engine.get("mic", "latency").intValue)
        #expect(latency > 0)
        #expect(engine.hostInsertLayout.inserts.isEmpty, "an input's processor has no ports of its own")
        let capture = Self.noise(9_600, seed: 21)
        let out = OfflineRenderer(engine: engine).render(frameCount: 9_600, hostBlockFrames: 100, inputs: [capture])[0]
        for i in 0..<out.count {
            let expected: Float = i < latency ? 0 : capture[i - latency]
            if out[i] != expected {
                Issue.record("frame \(i): \(out[i]) instead of \(expected)")
                return
            }
        }
        // Live switches reach it; without voice processing the same values are only kept.
        try engine.set("mic", "inputMuted", to: .bool(true))
        let muted = OfflineRenderer(engine: engine).render(frameCount: 4_800, hostBlockFrames: 256, inputs: [capture])[
            0]
        #expect(muted.suffix(2_400).allSatisfy { $0 == 0 })
        let plain = TestEngine.make(outputs: 1, inputs: 1)
        try plain.attach(.input, name: "mic")
        try plain.set("mic", "agc", to: .bool(false))
        #expect(try plain.get("mic", "agc") == .bool(false))
    }

    @Test func aRateTheCancellerDoesNotRunAtIsRefused() throws {
        let engine = Engine(configuration: EngineConfiguration(sampleRate: 192_000, blockFrames: 64))
        do {
            try engine.attach(.voiceprocessor, name: "vp")
            Issue.record("a voice processor at 192 kHz was accepted")
        } catch {
            #expect(error.code == .notAllowed)
            #expect(error.message.contains("8–96 kHz"))
        }
    }

    @Test func voiceProcessingOnMoreThanTwoCaptureChannelsIsRefused() throws {
        let engine = TestEngine.make(inputs: 4)
        do {
            try engine.attach(.input, name: "mic", parameters: ["voiceProcessing": .bool(true)])
            Issue.record("voice processing on four capture channels was accepted")
        } catch {
            #expect(error.code == .notAllowed)
            #expect(error.message.contains("1 or 2 capture channels"))
        }
        #expect(engine.nodes().allSatisfy { $0.name != "mic" })
    }
}

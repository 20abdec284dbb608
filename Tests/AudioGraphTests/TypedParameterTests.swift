import AudioDSP
import Foundation
import AudioGraph
import DSPTestSupport
import Testing

/// The parameter tables are the one declaration: keys, positions and kernel indices all come from them.
@Suite struct TypedParameterTests {
    @Test func kernelParameterEnumsNameTheirTablesInOrder() {
        #expect(ReverbKernel.parameters.map(\.name) == ReverbKernel.Parameter.allCases.map { "\($0)" })
        #expect(DelayKernel.parameters.map(\.name) == DelayKernel.Parameter.allCases.map { "\($0)" })
        #expect(DistortionKernel.parameters.map(\.name) == DistortionKernel.Parameter.allCases.map { "\($0)" })
        #expect(TimePitchKernel.parameters.map(\.name) == TimePitchKernel.Parameter.allCases.map { "\($0)" })
        #expect(VarispeedKernel.parameters.map(\.name) == VarispeedKernel.Parameter.allCases.map { "\($0)" })
        #expect(EQKernel.bandParameters.map(\.name) == EQBandParameter.allCases.map { "\($0)" })
        #expect(EQKernel.globalParameters.map(\.name) == ["globalGain"])
    }

    @Test func everyKeyNamesItselfAndIsDeclaredSomewhere() {
        var declared: Set<ParameterKey> = []
        for kind in NodeKind.allCases {
            for spec in kind.parameters { if let key = spec.key { declared.insert(key) } }
        }
        for key in ParameterKey.allCases {
            #expect(ParameterKey(name: key.name) == key)
            #expect(declared.contains(key), "\(key.name) is in no table")
        }
        #expect(ParameterKey.positionX.name == "positionX")
        #expect(ParameterKey(name: "positonX") == nil)
    }

    @Test(arguments: NodeKind.allCases)
    func tablesResolveNamesAndKeysToTheSamePosition(_ kind: NodeKind) {
        let table = kind.parameterTable
        #expect(kind.parameterTable === table, "built once, shared")
        for (position, spec) in table.specs.enumerated() {
            #expect(table.position(of: spec.name) == position)
            #expect(spec.key == ParameterKey(name: spec.name))
            if let key = spec.key { #expect(table.position(key) == position) }
        }
        for key in ParameterKey.allCases where table.spec(named: key.name) == nil {
            #expect(table.position(key) == nil)
        }
        #expect(table.position(of: "noSuchParameter") == nil)
    }

    @Test func effectSpecsCarryTheirKernelIndices() {
        func indices(_ kind: NodeKind) -> [String: Int] {
            var result: [String: Int] = [:]
            for spec in kind.parameters { if let index = spec.kernelIndex { result[spec.name] = index } }
            return result
        }
        #expect(
            indices(.reverb) == [
                "wetDryMix": ReverbKernel.Parameter.wetDryMix.rawValue,
                "preset": ReverbKernel.Parameter.preset.rawValue
            ])
        #expect(indices(.delay)["lowPassCutoff"] == DelayKernel.Parameter.lowPassCutoff.rawValue)
        #expect(indices(.distortion)["preset"] == DistortionKernel.Parameter.preset.rawValue)
        #expect(indices(.timepitch)["rate"] == TimePitchKernel.Parameter.rate.rawValue)
        #expect(NodeKind.timepitch.parameter(named: "rate")?.key == .rate)
        #expect(indices(.varispeed) == ["rate": VarispeedKernel.Parameter.rate.rawValue])
        let eq = NodeKind.eq.parameterTable(bandCount: 3)
        #expect(eq.specs.count == NodeKind.eq.parameters(bandCount: 3).count)
        #expect(eq.spec(named: "globalGain")?.kernelIndex == EQKernel.globalGainIndex)
        #expect(eq.spec(named: "band2.gain")?.kernelIndex == EQKernel.parameterIndex(band: 2, .gain))
        #expect(eq.spec(named: "band1.bypass")?.kernelIndex == EQKernel.parameterIndex(band: 1, .bypass))
        #expect(eq.spec(named: "band1.bypass")?.key == nil)
        #expect(eq.spec(named: "bypass")?.key == .bypass)
        #expect(eq.spec(named: "band3.gain") == nil)
        #expect(NodeKind.eq.parameterTable(bandCount: 3) === eq)
    }

    /// `Engine.set` by name resolves the name once and allocates nothing on the calling thread once warm.
    @Test(.disabled(if: AllocationProbe.isSanitized, "the sanitizer owns malloc; the plain build counts"))
    func setAllocatesNothingOnTheControlThread() throws {
        try #require(AllocationProbe.isActive, "the allocation counter is not linked in")
        let engine = TestEngine.make()
        try engine.addBuffer(TestEngine.constant("dc", value: 0.1, frames: 4800, channels: 2))
        try engine.attach(
            .player, name: "p",
            parameters: [
                "buffer": .string("dc"), "loop": .bool(true),
                "playing": .bool(true)
            ])
        try engine.connect("p", to: "main")
        try engine.attach(.reverb, name: "verb")
        try engine.connect("verb", to: "main")
        let renderer = OfflineRenderer(engine: engine)
        let probe = AllocationProbe()
        var allocations: Int64 = 0
        for round in 0..<200 {
            let counted = round >= 50
            if counted { probe.trackCurrentThread(true) }
            let before = probe.allocations
            try engine.set("p", "volume", to: .float(round % 2 == 0 ? 0.7 : 0.5))
            try engine.set("p", "pan", to: .float(round % 2 == 0 ? -0.3 : 0.3))
            try engine.set("main", "outputVolume", to: .float(0.9))
            try engine.set("verb", "wetDryMix", to: .float(40))
            if counted {
                allocations += probe.allocations - before
                probe.trackCurrentThread(false)
            }
            // Drains the command queue (not counted: the render thread's own test covers it).
            _ = renderer.render(frameCount: 64, hostBlockFrames: 64)
        }
        #expect(allocations == 0, "engine.set allocated \(allocations) times in 150 rounds of 4 sets")
    }

    /// Frame-rate moves of 3D sources allocate nothing on the calling thread once warm.
    @Test(.disabled(if: AllocationProbe.isSanitized, "the sanitizer owns malloc; the plain build counts"))
    func moveSourcesAllocatesNothingOnTheControlThread() throws {
        try #require(AllocationProbe.isActive, "the allocation counter is not linked in")
        let engine = TestEngine.make()
        try engine.addBuffer(TestEngine.constant("dc", value: 0.1, frames: 4800, channels: 1))
        try engine.attach(.environment, name: "room")
        try engine.connect("room", to: "main")
        var ids: [Int32] = []
        for (i, algorithm) in ["equalPowerPanning", "sphericalHead", "equalPowerPanning", "sphericalHead"].enumerated()
        {
            try engine.attach(
                .player, name: "s\(i)",
                parameters: [
                    "buffer": .string("dc"), "loop": .bool(true), "playing": .bool(true),
                    "renderingAlgorithm": .string(algorithm)
                ])
            try engine.connect("s\(i)", to: "room")
            ids.append(try engine.nodeID("s\(i)"))
        }
        let renderer = OfflineRenderer(engine: engine)
        let probe = AllocationProbe()
        var moves = ids.map { SourceMove(node: $0, .position, 0, 0, -1) }
        var allocations: Int64 = 0
        for round in 0..<200 {
            let angle = Double(round) * 0.05
            for (i, id) in ids.enumerated() {
                let a = angle + Double(i)
                moves[i] = SourceMove(node: id, .position, 2 * sin(a), 0.3, -2 * cos(a))
            }
            let counted = round >= 50
            if counted { probe.trackCurrentThread(true) }
            let before = probe.allocations
            try engine.moveSources(moves)
            try engine.setVector("s0", "velocity", 0.1, 0, 0)
            if counted {
                allocations += probe.allocations - before
                probe.trackCurrentThread(false)
            }
            _ = renderer.render(frameCount: 64, hostBlockFrames: 64)
        }
        #expect(allocations == 0, "moveSources allocated \(allocations) times in 150 rounds")
    }
}

/// A filter frequency is at most half the engine's rate: refused above it at creation, on a set and in
/// a planned edit, at whatever rate the engine runs (the specs' own bound is 24 kHz, 48 kHz's half).
@Suite struct NyquistBoundTests {
    private func refusal(_ body: () throws(EngineError) -> Void) -> EngineError? {
        do throws(EngineError) {
            try body()
            return nil
        } catch {
            return error
        }
    }

    @Test(arguments: [22_050.0, 44_100.0, 48_000.0, 96_000.0])
    func filterFrequenciesStopAtHalfTheRate(_ rate: Double) throws {
        let engine = Engine(configuration: EngineConfiguration(sampleRate: rate))
        let half = rate / 2
        let above = min(half, 24_000) + 1
        let attach = refusal { () throws(EngineError) in
            try engine.attach(.eq, name: "e", parameters: ["bands": .int(1), "band0.frequency": .float(above)])
        }
        #expect(attach?.code == .outOfRange, "\(rate) Hz: \(String(describing: attach))")
        #expect(attach?.message.contains("…\(Int(min(half, 24_000)))") == true, "\(String(describing: attach))")
        try engine.attach(.eq, name: "e", parameters: ["bands": .int(1), "band0.frequency": .float(min(half, 24_000))])
        try engine.attach(.delay, name: "d")
        #expect(
            refusal { () throws(EngineError) in try engine.set("d", "lowPassCutoff", to: .float(above)) }?.code
                == .outOfRange)
        try engine.set("d", "lowPassCutoff", to: .float(min(half, 24_000)))
        var plan = engine.planEdits()
        #expect(
            refusal { () throws(EngineError) in try plan.set("e", "band0.frequency", to: .float(above)) }?.code
                == .outOfRange)
        #expect(
            refusal { () throws(EngineError) in
                try plan.attach(.delay, name: "d2", parameters: ["lowPassCutoff": .float(above)])
            }?.code
                == .outOfRange)
    }
}

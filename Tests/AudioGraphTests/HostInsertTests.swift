// Effects exposed as host inserts, without a host: the render engine adds the insert inputs to the
// effect's input and writes its output to the insert outputs, at every sub-block offset.
import AudioDSP
@testable import AudioGraph
import DSPTestSupport
import Testing

@Suite struct HostInsertTests {
    /// Renders `periods` periods of `period` frames, feeding `input` to insert channel `base` (channel
    /// 0 of the node) and returning what the insert's first output channel and the host output carry.
    private func run(_ engine: Engine, base: Int, span: Int, input: [Float], period: Int) -> (
        insert: [Float], main: [Float]
    ) {
        let render = engine.renderEngine
        let inBuffers = UnsafeMutablePointer<UnsafePointer<Float>?>.allocate(capacity: span)
        let outBuffers = UnsafeMutablePointer<UnsafeMutablePointer<Float>?>.allocate(capacity: span)
        let outStorage = UnsafeMutablePointer<Float>.allocate(capacity: span * period)
        let main = UnsafeMutablePointer<Float>.allocate(capacity: 2 * period)
        let mainPointers = UnsafeMutablePointer<UnsafeMutablePointer<Float>?>.allocate(capacity: 2)
        defer {
            inBuffers.deallocate(); outBuffers.deallocate(); outStorage.deallocate(); main.deallocate()
            mainPointers.deallocate()
        }
        mainPointers[0] = main
        mainPointers[1] = main + period
        var insertOut: [Float] = []
        var mainOut: [Float] = []
        input.withUnsafeBufferPointer { source in
            for p in 0..<(input.count / period) {
                for c in 0..<span {
                    inBuffers[c] = c == base ? UnsafePointer(source.baseAddress! + p * period) : nil
                    outBuffers[c] = outStorage + c * period
                    outBuffers[c]!.update(repeating: 0, count: period)
                }
                render.render(
                    frameCount: period, inputs: nil, inputCount: 0, outputs: UnsafePointer(mainPointers),
                    outputCount: 2,
                    inserts: HostInsertIO(
                        inputs: UnsafePointer(inBuffers), outputs: UnsafePointer(outBuffers),
                        channelCount: span))
                insertOut += UnsafeBufferPointer(start: outStorage + base * period, count: period)
                mainOut += UnsafeBufferPointer(start: main, count: period)
                engine.poll()
            }
        }
        return (insertOut, mainOut)
    }

    @Test func exposedEQShapesTheInsertInputAndRendersWithoutAGraphPath() throws {
        let engine = TestEngine.make()
        try engine.attach(
            .eq, name: "eq",
            parameters: [
                "bands": .int(1), "band0.bypass": .bool(false), "band0.filterType": .string("lowShelf"),
                "band0.frequency": .float(2_000), "band0.gain": .float(-12), "insert": .bool(true)
            ])
        let layout = engine.hostInsertLayout
        #expect(layout.inserts == [HostInsert(node: "eq", channelCount: 2, base: 0, latencyFrames: 0)])
        let tone = TestSignal.sine(frequency: 500, sampleRate: 48_000, frames: 48_000, amplitude: 0.5)
        // A period that is not a multiple of the 64-frame sub-block: offsets inside the period matter.
        let (insert, main) = run(engine, base: 0, span: 2, input: tone, period: 100)
        let measured = Goertzel.measure(insert[24_000..<48_000], frequency: 500, sampleRate: 48_000).amplitude
        let expected =
            0.5
            * BiquadCoefficients.eqBand(
                type: .lowShelf, frequency: 2_000, bandwidth: 1, gainDecibels: -12,
                sampleRate: 48_000
            ).response(at: 500, sampleRate: 48_000).magnitude
        #expect(
            abs(Decibels.fromAmplitude(measured) - Decibels.fromAmplitude(expected)) < 0.02,
            "insert output \(measured), analytic \(expected)")
        #expect(main.allSatisfy { $0 == 0 }, "the EQ is not connected to main")
    }

    @Test func insertInputAddsToTheGraphInputAndTheOutputFeedsBoth() throws {
        let engine = TestEngine.make()
        try engine.addBuffer(TestEngine.constant("dc", value: 0.25, channels: 1))
        try engine.attach(
            .player, name: "p", parameters: ["buffer": .string("dc"), "loop": .bool(true), "playing": .bool(true)])
        try engine.attach(
            .delay, name: "d", parameters: ["delayTime": .float(0), "wetDryMix": .float(0), "insert": .bool(true)])
        try engine.connect("p", to: "d")
        try engine.connect("d", to: "main")
        let input = [Float](repeating: 0.125, count: 12_800)
        let (insert, main) = run(engine, base: 0, span: 2, input: input, period: 256)
        // Dry delay: out = player (mono 0.25, copied to both channels of the effect) + insert input.
        let player: Float = 0.25
        #expect(abs(insert[10_000] - (player + 0.125)) < 1e-5, "insert out \(insert[10_000])")
        #expect(abs(main[10_000] - (player + 0.125)) < 1e-5, "main out \(main[10_000])")
    }

    @Test func insertChannelsAreAllocatedFirstFitAndFreed() throws {
        let engine = TestEngine.make()
        try engine.attach(.reverb, name: "a", parameters: ["insert": .bool(true)])
        try engine.attach(.delay, name: "b", parameters: ["insert": .bool(true), "channels": .int(1)])
        try engine.attach(.eq, name: "c", parameters: ["insert": .bool(true)])
        #expect(engine.hostInsertLayout.inserts.map(\.base) == [0, 2, 3])
        try engine.detach("b")
        try engine.attach(.distortion, name: "d", parameters: ["insert": .bool(true), "channels": .int(1)])
        #expect(engine.hostInsertLayout.inserts.map { "\($0.node)@\($0.base)" } == ["a@0", "d@2", "c@3"])
        let before = engine.hostInsertLayout.version
        try engine.set("a", "insert", to: .bool(false))
        #expect(engine.hostInsertLayout.version > before)
        #expect(engine.hostInsertLayout.channelSpan == 5)
    }

    /// An exposed time-pitch at rate 1 / pitch 0 plays a click at the insert output exactly its reported
    /// latency later (the JACK port latency and the `latency` parameter), whatever the period, from the
    /// first period on.
    @Test(arguments: [100, 256])
    func insertedTimePitchDelaysByExactlyItsReportedLatency(period: Int) throws {
        let engine = TestEngine.make()
        try engine.attach(.timepitch, name: "tp", parameters: ["insert": .bool(true)])
        let latency = try #require(engine.hostInsertLayout.inserts.first?.latencyFrames)
        #expect(try engine.get("tp", "latency") == .int(latency))
        var click = [Float](repeating: 0, count: 25_600)
        click[3000] = 0.5
        let (insert, _) = run(engine, base: 0, span: 2, input: click, period: period)
        let peak = insert.indices.max { abs(insert[$0]) < abs(insert[$1]) }!
        #expect(peak == 3000 + latency, "click out at \(peak), input 3000, latency \(latency)")
    }
}

import AudioGraph
import DSPTestSupport
import Testing

@Suite struct BlockSizeInvarianceTests {
    /// A graph exercising every render path: mono and stereo players, a loop, a submix with its own
    /// output volume, panning, a live input, a timed start, and parameter glides between segments.
    func renderScene(block: Int) throws -> [[Float]] {
        let rate = TestEngine.rate
        let engine = Engine(
            configuration: EngineConfiguration(
                sampleRate: rate, blockFrames: 64,
                outputChannelCount: 2, inputChannelCount: 1))
        var noise = SeededRandom(seed: 7)
        let stereoNoise = (0..<2).map { _ in (0..<30_000).map { _ in noise.nextFloat() * 0.3 } }
        try engine.addBuffer(SampleBuffer(name: "noise", channels: stereoNoise, sampleRate: rate))
        try engine.addBuffer(
            SampleBuffer(
                name: "sine", channels: [TestSignal.sine(frequency: 997, sampleRate: rate, frames: 48_000)],
                sampleRate: rate))
        try engine.attach(
            .player, name: "a",
            parameters: [
                "buffer": .string("sine"), "loop": .bool(true),
                "start": .int(17), "frames": .int(4_411), "playing": .bool(true)
            ])
        try engine.attach(.player, name: "b", parameters: ["buffer": .string("noise"), "pan": .float(0.3)])
        try engine.attach(.input, name: "mic", parameters: ["volume": .float(0.5)])
        try engine.attach(.mixer, name: "sub", parameters: ["outputVolume": .float(0.7)])
        try engine.connect("a", to: "sub")
        try engine.connect("b", to: "sub")
        try engine.connect("mic", to: "main")
        try engine.connect("sub", to: "main")
        try engine.play("b", atSampleTime: 10_007)
        let renderer = OfflineRenderer(engine: engine)
        let input = [TestSignal.sine(frequency: 311, sampleRate: rate, frames: 192_000, amplitude: 0.4)]
        var out: [[Float]] = [[], []]
        // Segments end on multiples of 64000 frames, a multiple of every block size tested, so edits land
        // on the same frame whatever the block size.
        let edits: [() throws -> Void] = [
            {
                try engine.set("a", "pan", to: .float(-0.8)); try engine.set("sub", "outputVolume", to: .float(0.2))
            },
            {
                try engine.set("b", "volume", to: .float(0.1)); try engine.set("a", "loop", to: .bool(false))
            },
            {}
        ]
        var offset = 0
        for edit in edits {
            let segmentInput = [Array(input[0][offset..<offset + 64_000])]
            let part = renderer.render(frameCount: 64_000, hostBlockFrames: block, inputs: segmentInput)
            out[0] += part[0]
            out[1] += part[1]
            offset += 64_000
            try edit()
        }
        return out
    }

    @Test func outputIsBitIdenticalForBlockSizes1_64_256_1000() throws {
        let reference = try renderScene(block: 64)
        #expect(SignalStats.peak(reference[0][...]) > 0.1)
        for block in [1, 256, 1000] {
            let other = try renderScene(block: block)
            #expect(other == reference, "block \(block)")
        }
    }
}

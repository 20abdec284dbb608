// Tests. Stereo pass-through and bypass: channel-to-channel copies, the mono up-mix, gain glides.
import AudioDSP
import Testing

@Suite struct PassThroughTests {
    static func run(_ k: inout PassThroughKernel, inputs: [[Float]], outputChannels: Int) -> [[Float]] {
        let frames = inputs[0].count
        var flatIn = inputs.flatMap { $0 }
        var flatOut = [Float](repeating: 0, count: outputChannels * frames)
        flatIn.withUnsafeMutableBufferPointer { i in
            flatOut.withUnsafeMutableBufferPointer { o in
                k.process(
                    input: BusRef(data: i.baseAddress!, channelCount: inputs.count, stride: frames),
                    output: BusRef(data: o.baseAddress!, channelCount: outputChannels, stride: frames), frames: frames)
            }
        }
        return (0..<outputChannels).map { Array(flatOut[($0 * frames)..<(($0 + 1) * frames)]) }
    }

    @Test func stereoPassesThroughBitForBit() {
        let l = spatialNoise(frames: 300, seed: 1)
        let r = spatialNoise(frames: 300, seed: 2)
        var k = PassThroughKernel()
        let out = Self.run(&k, inputs: [l, r], outputChannels: 2)
        #expect(out[0] == l && out[1] == r)
        // Into 5.1 the pair lands on L and R only.
        var k6 = PassThroughKernel()
        let six = Self.run(&k6, inputs: [l, r], outputChannels: 6)
        #expect(six[0] == l && six[1] == r && six[2...].allSatisfy { $0.allSatisfy { $0 == 0 } })
    }

    @Test func monoIsCopiedToBothSidesAndMultichannelIsTruncated() {
        let m = spatialNoise(frames: 200, seed: 3)
        var k = PassThroughKernel(gain: 0.5)
        let out = Self.run(&k, inputs: [m], outputChannels: 2)
        #expect(out[0] == m.map { $0 * 0.5 } && out[1] == out[0])
        var k2 = PassThroughKernel()
        let three = Self.run(&k2, inputs: [m, m, m], outputChannels: 2)
        #expect(three[0] == m && three[1] == m)
    }

    @Test func gainGlidesIdenticallyOnEveryChannel() {
        let ones = [Float](repeating: 1, count: 400)
        var k = PassThroughKernel(gain: 1)
        _ = Self.run(&k, inputs: [ones, ones], outputChannels: 2)
        k.setGain(0, rampFrames: 200)
        let out = Self.run(&k, inputs: [ones, ones], outputChannels: 2)
        #expect(out[0] == out[1])
        #expect(out[0][0] == 1 && abs(out[0][100] - 0.5) < 1e-6 && out[0][200] == 0 && out[0][399] == 0)
    }
}

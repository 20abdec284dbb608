// Tests. Every spatial kernel gives bit-identical output for any block size (glides are per sample and
// the HRIR hand-over happens at the same frame), and the algorithm table keeps Apple's numbering.
import AudioDSP
import Testing

@Suite struct SpatialBlockSizeTests {
    static let x = spatialNoise(frames: 3000, seed: 41)
    static let first = SourceDirection(azimuth: -0.7, elevation: 0.2)
    static let second = SourceDirection(azimuth: 2.2, elevation: -0.1)

    /// Renders with each block size; `make` builds a fresh kernel and returns its update and process
    /// closures (the update is applied at frame 0 and again at frame 1024).
    static func outputs(
        channels: Int,
        make: () -> (
            update: (SourceDirection, Int) -> Void, process: (UnsafePointer<Float>, BusRef, Int) -> Void,
            done: () -> Void
        )
    ) -> [[[Float]]] {
        [1, 8, 64, 128].map { block in
            let k = make()
            defer { k.done() }
            k.update(first, 0)
            return renderSource(
                x, channelCount: channels, block: block,
                update: { f in
                    if f == 1024 { k.update(second, 700) }
                }, process: k.process)
        }
    }

    static func expectIdentical(_ runs: [[[Float]]], sourceLocation: SourceLocation = #_sourceLocation) {
        for run in runs.dropFirst() { #expect(run == runs[0], sourceLocation: sourceLocation) }
    }

    @Test func equalPowerSphericalHeadAndVBAP() {
        Self.expectIdentical(
            Self.outputs(channels: 2) {
                var k = EqualPowerPanningKernel()
                return (
                    { k.setDirection($0, gain: 0.9, rampFrames: $1) }, { k.process(input: $0, output: $1, frames: $2) },
                    {}
                )
            })
        Self.expectIdentical(
            Self.outputs(channels: 2) {
                var k = SphericalHeadKernel(sampleRate: spatialTestRate)
                return (
                    { k.setDirection($0, gain: 0.9, rampFrames: $1) }, { k.process(input: $0, output: $1, frames: $2) },
                    { k.deallocate() }
                )
            })
        Self.expectIdentical(
            Self.outputs(channels: 6) {
                var k = VBAPKernel(layout: .surround51)
                return (
                    { k.setDirection($0, gain: 0.9, rampFrames: $1) }, { k.process(input: $0, output: $1, frames: $2) },
                    { k.deallocate() }
                )
            })
    }

    @Test func soundFieldHRTFSendsAndDoppler() {
        Self.expectIdentical(
            Self.outputs(channels: 4) {
                var k = AmbisonicEncoder()
                return (
                    { k.setDirection($0, gain: 0.9, rampFrames: $1) },
                    { k.process(input: $0, bformat: $1, frames: $2) }, {}
                )
            })
        Self.expectIdentical(
            Self.outputs(channels: 2) {
                var k = HRTFConvolver(
                    sampleRate: spatialTestRate, maxBlockFrames: 64, filterLength: SyntheticHRIR.length,
                    maximumDelayFrames: 64, crossfadeFrames: 128)
                let exchange = k.exchange
                return (
                    { d, _ in
                        SyntheticHRIR.fill(exchange.writableSlot, direction: d, sampleRate: spatialTestRate)
                        exchange.publish()
                    }, { k.process(input: $0, output: $1, frames: $2) }, { k.deallocate() }
                )
            })
        Self.expectIdentical(
            Self.outputs(channels: 2) {
                var k = SourceEnvironmentFilter(sampleRate: spatialTestRate)
                return (
                    { d, frames in
                        k.setParameters(
                            reverbBlend: 0.5 + 0.4 * d.local.x, obstructionDecibels: -20 * d.local.y - 5,
                            occlusionDecibels: -3, rampFrames: frames)
                    }, { k.process(input: $0, direct: $1.channel(0), reverbSend: $1.channel(1), frames: $2) }, {}
                )
            })
        Self.expectIdentical(
            Self.outputs(channels: 1) {
                var k = DopplerResampler(sampleRate: spatialTestRate, headroomSeconds: 0.01)
                return (
                    { d, frames in k.setPitchRatio(1 + 0.1 * d.local.x, rampFrames: frames) },
                    { k.process(input: $0, output: $1.channel(0), frames: $2) }, { k.deallocate() }
                )
            })
    }

    @Test func algorithmsKeepApplesNumbering() {
        #expect(SpatialRenderingAlgorithm.allCases.map(\.rawValue) == Array(0...7))
        #expect(SpatialRenderingAlgorithm(name: "HRTFHQ") == .hrtfHQ && SpatialRenderingAlgorithm(name: "x") == nil)
        #expect(SpatialRenderingAlgorithm.auto.resolved(outputChannelCount: 2, isHeadphones: true) == .hrtfHQ)
        #expect(
            SpatialRenderingAlgorithm.auto.resolved(outputChannelCount: 6, isHeadphones: false) == .vectorBasedPanning)
        #expect(
            SpatialRenderingAlgorithm.auto.resolved(outputChannelCount: 2, isHeadphones: false) == .equalPowerPanning)
        #expect(
            SpatialRenderingAlgorithm.sphericalHead.resolved(outputChannelCount: 8, isHeadphones: false)
                == .sphericalHead)
        #expect(SpatialSourceMode.bypass.rawValue == 1 && SpatialSourceMode.ambienceBed.rawValue == 3)
    }
}

// Tests. A source orbiting the listener once per second, with 60 position updates per second, renders
// without clicks in every algorithm; the same motion with the glides switched off is caught by the same
// detector (so the tests can fail).
import AudioDSP
import DSPTestSupport
import Foundation
import Testing

@Suite struct SpatialMotionClickTests {
    static let tone = 200.0
    static let update = 800  // 60 updates per second at 48 kHz
    static let input = TestSignal.sine(frequency: tone, sampleRate: spatialTestRate, frames: 72_000, amplitude: 0.5)

    /// Renders the orbit: before every 800-frame segment, `aim` receives the direction due at the
    /// segment's end and the glide length (800, or 0 for the no-glide control run).
    static func orbit(
        channelCount: Int, glides: Bool, aim: (SourceDirection, Int) -> Void,
        process: (UnsafePointer<Float>, BusRef, Int) -> Void
    ) -> [[Float]] {
        aim(orbitDirection(frame: 0), 0)
        return renderSource(
            input, channelCount: channelCount, block: 80,
            update: { frame in
                if frame % update == 0 { aim(orbitDirection(frame: frame + update), glides ? update : 0) }
            }, process: process)
    }

    /// The worst click ratio over the channels that carry signal, after the onset.
    static func worstRatio(_ out: [[Float]]) -> Double {
        out.map { channel -> Double in
            let body = channel[2000...]
            guard SignalStats.peak(body) > 1e-3 else { return 0 }
            return ClickDetector.secondDifferenceRatio(body, frequency: tone, sampleRate: spatialTestRate)
        }.max() ?? 0
    }

    static let cleanLimit = 1.5
    static let clickLimit = 10.0

    @Test(arguments: [true, false])
    func equalPowerPanning(glides: Bool) {
        var k = EqualPowerPanningKernel()
        let out = Self.orbit(channelCount: 2, glides: glides, aim: { k.setDirection($0, gain: 1, rampFrames: $1) }) {
            k.process(input: $0, output: $1, frames: $2)
        }
        Self.check(out, glides: glides)
    }

    @Test(arguments: [true, false])
    func sphericalHead(glides: Bool) {
        var k = SphericalHeadKernel(sampleRate: spatialTestRate)
        defer { k.deallocate() }
        let out = Self.orbit(channelCount: 2, glides: glides, aim: { k.setDirection($0, gain: 1, rampFrames: $1) }) {
            k.process(input: $0, output: $1, frames: $2)
        }
        Self.check(out, glides: glides)
    }

    @Test(arguments: [true, false])
    func vectorBasePanningOn71(glides: Bool) {
        var k = VBAPKernel(layout: .surround71)
        defer { k.deallocate() }
        let out = Self.orbit(channelCount: 8, glides: glides, aim: { k.setDirection($0, gain: 1, rampFrames: $1) }) {
            k.process(input: $0, output: $1, frames: $2)
        }
        Self.check(out, glides: glides)
    }

    @Test(arguments: [true, false])
    func soundFieldDecodedToQuad(glides: Bool) {
        var encoder = AmbisonicEncoder()
        let decoder = AmbisonicDecoder(layout: .quad)
        defer { decoder.deallocate() }
        let scratch = UnsafeMutablePointer<Float>.allocate(capacity: 4 * 80)
        defer { scratch.deallocate() }
        let out = Self.orbit(
            channelCount: 4, glides: glides, aim: { encoder.setDirection($0, gain: 1, rampFrames: $1) }
        ) {
            input, bus, n in
            scratch.initialize(repeating: 0, count: 4 * 80)
            let bformat = BusRef(data: scratch, channelCount: 4, stride: 80)
            encoder.process(input: input, bformat: bformat, frames: n)
            decoder.process(bformat: bformat, output: bus, frames: n)
        }
        Self.check(out, glides: glides)
    }

    /// HRTF with the synthetic set (10° grid, so filters switch): the crossfade is the glide; a
    /// one-frame crossfade is the control run.
    @Test(arguments: [true, false])
    func hrtfConvolution(glides: Bool) {
        var k = HRTFConvolver(
            sampleRate: spatialTestRate, maxBlockFrames: 80, filterLength: SyntheticHRIR.length, maximumDelayFrames: 64,
            crossfadeFrames: glides ? HRTFQuality.standard.crossfadeFrames(sampleRate: spatialTestRate) : 1)
        defer { k.deallocate() }
        let out = Self.orbit(
            channelCount: 2, glides: glides,
            aim: { d, _ in
                SyntheticHRIR.fill(k.exchange.writableSlot, direction: d, sampleRate: spatialTestRate)
                k.exchange.publish()
            }
        ) { k.process(input: $0, output: $1, frames: $2) }
        Self.check(out, glides: glides)
    }

    @Test(arguments: [true, false])
    func occlusionAndObstructionSweeps(glides: Bool) {
        var f = SourceEnvironmentFilter(sampleRate: spatialTestRate)
        var step = 0
        let out = renderSource(
            Self.input, channelCount: 2, block: 80,
            update: { frame in
                if frame % Self.update == 0 {
                    step += 1
                    let level = -30 * (0.5 + 0.5 * sin(Double(step) * 0.2))
                    f.setParameters(
                        reverbBlend: 0.3 + 0.3 * cos(Double(step) * 0.15), obstructionDecibels: level,
                        occlusionDecibels: level / 2, rampFrames: glides ? Self.update : 0)
                }
            }
        ) { input, bus, n in
            f.process(input: input, direct: bus.channel(0), reverbSend: bus.channel(1), frames: n)
        }
        Self.check(out, glides: glides)
    }

    static func check(_ out: [[Float]], glides: Bool, sourceLocation: SourceLocation = #_sourceLocation) {
        let ratio = worstRatio(out)
        if glides {
            #expect(ratio < cleanLimit, "click ratio \(ratio)", sourceLocation: sourceLocation)
        } else {
            #expect(
                ratio > clickLimit, "the detector should see the jumps (ratio \(ratio))", sourceLocation: sourceLocation
            )
        }
    }
}

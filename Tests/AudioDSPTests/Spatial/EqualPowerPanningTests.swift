// Tests. Equal-power panning from 3-D directions: the energy law, the centre and the extremes, and
// exact left/right mirror symmetry.
import AudioDSP
import DSPTestSupport
import Testing

@Suite struct EqualPowerPanningTests {
    @Test func powerIsOneForEveryDirection() {
        for d in sampledDirections {
            let (l, r) = EqualPowerPanningKernel.gains(for: d)
            #expect(abs(Double(l * l + r * r) - 1) < 1e-6, "azimuth \(d.azimuth), elevation \(d.elevation)")
        }
    }

    @Test func centreIsMinus3dBAndTheSidesAreHard() {
        let ahead = EqualPowerPanningKernel.gains(for: SourceDirection())
        #expect(ahead.left == ahead.right && abs(ahead.left - 0.707_106_77) < 1e-6)
        let right = EqualPowerPanningKernel.gains(for: SourceDirection(azimuth: Double.pi / 2, elevation: 0))
        #expect(abs(right.left) < 1e-7 && right.right == 1)
        let behind = EqualPowerPanningKernel.gains(for: SourceDirection(azimuth: Double.pi, elevation: 0))
        #expect(behind.left == behind.right)
        // Front and back mirror onto each other: 30° and 150° pan alike.
        let front = EqualPowerPanningKernel.gains(for: SourceDirection(azimuth: Double.pi / 6, elevation: 0))
        let back = EqualPowerPanningKernel.gains(for: SourceDirection(azimuth: 5 * Double.pi / 6, elevation: 0))
        #expect(abs(front.left - back.left) < 1e-7 && abs(front.right - back.right) < 1e-7)
    }

    @Test func renderedEnergyFollowsTheLaw() {
        let x = spatialNoise(frames: 4096, seed: 3)
        for d in sampledDirections.prefix(24) {
            var k = EqualPowerPanningKernel()
            k.setDirection(d, gain: 0.5, rampFrames: 0)
            let out = renderSource(x, channelCount: 2) { i, bus, n in k.process(input: i, output: bus, frames: n) }
            let ratio = (energy(out[0][...]) + energy(out[1][...])) / (0.25 * energy(x[...]))
            #expect(abs(ratio - 1) < 1e-5)
        }
    }

    @Test func mirroringSwapsTheChannelsExactly() {
        let x = spatialNoise(frames: 2048, seed: 4)
        for d in sampledDirections + [SourceDirection()] {
            var a = EqualPowerPanningKernel()
            var b = EqualPowerPanningKernel()
            a.setDirection(d, gain: 0.8, rampFrames: 0)
            b.setDirection(d.mirrored, gain: 0.8, rampFrames: 0)
            let outA = renderSource(
                x, channelCount: 2,
                update: { f in
                    if f == 1024 { a.setDirection(d, gain: 0.3, rampFrames: 500) }
                }
            ) { i, bus, n in a.process(input: i, output: bus, frames: n) }
            let outB = renderSource(
                x, channelCount: 2,
                update: { f in
                    if f == 1024 { b.setDirection(d.mirrored, gain: 0.3, rampFrames: 500) }
                }
            ) { i, bus, n in b.process(input: i, output: bus, frames: n) }
            #expect(outA[0] == outB[1] && outA[1] == outB[0], "azimuth \(d.azimuth)")
        }
    }
}

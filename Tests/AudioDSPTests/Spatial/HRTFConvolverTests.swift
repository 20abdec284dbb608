// Tests. The HRIR convolver against a Double-precision reference, its crossfade, the slot exchange and
// mirror symmetry, with synthetic filters (the KEMAR tests are in SpatialAssetsTests).
import AudioDSP
import DSPTestSupport
import Foundation
import Testing

@Suite struct HRTFConvolverTests {
    static func randomFilter(_ n: Int, seed: UInt64) -> [Float] {
        var rng = SeededRandom(seed: seed)
        return (0..<n).map { k in rng.nextFloat() * Float(pow(0.9, Double(k))) }
    }

    static func publish(_ k: HRTFConvolver, _ l: [Float], _ r: [Float], _ dl: Double, _ dr: Double) {
        l.withUnsafeBufferPointer { lp in
            r.withUnsafeBufferPointer { rp in
                k.exchange.writableSlot.setFilters(
                    left: lp.baseAddress!, right: rp.baseAddress!, count: l.count, leftDelay: dl, rightDelay: dr)
            }
        }
        k.exchange.publish()
    }

    /// y[n] = Σ h[k]·x[n − k], delayed by `delay` whole frames, in Double.
    static func reference(_ x: [Float], _ h: [Float], delay: Int) -> [Double] {
        (0..<x.count).map { n in
            let m = n - delay
            guard m >= 0 else { return 0 }
            var s = 0.0
            for k in 0..<h.count where m - k >= 0 { s += Double(h[k]) * Double(x[m - k]) }
            return s
        }
    }

    static func makeKernel(crossfade: Int = 64) -> HRTFConvolver {
        HRTFConvolver(sampleRate: spatialTestRate, maxBlockFrames: 128, filterLength: 37, maximumDelayFrames: 64,
                      crossfadeFrames: crossfade)
    }

    @Test func outputIsTheConvolutionDelayedPerEar() {
        var k = Self.makeKernel()
        defer { k.deallocate() }
        #expect(k.filterLength == 40)
        let hl = Self.randomFilter(37, seed: 1)
        let hr = Self.randomFilter(37, seed: 2)
        Self.publish(k, hl, hr, 5, 12)
        k.setGain(0.5, rampFrames: 0)
        let x = spatialNoise(frames: 2000, seed: 3)
        let out = renderSource(x, channelCount: 2, block: 100) { i, bus, n in k.process(input: i, output: bus, frames: n) }
        // The slots' delays apply as they are (whole frames, no minimum).
        let refL = Self.reference(x, hl, delay: 5)
        let refR = Self.reference(x, hr, delay: 12)
        for n in 0..<x.count {
            #expect(abs(Double(out[0][n]) - 0.5 * refL[n]) < 2e-6)
            #expect(abs(Double(out[1][n]) - 0.5 * refR[n]) < 2e-6)
        }
    }

    @Test func aNewPairIsCrossfadedWithARaisedCosineAndThenExact() {
        let fade = 64
        var k = Self.makeKernel(crossfade: fade)
        defer { k.deallocate() }
        let a = Self.randomFilter(37, seed: 4)
        let b = Self.randomFilter(30, seed: 5)
        Self.publish(k, a, a, 3, 3)
        let x = spatialNoise(frames: 1200, seed: 6)
        let switchAt = 500
        let out = renderSource(x, channelCount: 2, block: 100, update: { frame in
            if frame == switchAt { Self.publish(k, b, b, 3, 3) }
        }) { i, bus, n in k.process(input: i, output: bus, frames: n) }
        let ya = Self.reference(x, a, delay: 3)
        let yb = Self.reference(x, b, delay: 3)
        // The crossfade starts on the first frame rendered after the hand-over.
        for n in 0..<x.count {
            let m = n
            let w: Double = m < switchAt ? 0 : m - switchAt + 1 >= fade ? 1 : 0.5 - 0.5 * cos(Double.pi * Double(m - switchAt + 1) / Double(fade))
            let expected = ya[n] + (yb[n] - ya[n]) * w
            #expect(abs(Double(out[0][n]) - expected) < 2e-6, "frame \(n)")
        }
        #expect(!k.isCrossfading)
    }

    @Test func theLatestPublishedPairWins() {
        var k = Self.makeKernel()
        defer { k.deallocate() }
        let a = Self.randomFilter(37, seed: 7)
        let b = Self.randomFilter(37, seed: 8)
        Self.publish(k, a, a, 0, 0)
        Self.publish(k, b, b, 2, 2)
        let x = spatialNoise(frames: 300, seed: 9)
        let out = renderSource(x, channelCount: 2) { i, bus, n in k.process(input: i, output: bus, frames: n) }
        let ref = Self.reference(x, b, delay: 2)
        for n in 0..<x.count { #expect(abs(Double(out[1][n]) - ref[n]) < 2e-6) }
    }

    @Test func mirroringSwapsTheEarsExactly() {
        let x = spatialNoise(frames: 3000, seed: 10)
        for d in sampledDirections.filter({ $0.elevation == 0 }) {
            var a = Self.makeKernel()
            var b = Self.makeKernel()
            defer {
                a.deallocate()
                b.deallocate()
            }
            SyntheticHRIR.fill(a.exchange.writableSlot, direction: d, sampleRate: spatialTestRate)
            a.exchange.publish()
            SyntheticHRIR.fill(b.exchange.writableSlot, direction: d.mirrored, sampleRate: spatialTestRate)
            b.exchange.publish()
            let turn = SourceDirection(azimuth: d.azimuth + 0.4, elevation: 0)
            let outA = renderSource(x, channelCount: 2, update: { f in
                if f == 1024 {
                    SyntheticHRIR.fill(a.exchange.writableSlot, direction: turn, sampleRate: spatialTestRate)
                    a.exchange.publish()
                }
            }) { i, bus, n in a.process(input: i, output: bus, frames: n) }
            let outB = renderSource(x, channelCount: 2, update: { f in
                if f == 1024 {
                    SyntheticHRIR.fill(b.exchange.writableSlot, direction: turn.mirrored, sampleRate: spatialTestRate)
                    b.exchange.publish()
                }
            }) { i, bus, n in b.process(input: i, output: bus, frames: n) }
            #expect(outA[0] == outB[1] && outA[1] == outB[0], "azimuth \(d.azimuth)")
        }
    }
}

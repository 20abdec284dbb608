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
        HRTFConvolver(
            sampleRate: spatialTestRate, maxBlockFrames: 128, filterLength: 37, maximumDelayFrames: 64,
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
        let out = renderSource(x, channelCount: 2, block: 100) { i, bus, n in
            k.process(input: i, output: bus, frames: n)
        }
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
        let out = renderSource(
            x, channelCount: 2, block: 100,
            update: { frame in
                if frame == switchAt { Self.publish(k, b, b, 3, 3) }
            }
        ) { i, bus, n in k.process(input: i, output: bus, frames: n) }
        let ya = Self.reference(x, a, delay: 3)
        let yb = Self.reference(x, b, delay: 3)
        // The crossfade starts on the first frame rendered after the hand-over.
        for n in 0..<x.count {
            let m = n
            let w: Double =
                m < switchAt
                ? 0
                : m - switchAt + 1 >= fade ? 1 : 0.5 - 0.5 * cos(Double.pi * Double(m - switchAt + 1) / Double(fade))
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
            let outA = renderSource(
                x, channelCount: 2,
                update: { f in
                    if f == 1024 {
                        SyntheticHRIR.fill(a.exchange.writableSlot, direction: turn, sampleRate: spatialTestRate)
                        a.exchange.publish()
                    }
                }
            ) { i, bus, n in a.process(input: i, output: bus, frames: n) }
            let outB = renderSource(
                x, channelCount: 2,
                update: { f in
                    if f == 1024 {
                        SyntheticHRIR.fill(
                            b.exchange.writableSlot, direction: turn.mirrored, sampleRate: spatialTestRate)
                        b.exchange.publish()
                    }
                }
            ) { i, bus, n in b.process(input: i, output: bus, frames: n) }
            #expect(outA[0] == outB[1] && outA[1] == outB[0], "azimuth \(d.azimuth)")
        }
    }

    /// The AVX2/FMA build runs exactly when the CPU reports both AVX2 and FMA (Linux's cpuinfo flags).
    @Test func theAVX2BuildIsChosenWhenTheCPUHasIt() throws {
        #if arch(x86_64) && os(Linux)
            let info = try String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)
            let flags = Set(
                info.split(separator: "\n").first { $0.hasPrefix("flags") }?.split(separator: " ").map(String.init)
                    ?? [])
            #expect(HRTFConvolver.usesAVX2 == (flags.contains("avx2") && flags.contains("fma")))
        #else
            #expect(!HRTFConvolver.usesAVX2)
        #endif
    }

    /// The AVX2/FMA build (when this CPU has it) and the portable build compute the same convolution:
    /// each within the worst-case Float rounding of the Double-precision sum, for every filter length the
    /// sets use and frame counts that are not multiples of a pass.
    @Test(arguments: [8, 40, 64, 128, 136])
    func bothBuildsOfTheConvolutionAgreeWithTheReference(taps: Int) {
        let frames = 100
        let slack = 16
        let storage = UnsafeMutablePointer<Float>.allocate(capacity: 2 * taps)
        let delays = UnsafeMutablePointer<Double>.allocate(capacity: 2)
        defer {
            storage.deallocate()
            delays.deallocate()
        }
        let exchange = HRIRExchange(filterLength: taps)
        defer { exchange.deallocate() }
        let slot = exchange.writableSlot
        // Flat random filters: every tap matters far above the rounding bound, so a skipped or shifted
        // tap anywhere fails.
        var rng = SeededRandom(seed: 20)
        let hl = (0..<taps).map { _ in rng.nextFloat() }
        let hr = (0..<taps).map { _ in rng.nextFloat() }
        hl.withUnsafeBufferPointer { l in
            hr.withUnsafeBufferPointer { r in
                slot.setFilters(left: l.baseAddress!, right: r.baseAddress!, count: taps, leftDelay: 0, rightDelay: 0)
            }
        }
        let xl = spatialNoise(frames: frames + taps + slack, seed: 22)
        let xr = spatialNoise(frames: frames + taps + slack, seed: 23)
        var outputs: [[[Float]]] = []
        for portable in [false, true] {
            var yl = [Float](repeating: 0, count: frames + slack)
            var yr = [Float](repeating: 0, count: frames + slack)
            xl.withUnsafeBufferPointer { l in
                xr.withUnsafeBufferPointer { r in
                    yl.withUnsafeMutableBufferPointer { ol in
                        yr.withUnsafeMutableBufferPointer { or in
                            if portable {
                                HRTFConvolver.convolvePortable(
                                    left: l.baseAddress!, right: r.baseAddress!, filters: slot,
                                    into: ol.baseAddress!, or.baseAddress!, frames: frames)
                            } else {
                                HRTFConvolver.convolve(
                                    left: l.baseAddress!, right: r.baseAddress!, filters: slot,
                                    into: ol.baseAddress!, or.baseAddress!, frames: frames)
                            }
                        }
                    }
                }
            }
            outputs.append([yl, yr])
        }
        for (ear, (x, h)) in [(xl, hl), (xr, hr)].enumerated() {
            for i in 0..<frames {
                // Output frame i: tap j of the reversed filter (h[taps − 1 − j]) times x[i + j].
                var sum = 0.0
                var magnitude = 0.0
                for j in 0..<taps {
                    let term = Double(h[taps - 1 - j]) * Double(x[i + j])
                    sum += term
                    magnitude += abs(term)
                }
                // The worst-case rounding of a Float sum of `taps` products (fused or not): taps · ε · Σ|terms|.
                let bound = Double(taps + 1) * Double(Float.ulpOfOne) * max(magnitude, 1e-3)
                #expect(abs(Double(outputs[0][ear][i]) - sum) < bound, "dispatched build, ear \(ear), frame \(i)")
                #expect(abs(Double(outputs[1][ear][i]) - sum) < bound, "portable build, ear \(ear), frame \(i)")
            }
        }
    }

    /// Output does not depend on how the host cuts the stream into blocks (sample for sample, through a
    /// change of filters and its crossfade), whichever build of the convolution runs. The hand-over is at
    /// frame 3200, where every one of these block sizes starts a block.
    @Test func outputIsTheSameForEveryBlockSize() {
        let x = spatialNoise(frames: 5000, seed: 24)
        let a = Self.randomFilter(37, seed: 25)
        let b = Self.randomFilter(33, seed: 26)
        var outputs: [[[Float]]] = []
        for block in [1, 8, 16, 100, 128] {
            var k = Self.makeKernel(crossfade: 200)
            defer { k.deallocate() }
            Self.publish(k, a, b, 4, 9)
            outputs.append(
                renderSource(
                    x, channelCount: 2, block: block,
                    update: { frame in
                        if frame == 3200 { Self.publish(k, b, a, 11, 2) }
                    }
                ) { i, bus, n in k.process(input: i, output: bus, frames: n) })
        }
        let ref = Self.reference(x, b, delay: 11)
        #expect(abs(Double(outputs[0][0][4000]) - ref[4000]) < 2e-6, "the second pair is in use after the crossfade")
        for (index, output) in outputs.enumerated().dropFirst() {
            #expect(output == outputs[0], "block size #\(index) differs from one-frame blocks")
        }
    }
}

/// Fractional delays: the fraction is folded into the taps with a windowed sinc, the whole frames stay a
/// read offset.
@Suite struct HRIRFractionalDelayTests {
    /// A one-tap filter at delay d renders the kernel: unit gain at DC, its centre of mass (the group
    /// delay at DC) at d, and a flat magnitude up to 16 kHz.
    @Test(arguments: [10.25, 10.5, 17.9, 3.01])
    func aFractionalDelayIsBandLimited(delay: Double) {
        var k = HRTFConvolver(
            sampleRate: 48_000, maxBlockFrames: 128, filterLength: 16, maximumDelayFrames: 64,
            crossfadeFrames: 16)
        defer { k.deallocate() }
        HRTFConvolverTests.publish(k, [1], [1], delay, Double(Int(delay)))
        var click = [Float](repeating: 0, count: 128)
        click[0] = 1
        let out = renderSource(click, channelCount: 2, block: 128) { i, bus, n in
            k.process(input: i, output: bus, frames: n)
        }
        let y = out[0].map(Double.init)
        let sum = y.reduce(0, +)
        let centre = y.enumerated().reduce(0.0) { $0 + Double($1.offset) * $1.element } / sum
        #expect(abs(sum - 1) < 1e-6, "DC gain \(sum)")
        #expect(abs(centre - delay) < 0.02, "centre \(centre) for \(delay)")
        for f in [1000.0, 8000, 16_000] {
            let w = 2 * Double.pi * f / 48_000
            var (re, im) = (0.0, 0.0)
            for (n, v) in y.enumerated() {
                re += v * cos(w * Double(n))
                im -= v * sin(w * Double(n))
            }
            let db = 10 * log10(re * re + im * im)
            #expect(abs(db) < 0.1, "\(db) dB at \(f) Hz for \(delay)")
        }
        // The right ear's whole-frame delay is exact.
        #expect(out[1][Int(delay)] == 1 && out[1].reduce(0, +) == 1)
    }
}

/// The direction cells HRTF interpolates on.
@Suite struct HRTFDirectionCellTests {
    @Test func cellsAreFinerThanAFiveDegreeGridMirroredAndCentred() throws {
        let q = HRTFQuality.standard
        #expect(HRTFQuality.high.cellKey(for: SourceDirection(azimuth: 0.3, elevation: 0)) == -1)
        func key(_ degrees: Double, _ elevation: Double = 0) -> Int {
            q.cellKey(for: SourceDirection(azimuth: degrees * Double.pi / 180, elevation: elevation * Double.pi / 180))
        }
        // 35° and 37° are different cells (they were one measurement's neighbourhood).
        #expect(key(35) != key(37))
        for degrees in stride(from: -180.0, through: 180, by: 7.3) {
            for elevation in [-40.0, 0, 25, 80] {
                let d = SourceDirection(azimuth: degrees * Double.pi / 180, elevation: elevation * Double.pi / 180)
                let k = q.cellKey(for: d)
                let centre = try #require(q.cellCentre(k))
                // The centre is within about one cell (1/20 rad per coordinate) of the direction…
                let distance = (centre.local - d.local).length
                #expect(distance < 0.05, "\(degrees)°/\(elevation)°: \(distance)")
                // …and the mirrored direction's cell has the mirrored centre.
                let m = try #require(q.cellCentre(q.cellKey(for: d.mirrored)))
                #expect(m.local.x == -centre.local.x && m.local.y == centre.local.y && m.local.z == centre.local.z)
            }
        }
    }
}

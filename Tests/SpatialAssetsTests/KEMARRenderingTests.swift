// Tests. HRTF and HRTF HQ rendering with Debian's MIT KEMAR set: the ITD at ±90° by cross-correlation
// of the ears, exact mirror symmetry, agreement with direct convolution of the file's IRs, click-free
// motion, and an allocation- and lock-free render path.
import AudioDSP
import DSPTestSupport
import Foundation
import SpatialAssets
import Testing

@Suite(.serialized) struct KEMARRenderingTests {
    static let rate = 48_000.0
    /// Loaded per test (swift-testing makes a suite instance per test; the class is not Sendable).
    let set: SOFADataset

    init() throws {
        set = try SOFADataset(path: kemarPath, sampleRate: Self.rate)
    }

    @Test(arguments: [(90.0, HRTFQuality.standard), (-90, .standard), (90, .high), (-90, .high)])
    func interauralTimeDifferenceAtTheSideIsKEMARs(azimuthDegrees: Double, quality: HRTFQuality) {
        var k = set.makeConvolver(maxBlockFrames: 128, quality: quality)
        defer { k.deallocate() }
        publish(
            set, k.exchange, SourceDirection(azimuth: azimuthDegrees * Double.pi / 180, elevation: 0),
            interpolated: quality.interpolates)
        let out = renderHRTF(&k, noise(frames: 24_000, seed: 31), block: 128)
        let itd = crossCorrelationLag(out[0], out[1], maximumLag: 96) / Self.rate * 1000
        // A source on the right reaches the right ear first: the right ear leads (negative lag).
        #expect((itd < 0) == (azimuthDegrees > 0), "sign of \(itd) ms")
        #expect(abs(itd) > 0.6 && abs(itd) < 0.8, "ITD \(itd) ms")
    }

    static let directions: [SourceDirection] = [
        SourceDirection(azimuth: 0.3, elevation: 0), SourceDirection(azimuth: 1.9, elevation: 0.4),
        SourceDirection(azimuth: -2.8, elevation: -0.5), SourceDirection(azimuth: 0.05, elevation: 1.2),
        SourceDirection(azimuth: 1.2, elevation: 0.123)
    ]

    @Test(arguments: [HRTFQuality.standard, .high])
    func mirroringSwapsTheEarsExactly(quality: HRTFQuality) {
        let x = noise(frames: 4000, seed: 32)
        for d in Self.directions {
            let turn = SourceDirection(azimuth: d.azimuth + 0.2, elevation: d.elevation - 0.1)
            var a = set.makeConvolver(maxBlockFrames: 100, quality: quality)
            var b = set.makeConvolver(maxBlockFrames: 100, quality: quality)
            defer {
                a.deallocate()
                b.deallocate()
            }
            publish(set, a.exchange, d, interpolated: quality.interpolates)
            publish(set, b.exchange, d.mirrored, interpolated: quality.interpolates)
            let (ea, eb) = (a.exchange, b.exchange)
            let outA = renderHRTF(&a, x, block: 100) { f in
                if f == 2000 { publish(set, ea, turn, interpolated: quality.interpolates) }
            }
            let outB = renderHRTF(&b, x, block: 100) { f in
                if f == 2000 { publish(set, eb, turn.mirrored, interpolated: quality.interpolates) }
            }
            #expect(outA[0] == outB[1] && outA[1] == outB[0], "azimuth \(d.azimuth), elevation \(d.elevation)")
        }
        // On the median plane both ears are equal.
        var k = set.makeConvolver(maxBlockFrames: 100, quality: quality)
        defer { k.deallocate() }
        publish(
            set, k.exchange, SourceDirection(azimuth: Double.pi, elevation: 0.3), interpolated: quality.interpolates)
        let out = renderHRTF(&k, x, block: 100)
        #expect(out[0] == out[1])
    }

    /// At the file's own rate, the nearest-measurement HRTF output of the full-length set (default
    /// options) equals the direct convolution of the raw IR within the trimmed energy (−45 dB).
    @Test func outputMatchesDirectConvolutionWithTheFilesImpulseResponse() throws {
        let native = try SOFADataset(path: kemarPath, sampleRate: 44_100)
        let raw = try #require(rawMeasurement(path: kemarPath, sofaAzimuth: 330, elevation: 0))
        var k = native.makeConvolver(maxBlockFrames: 128, quality: .standard)
        defer { k.deallocate() }
        publish(native, k.exchange, SourceDirection(azimuth: Double.pi / 6, elevation: 0), interpolated: false)
        let x = noise(frames: 6000, seed: 33)
        let out = renderHRTF(&k, x, block: 128)
        for (ear, h) in [(0, raw.left), (1, raw.right)] {
            var error = 0.0
            var total = 0.0
            for n in 1000..<x.count {
                var y = 0.0
                for j in 0..<h.count where n - j >= 0 { y += Double(h[j]) * Double(x[n - j]) }
                error += (Double(out[ear][n]) - y) * (Double(out[ear][n]) - y)
                total += y * y
            }
            #expect(10 * log10(error / total) < -45, "ear \(ear): residual \(10 * log10(error / total)) dB")
        }
    }

    /// A source orbiting at 1 rev/s with 60 HRIR updates per second: no clicks with the crossfade; with a
    /// one-frame crossfade the detector fires.
    @Test(arguments: [(HRTFQuality.standard, true), (.high, true), (.standard, false)])
    func orbitingSourceRendersWithoutClicks(quality: HRTFQuality, crossfades: Bool) {
        let tone = 200.0
        let x = TestSignal.sine(frequency: tone, sampleRate: Self.rate, frames: 60_000, amplitude: 0.5)
        var k =
            crossfades
            ? set.makeConvolver(maxBlockFrames: 80, quality: quality)
            : HRTFConvolver(
                sampleRate: Self.rate, maxBlockFrames: 80, filterLength: set.filterLength,
                maximumDelayFrames: set.maximumDelayFrames + 4, crossfadeFrames: 1)
        defer { k.deallocate() }
        func direction(_ frame: Int) -> SourceDirection {
            SourceDirection(azimuth: 2 * Double.pi * Double(frame) / Self.rate, elevation: 0)
        }
        let exchange = k.exchange
        let out = renderHRTF(&k, x, block: 80) { frame in
            if frame % 800 == 0 { publish(set, exchange, direction(frame + 800), interpolated: quality.interpolates) }
        }
        let worst = out.map { ClickDetector.secondDifferenceRatio($0[3000...], frequency: tone, sampleRate: Self.rate) }
            .max()!
        if crossfades {
            #expect(worst < 1.5, "click ratio \(worst)")
        } else {
            #expect(worst > 10, "the detector should see the switches (ratio \(worst))")
        }
    }

    /// After warm-up, `process` (with HRIR hand-overs between calls) makes no allocation and takes no
    /// lock on the render thread; only the render calls are counted.
    @Test func renderCallsNeitherAllocateNorLock() throws {
        try #require(AllocationProbe.isActive, "the allocation counter is not linked in")
        var k = set.makeConvolver(maxBlockFrames: 128, quality: .high)
        defer { k.deallocate() }
        let x = UnsafeMutablePointer<Float>.allocate(capacity: 128)
        let out = UnsafeMutablePointer<Float>.allocate(capacity: 256)
        defer {
            x.deallocate()
            out.deallocate()
        }
        x.initialize(repeating: 0.1, count: 128)
        out.initialize(repeating: 0, count: 256)
        let bus = BusRef(data: out, channelCount: 2, stride: 128)
        let probe = AllocationProbe()
        for block in 0..<400 {
            if block % 6 == 0 {
                publish(
                    set, k.exchange, SourceDirection(azimuth: Double(block) * 0.05, elevation: 0.2), interpolated: true)
            }
            probe.trackCurrentThread(block >= 10)
            k.process(input: x, output: bus, frames: 128)
            probe.trackCurrentThread(false)
        }
        #expect(probe.allocations == 0, "allocations on the render path")
        #expect(probe.locks == 0, "locks on the render path")
    }
}

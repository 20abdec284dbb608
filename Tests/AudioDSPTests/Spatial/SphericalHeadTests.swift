// Tests. The spherical-head model: Woodworth's ITD measured by cross-correlation, the Brown–Duda
// head-shadow filter's response against its closed form, and exact mirror symmetry.
import AudioDSP
import DSPTestSupport
import Foundation
import Testing

@Suite struct SphericalHeadTests {
    let model = SphericalHeadModel()

    /// ITD at ±90° from the cross-correlation of the two ears' outputs for white noise. The delays alone
    /// give Woodworth's (a/c)(π/2 + 1) = 0.656 ms; the head-shadow filters add low-frequency group
    /// delay to the far ear (Brown & Duda: the low-frequency ITD of a sphere is larger), so the broadband
    /// figure lies a little above, inside the measured human/KEMAR range of about 0.6–0.8 ms. With the
    /// input's high frequencies emphasised (second difference, +12 dB/octave) the filters' group delays
    /// vanish and the measurement is Woodworth's to 0.02 ms.
    @Test(arguments: [90.0, -90.0])
    func interauralTimeDifferenceAtTheSide(azimuthDegrees: Double) {
        let woodworth = model.interauralTimeDifference(lateral: Double.pi / 2) * 1000
        #expect(abs(woodworth - 0.656) < 0.001)
        let white = spatialNoise(frames: 24_000, seed: 8)
        var bright = [Float](repeating: 0, count: white.count)
        for i in 2..<white.count {
            let d2: Float = white[i] - 2 * white[i - 1] + white[i - 2]
            bright[i] = 0.25 * d2
        }
        for (input, isBright) in [(white, false), (bright, true)] {
            var k = SphericalHeadKernel(sampleRate: spatialTestRate)
            defer { k.deallocate() }
            k.setDirection(
                SourceDirection(azimuth: azimuthDegrees * Double.pi / 180, elevation: 0), gain: 1, rampFrames: 0)
            let out = renderSource(input, channelCount: 2) { i, bus, n in k.process(input: i, output: bus, frames: n) }
            // Positive lag: the right ear trails the left one; a source on the right gives a negative lag.
            let itd = crossCorrelationLag(out[0], out[1], maximumLag: 72) / spatialTestRate * 1000
            #expect((itd < 0) == (azimuthDegrees > 0), "sign of \(itd) ms")
            #expect(abs(itd) > 0.6 && abs(itd) < 0.8, "ITD \(itd) ms")
            if isBright { #expect(abs(abs(itd) - woodworth) < 0.02, "high-frequency ITD \(itd) ms") }
        }
    }

    /// Woodworth's formula at other angles comes out of the per-ear delays: ITD(φ) = (a/c)(φ + sin φ).
    @Test(arguments: [15.0, 40.0, 65.0])
    func perEarDelaysGiveWoodworthAtEveryAngle(azimuthDegrees: Double) {
        let phi = azimuthDegrees * Double.pi / 180
        let x = sin(phi)
        let itd = model.earDelay(cosIncidence: -x) - model.earDelay(cosIncidence: x)
        #expect(abs(itd - model.interauralTimeDifference(lateral: phi)) < 1e-15)
    }

    /// |H| of the 4-point Hermite read at delay `d` frames: the interpolator is a 4-tap FIR whose taps
    /// depend on the fraction (Catmull–Rom weights at t = 1 − frac(d)).
    static func hermiteMagnitude(delay d: Double, omega w: Double) -> Double {
        let whole = floor(d)
        let f = d - whole
        if f == 0 { return 1 }
        let t = 1 - f
        let weights = [
            -0.5 * t + t * t - 0.5 * t * t * t, 1 - 2.5 * t * t + 1.5 * t * t * t,
            0.5 * t + 2 * t * t - 1.5 * t * t * t, -0.5 * t * t + 0.5 * t * t * t
        ]
        let delays = [whole + 2, whole + 1, whole, whole - 1]
        var re = 0.0
        var im = 0.0
        for k in 0..<4 {
            re += weights[k] * cos(w * delays[k])
            im -= weights[k] * sin(w * delays[k])
        }
        return hypot(re, im)
    }

    /// A static source: each ear's gain at f equals |H(e^{jω})| of the discrete Brown–Duda filter with
    /// that ear's α (DC gain 1, α at Nyquist) times the fractional-delay interpolator's own response,
    /// measured with Goertzel.
    @Test(arguments: [200.0, 1000, 3000, 8000, 16000])
    func headShadowMatchesItsClosedForm(frequency: Double) {
        let d = SourceDirection(azimuth: 0.9, elevation: 0.2)
        var k = SphericalHeadKernel(sampleRate: spatialTestRate)
        defer { k.deallocate() }
        k.setDirection(d, gain: 1, rampFrames: 0)
        let x = TestSignal.sine(frequency: frequency, sampleRate: spatialTestRate, frames: 12_000)
        let out = renderSource(x, channelCount: 2) { i, bus, n in k.process(input: i, output: bus, frames: n) }
        let w = 2 * Double.pi * frequency / spatialTestRate
        for (ear, cosine) in [(0, -d.local.x), (1, d.local.x)] {
            let alpha = model.shadow(cosIncidence: cosine)
            let (b0, b1, a1) = model.shadowCoefficients(alpha: alpha, sampleRate: spatialTestRate)
            let num = hypot(b0 + b1 * cos(w), b1 * sin(w))
            let den = hypot(1 + a1 * cos(w), a1 * sin(w))
            let delay = 1 + model.earDelay(cosIncidence: cosine) * spatialTestRate
            let expected = num / den * Self.hermiteMagnitude(delay: delay, omega: w)
            let cycles = (frequency * 0.2).rounded()
            let window = Int((cycles / frequency * spatialTestRate).rounded())
            let measured = Goertzel.measure(
                out[ear][2000..<(2000 + window)], frequency: frequency, sampleRate: spatialTestRate)
            #expect(abs(measured.amplitude / expected - 1) < 2e-3, "ear \(ear) at \(frequency) Hz")
        }
        // The facing ear gets +6 dB at high frequencies, the most shadowed direction −20 dB.
        #expect(model.shadow(cosIncidence: 1) == 2)
        #expect(abs(model.shadow(cosIncidence: cos(5 * Double.pi / 6)) - 0.1) < 1e-12)
    }

    @Test func mirroringSwapsTheEarsExactly() {
        let x = spatialNoise(frames: 3000, seed: 9)
        for d in sampledDirections.filter({ Int(($0.azimuth * 180 / Double.pi).rounded()) % 45 == 0 }) {
            var a = SphericalHeadKernel(sampleRate: spatialTestRate)
            var b = SphericalHeadKernel(sampleRate: spatialTestRate)
            defer {
                a.deallocate()
                b.deallocate()
            }
            let turn = SourceDirection(azimuth: d.azimuth + 0.3, elevation: d.elevation)
            a.setDirection(d, gain: 0.7, rampFrames: 0)
            b.setDirection(d.mirrored, gain: 0.7, rampFrames: 0)
            let outA = renderSource(
                x, channelCount: 2,
                update: { f in
                    if f == 1024 { a.setDirection(turn, gain: 0.7, rampFrames: 800) }
                }
            ) { i, bus, n in a.process(input: i, output: bus, frames: n) }
            let outB = renderSource(
                x, channelCount: 2,
                update: { f in
                    if f == 1024 { b.setDirection(turn.mirrored, gain: 0.7, rampFrames: 800) }
                }
            ) { i, bus, n in b.process(input: i, output: bus, frames: n) }
            #expect(outA[0] == outB[1] && outA[1] == outB[0], "azimuth \(d.azimuth)")
        }
    }
}

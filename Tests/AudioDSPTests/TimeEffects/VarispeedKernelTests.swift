// Tests. The varispeed: frequency scales by the rate, consumption equals the rate, identity at rate 1,
// anti-aliasing and image rejection, passband flatness, click-free rate glides and bypass.
import AudioDSP
import DSPTestSupport
import Foundation
import Testing

@Suite struct VarispeedKernelTests {
    static func kernel(rate: Double = 1, channels: Int = 1, maxBlockFrames: Int = 128) -> VarispeedKernel {
        var k = VarispeedKernel(sampleRate: effectTestRate, maxBlockFrames: maxBlockFrames, channelCount: channels)
        k.setRate(rate)
        return k
    }

    /// A 1 kHz sine read at rate r comes out at r kHz (error < 0.1 %), and over a long run the kernel
    /// consumes r input frames per output frame (< 0.1 %).
    @Test(arguments: [0.25, 0.5, 1, 1.5, 2, 4])
    func rateScalesFrequencyAndConsumption(rate: Double) {
        var k = Self.kernel(rate: rate)
        defer { k.deallocate() }
        let run = pullRun(&k, frames: 96_000, signal: sineSignal(1000))
        let f = Frequency.estimate(run.output[0][4800...])
        #expect(abs(f / (1000 * rate) - 1) < 0.001, "measured \(f) Hz")
        let ratio = run.consumptionRatio(from: 4800, to: 90_000)
        #expect(abs(ratio / rate - 1) < 0.001, "consumed \(ratio) input frames per output frame")
        #expect(k.underrunFrames == 0)
    }

    /// At rate 1 from a fresh start the output is the input, sample for sample (no delay), in blocks of
    /// any size, mono and stereo.
    @Test(arguments: [1, 2])
    func rateOneIsTheIdentity(channels: Int) {
        for block in [1, 7, 64, 128] {
            var k = Self.kernel(channels: channels)
            defer { k.deallocate() }
            let x = (0..<channels).map { noise(frames: 5000, seed: 31 + UInt64($0)) }
            let run = pullRun(&k, frames: 5000, block: block) { c, i in i < x[c].count ? x[c][i] : 0 }
            #expect(run.output == x, "block \(block)")
        }
    }

    /// Above rate 1 the cutoff follows the output's Nyquist frequency: a full-scale 15 kHz sine at rate 2
    /// (it would come out at 30 kHz, above the 24 kHz Nyquist) leaves less than −60 dBFS of anything.
    @Test func toneAboveTheOutputNyquistIsRemoved() {
        var k = Self.kernel(rate: 2)
        defer { k.deallocate() }
        let run = pullRun(&k, frames: 48_000, signal: sineSignal(15_000, amplitude: 1))
        let residue = Decibels.fromAmplitude(SignalStats.rms(run.output[0][4800...]) * 2.squareRoot())
        #expect(residue < -60, "residue \(residue) dBFS")
        // Measured bound, so a regression of the filter shows: well below −90 dBFS.
        #expect(residue < -90, "residue \(residue) dBFS")
    }

    /// Below rate 1 the images of the input spectrum are removed: a 20 kHz sine at rate 0.5 comes out at
    /// 10 kHz, and its image (28 kHz in, 14 kHz out) stays below −80 dB.
    @Test func imagesAreRejectedWhenSlowingDown() {
        var k = Self.kernel(rate: 0.5)
        defer { k.deallocate() }
        let run = pullRun(&k, frames: 48_000, signal: sineSignal(20_000, amplitude: 1))
        let out = Array(run.output[0][4800..<(4800 + 38_400)])
        let wanted = Goertzel.amplitude(out, frequency: 10_000, sampleRate: effectTestRate)
        let image = Goertzel.amplitude(out, frequency: 14_000, sampleRate: effectTestRate)
        #expect(abs(Decibels.fromAmplitude(wanted)) < 0.1)
        #expect(Decibels.fromAmplitude(image) < -80, "image \(Decibels.fromAmplitude(image)) dB")
    }

    /// The passband is flat: a 1 kHz tone at rate 0.5 (500 Hz out) keeps its level within 0.5 dB, and
    /// within 0.01 dB (the measured bound), as do tones near the top of the passband at other rates.
    @Test(arguments: [(0.5, 1000.0), (1.5, 12_000), (0.25, 8000), (4, 5000)])
    func passbandLevelIsKept(rate: Double, frequency: Double) {
        var k = Self.kernel(rate: rate)
        defer { k.deallocate() }
        let run = pullRun(&k, frames: 48_000, signal: sineSignal(frequency, amplitude: 0.5))
        let out = Array(run.output[0][4800..<(4800 + 38_400)])
        let level = Goertzel.amplitude(out, frequency: frequency * rate, sampleRate: effectTestRate) / 0.5
        #expect(abs(Decibels.fromAmplitude(level)) < 0.5, "level \(Decibels.fromAmplitude(level)) dB")
        #expect(abs(Decibels.fromAmplitude(level)) < 0.01, "level \(Decibels.fromAmplitude(level)) dB")
    }

    /// A rate change glides: jumping the target from 1 to 2 and back mid-stream never steps further than
    /// the sine's own largest step at the highest frequency reached (2πfA/fs), plus 2 %.
    @Test func rateChangesGlideWithoutClicks() {
        var k = Self.kernel()
        defer { k.deallocate() }
        let amplitude: Float = 0.5
        let run = pullRun(&k, frames: 48_000, signal: sineSignal(440, amplitude: amplitude)) { k, frame in
            if frame == 12_800 { k.setRate(2) }
            if frame == 25_600 { k.setRate(1) }
        }
        let out = run.output[0]
        let bound = Float(2 * Double.pi * 880 / effectTestRate) * amplitude * 1.02
        #expect(SignalStats.maxStep(out[...]) <= bound, "largest step \(SignalStats.maxStep(out[...]))")
        // The glide takes 20 ms: 5 ms after the change the frequency is still between the two.
        let f = Frequency.estimate(out[(12_800 + 240)..<(12_800 + 720)])
        #expect(f > 500 && f < 860, "mid-glide frequency \(f)")
        #expect(abs(Frequency.estimate(out[14_000..<25_000]) - 880) < 0.5)
    }

    /// Bypassed from the start the output is the input exactly; bypassed mid-stream it crossfades over
    /// 10 ms to the input at the (rounded) read position, then copies it exactly; leaving bypass at rate 1
    /// is seamless (interpolation resumes on whole samples).
    @Test func bypassPassesInputExactlyAndCrossfadesClickFree() {
        let x = noise(frames: 20_000, seed: 77, amplitude: 0.5)
        var bypassed = Self.kernel(rate: 1.7)
        defer { bypassed.deallocate() }
        bypassed.setBypass(true)
        #expect(pullRun(&bypassed, frames: 19_000) { _, i in i < x.count ? x[i] : 0 }.output[0] == Array(x[..<19_000]))

        var k = Self.kernel(rate: 1)
        defer { k.deallocate() }
        let run = pullRun(&k, frames: 19_000) { _, i in
            i < x.count ? x[i] : 0
        } onBlock: { k, frame in
            if frame == 4096 { k.setBypass(true) }
            if frame == 9984 { k.setBypass(false) }
        }
        #expect(run.output[0] == Array(x[..<19_000]), "rate 1: processed and dry are the same samples")

        var sweep = Self.kernel(rate: 1)
        defer { sweep.deallocate() }
        let sine = sineSignal(330, amplitude: 0.5)
        let out = pullRun(&sweep, frames: 30_000, signal: sine) { k, frame in
            if frame == 1280 { k.setRate(1.3) }
            if frame == 9600 { k.setBypass(true) }
            if frame == 19_200 { k.setBypass(false) }
        }.output[0]
        let steady = Float(2 * Double.pi * 330 * 1.3 / effectTestRate) * 0.5
        #expect(SignalStats.maxStep(out[...]) <= steady * 1.02 + 1.0 / 480)
        // Settled bypass: a plain copy of the input from some whole frame on.
        let segment = Array(out[11_000..<19_000])
        let offset = (0..<20_000).first { o in (0..<64).allSatisfy { segment[$0] == sine(0, 11_000 + o + $0) } }
        #expect(offset != nil, "bypassed output is the input at a fixed offset")
    }

    /// Bypass toggled again before its crossfade has settled (every 64 frames, five times) has no step
    /// either: the dry path keeps its position while it is audible.
    @Test func bypassToggledMidCrossfadeIsClickFree() {
        var k = Self.kernel(rate: 1.3)
        defer { k.deallocate() }
        let out = pullRun(&k, frames: 24_000, block: 64, signal: sineSignal(330, amplitude: 0.5)) { k, frame in
            if frame >= 9600 && frame <= 9856 && frame % 64 == 0 { k.setBypass(frame % 128 == 0) }
        }.output[0]
        let steady = Float(2 * Double.pi * 330 * 1.3 / effectTestRate) * 0.5
        #expect(SignalStats.maxStep(out[...]) <= steady * 1.02 + 1.0 / 480)
    }

    /// After `reset()` silence gives silence: nothing of the previous input survives.
    @Test func resetClearsTheHistory() {
        var k = Self.kernel(rate: 0.7)
        defer { k.deallocate() }
        _ = pullRun(&k, frames: 4800, signal: sineSignal(700))
        k.reset()
        let after = pullRun(&k, frames: 2400) { _, _ in 0 }
        #expect(after.output[0].allSatisfy { $0 == 0 })
        var other = Self.kernel(rate: 0.7)
        defer { other.deallocate() }
        _ = pullRun(&other, frames: 4800, signal: sineSignal(700))
        #expect(pullRun(&other, frames: 2400, startInputAt: 10_000) { _, _ in 0 }.output[0].contains { $0 != 0 })
    }

    /// Any split of the output into blocks gives the same samples, bit for bit, including a rate glide
    /// (started at frame 3000, a block boundary for every split used).
    @Test func blockSizeDoesNotChangeOutput() {
        func render(_ blocks: Int) -> [Float] {
            var k = Self.kernel(rate: 0.8)
            defer { k.deallocate() }
            return pullRun(&k, frames: 9000, block: blocks, signal: sineSignal(1234)) { k, frame in
                if frame == 3000 { k.setRate(2.5) }
            }.output[0]
        }
        let reference = render(125)
        for blocks in [1, 8, 40, 120] {
            #expect(render(blocks) == reference, "blocks of \(blocks)")
        }
    }

    /// The host loop terminates quickly at both rate extremes with 64-frame blocks, and never underruns.
    @Test(arguments: [0.25, 4.0])
    func pullLoopTerminatesAtTheRateExtremes(rate: Double) {
        var k = Self.kernel(rate: rate, maxBlockFrames: 64)
        defer { k.deallocate() }
        let run = pullRun(&k, frames: 24_000, block: 64, pushLimit: 64, signal: sineSignal(500))
        #expect(!run.hitPushLimit)
        #expect(run.mostPushesForOneBlock <= Int(rate.rounded(.up)) + 3, "\(run.mostPushesForOneBlock) pushes")
        #expect(k.underrunFrames == 0)
    }
}

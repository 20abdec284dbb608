// Tests. The time-pitch kernel: pitch shifts by the requested interval, rate changes duration (and the
// input consumed) without changing pitch, level is kept, bypass is exact, reset clears, the host loop
// terminates at the rate extremes.
import AudioDSP
import DSPTestSupport
import Foundation
import Testing

@Suite struct TimePitchKernelTests {
    static func kernel(rate: Double = 1, cents: Double = 0, channels: Int = 2, maxBlockFrames: Int = 128)
        -> TimePitchKernel
    {
        var k = TimePitchKernel(sampleRate: effectTestRate, maxBlockFrames: maxBlockFrames, channelCount: channels)
        k.setRate(rate)
        k.setPitch(cents: cents)
        return k
    }

    /// +1200 cents turns 440 Hz into 880 Hz, −700 cents into 440·2^(−7/12) = 293.66 Hz (within 0.1 %),
    /// on both channels.
    @Test(
        arguments: [(1200.0, 880.0), (-700, 440 * pow(2.0, -7.0 / 12)), (2400, 1760), (-2400, 110)]
            as [(Double, Double)])
    func pitchShiftMovesASineByTheInterval(cents: Double, expected: Double) {
        var k = Self.kernel(cents: cents)
        defer { k.deallocate() }
        let run = pullRun(&k, frames: 72_000, signal: sineSignal(440))
        for c in 0..<2 {
            let f = Frequency.peak(run.output[c][6000...])
            #expect(abs(f / expected - 1) < 0.001, "channel \(c): \(f) Hz, expected \(expected)")
        }
    }

    /// Rate r consumes r input frames per output frame over a long run (within 1 %), while a 440 Hz sine
    /// keeps its frequency (within 2 Hz).
    @Test(arguments: [2.0, 0.5, 4, 0.25])
    func rateChangesConsumptionButNotPitch(rate: Double) {
        var k = Self.kernel(rate: rate)
        defer { k.deallocate() }
        let run = pullRun(&k, frames: 240_000, signal: sineSignal(440))
        let ratio = run.consumptionRatio(from: 48_000, to: 236_000)
        #expect(abs(ratio / rate - 1) < 0.01, "consumed \(ratio) input frames per output frame")
        let f = Frequency.peak(run.output[0][48_000...])
        #expect(abs(f - 440) < 2, "measured \(f) Hz")
        #expect(k.underrunFrames == 0)
    }

    /// A steady sine keeps its level within ±1.5 dB at rate 1 / pitch 0 and at other settings.
    @Test(arguments: [(1.0, 0.0), (2, 0), (0.5, 0), (1, 1200), (1, -700), (1.5, 500), (0.7, -1500)])
    func levelOfASteadySineIsKept(rate: Double, cents: Double) {
        var k = Self.kernel(rate: rate, cents: cents)
        defer { k.deallocate() }
        let amplitude: Float = 0.5
        let run = pullRun(&k, frames: 96_000, signal: sineSignal(440, amplitude: amplitude))
        for c in 0..<2 {
            let rms = SignalStats.rms(run.output[c][24_000...])
            let db = Decibels.fromAmplitude(rms * 2.squareRoot() / Double(amplitude))
            #expect(abs(db) < 1.5, "channel \(c): \(db) dB")
        }
    }

    /// At rate 1 / pitch 0, with stream alignment (the host pushes what the kernel asks for), the output
    /// is time-aligned with the input to the frame: the best cross-correlation lag of noise in and out,
    /// searched over ±300 frames, is exactly 0 for every block size and channel count. (Before the
    /// alignment measured at creation was dropped, it was 127 frames everywhere; the old ±40 search found
    /// a side peak at 14.)
    @Test(arguments: [(1, 128), (2, 32), (2, 512), (3, 1000)] as [(Int, Int)])
    func rateOneIsTimeAligned(channels: Int, block: Int) {
        var k = Self.kernel(channels: channels, maxBlockFrames: max(block, 128))
        defer { k.deallocate() }
        let x = noise(frames: 48_000, seed: 5, amplitude: 0.5)
        let run = pullRun(&k, frames: 40_000, block: block) { c, i in i < x.count ? x[i] * Float(c + 1) : 0 }
        #expect(k.alignmentFrames == 127, "Rubber Band 3.1.2 after the warm-up")
        for c in 0..<channels {
            let lag = bestLag(run.output[c].map { $0 / Float(c + 1) }, x, range: -300...300)
            #expect(lag == 0, "channel \(c), \(block)-frame blocks: output lags the input by \(lag) frames")
        }
        #expect(k.underrunFrames == 0)
    }

    /// Bypassed from the start the output is the input exactly. Bypassed mid-stream at rate 1, once the
    /// 10 ms crossfade has settled, it is the input exactly at the same frames (no delay); the crossfades
    /// out and back are click-free.
    @Test func bypassPassesInputExactly() {
        let x = noise(frames: 40_000, seed: 3, amplitude: 0.5)
        var bypassed = Self.kernel(rate: 3, cents: 700)
        defer { bypassed.deallocate() }
        bypassed.setBypass(true)
        let direct = pullRun(&bypassed, frames: 30_000) { c, i in i < x.count ? x[i] * (c == 0 ? 1 : -1) : 0 }
        #expect(direct.output[0] == Array(x[..<30_000]))
        #expect(direct.output[1] == x[..<30_000].map { -$0 })

        var k = Self.kernel(channels: 1)
        defer { k.deallocate() }
        let run = pullRun(&k, frames: 30_000) { _, i in
            i < x.count ? x[i] : 0
        } onBlock: { k, frame in
            if frame == 9984 { k.setBypass(true) }
        }
        #expect(Array(run.output[0][11_000...]) == Array(x[11_000..<30_000]))
        #expect(Array(run.output[0][..<9984]) != Array(x[..<9984]), "the processed part is not a copy")
    }

    @Test func bypassCrossfadesAreClickFree() {
        var k = Self.kernel(rate: 1.25, cents: 300, channels: 1)
        defer { k.deallocate() }
        let out = pullRun(&k, frames: 48_000, signal: sineSignal(330)) { k, frame in
            if frame == 14_976 { k.setBypass(true) }
            if frame == 29_952 { k.setBypass(false) }
        }.output[0]
        #expect(k.underrunFrames == 0)
        // The processed tone is at 330·2^(3/12) = 392.4 Hz; the largest step of either signal plus the
        // crossfade's own slope (|processed − dry| ≤ 1 over 480 frames), with 10 % for the stretcher's
        // amplitude ripple.
        let steady = Float(2 * Double.pi * 392.4 / effectTestRate) * 0.5 * 1.1
        #expect(SignalStats.maxStep(out[12_000...]) <= steady + 1.0 / 480, "\(SignalStats.maxStep(out[12_000...]))")
        #expect(abs(Frequency.estimate(out[17_000..<29_000]) - 330) < 0.01, "settled bypass plays the input")
        #expect(abs(Frequency.peak(out[32_000...], size: 16_384) - 392.4) < 3, "processing resumed")
    }

    /// Bypass toggled again before its crossfade has settled (every 64 frames, five times) has no step
    /// either: the dry path keeps its position while it is audible.
    @Test func bypassToggledMidCrossfadeIsClickFree() {
        var k = Self.kernel(rate: 1.25, cents: 300, channels: 1)
        defer { k.deallocate() }
        let out = pullRun(&k, frames: 24_000, block: 64, signal: sineSignal(330)) { k, frame in
            if frame >= 9600 && frame <= 9856 && frame % 64 == 0 { k.setBypass(frame % 128 == 0) }
        }.output[0]
        let steady = Float(2 * Double.pi * 392.4 / effectTestRate) * 0.5 * 1.1
        #expect(SignalStats.maxStep(out[6000...]) <= steady + 1.0 / 480, "\(SignalStats.maxStep(out[6000...]))")
        #expect(k.underrunFrames == 0)
    }

    /// After `reset()` silence in gives silence out (no tail); without it the tail is audible.
    @Test func resetClearsTheTail() {
        var k = Self.kernel(rate: 0.8, cents: -300)
        defer { k.deallocate() }
        _ = pullRun(&k, frames: 9600, signal: sineSignal(500))
        k.reset()
        let after = pullRun(&k, frames: 9600) { _, _ in 0 }
        #expect(after.output.allSatisfy { $0.allSatisfy { $0 == 0 } })
        var other = Self.kernel(rate: 0.8, cents: -300)
        defer { other.deallocate() }
        _ = pullRun(&other, frames: 9600, signal: sineSignal(500))
        let tail = pullRun(&other, frames: 9600, startInputAt: 100_000) { _, _ in 0 }
        #expect(tail.output[0].contains { abs($0) > 1e-3 })
    }

    /// With 64-frame blocks the host loop terminates at rate 1/32 and 32 (at 32 it legitimately wants
    /// about 32·64 input frames per block, in 64-frame pushes), delivers sound, and never underruns.
    @Test(arguments: [1.0 / 32, 32])
    func pullLoopTerminatesAtTheRateExtremes(rate: Double) {
        var k = Self.kernel(rate: rate, channels: 1, maxBlockFrames: 64)
        defer { k.deallocate() }
        let run = pullRun(&k, frames: 9600, block: 64, pushLimit: 2000, signal: sineSignal(440))
        #expect(!run.hitPushLimit)
        #expect(k.underrunFrames == 0)
        #expect(SignalStats.rms(run.output[0][4800...]) > 0.1)
        let steady = run.consumedAtBlock.suffix(40)
        let pushesPerBlock = Double(run.totalPushes) / Double(run.consumedAtBlock.count)
        #expect(pushesPerBlock < rate + 2, "\(pushesPerBlock) pushes per block")
        if rate > 1 {
            let perBlock = Double(steady.last!.consumed - steady.first!.consumed) / Double(39 * 64)
            #expect(abs(perBlock / rate - 1) < 0.05, "\(perBlock) input frames per output frame")
        }
    }

    /// Parameters set before the kernel runs apply at once; later ones glide and reach their target.
    @Test func parameterTableMatchesTheSetters() {
        #expect(TimePitchKernel.parameters.map(\.name) == ["rate", "pitch", "overlap"])
        #expect(TimePitchKernel.parameters.map(\.defaultValue) == [1, 0, 8])
        #expect(TimePitchKernel.parameters[0].range(sampleRate: 48_000) == (1.0 / 32)...32)
        #expect(TimePitchKernel.parameters[1].range(sampleRate: 48_000) == -2400...2400)
        #expect(TimePitchKernel.parameters[2].range(sampleRate: 48_000) == 8...8)
        #expect(VarispeedKernel.parameters.map(\.name) == ["rate"])
        #expect(VarispeedKernel.parameters[0].range(sampleRate: 48_000) == 0.25...4)
        var k = Self.kernel(channels: 1)
        defer { k.deallocate() }
        k.setParameter(0, value: 100)
        k.setParameter(1, value: .nan)
        k.setParameter(2, value: 1)
        #expect(abs(k.rate - 32) < 1e-9 && k.pitch == 0 && k.overlap == 8)
        #expect(k.latencyFrames == 2686, "Rubber Band 3.1.2 at 48 kHz: 2560 samples required + 127 − 1")
    }
}

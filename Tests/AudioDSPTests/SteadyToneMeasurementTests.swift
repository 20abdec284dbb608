// The live-capture tone measurement the JACK tests rely on: it must see through the steps an xrun puts
// in a capture, and must not see through a wrong gain or silence.
import DSPTestSupport
import Foundation
import Testing

@Suite("Steady tone measurement")
struct SteadyToneMeasurementTests {
    /// A 1 kHz sine at `amplitude` built period by period (256 frames), with the periods in `dropped`
    /// skipped (their phase never played, as when a period is lost) and those in `silent` zeroed.
    static func capture(amplitude: Float, periods: Int, dropped: Set<Int> = [], silent: Set<Int> = []) -> [Float] {
        var out: [Float] = []
        var n = 0
        for p in 0..<periods {
            if dropped.contains(p) { n += 256 }
            for _ in 0..<256 {
                out.append(silent.contains(p) ? 0 : amplitude * Float(sin(2 * Double.pi * 1_000 * Double(n) / 48_000)))
                n += 1
            }
        }
        return out
    }

    @Test func stepsFromLostPeriodsAreLeftOutOfTheMeasurement() {
        // One period in five lost or silent: a plain median over 20 ms windows would miss 0.25.
        let glitches = Set(stride(from: 3, to: 90, by: 5))
        let samples = Self.capture(
            amplitude: 0.25, periods: 94, dropped: glitches.filter { $0 % 2 == 0 },
            silent: glitches.filter { $0 % 2 == 1 })
        let measured = Goertzel.steadyAmplitude(samples[...], frequency: 1_000, sampleRate: 48_000, window: 240)
        #expect(measured.windows == 100)
        #expect(measured.steady < measured.windows, "the glitches must show")
        #expect(measured.steady * 2 >= measured.windows)
        #expect(abs((measured.amplitude ?? 0) - 0.25) < 1e-4, "measured \(String(describing: measured.amplitude))")
        var plain: [Double] = []
        for start in stride(from: 0, to: samples.count - 960, by: 960) {
            plain.append(
                Goertzel.measure(samples[start..<(start + 960)], frequency: 1_000, sampleRate: 48_000).amplitude)
        }
        #expect(abs(plain.sorted()[plain.count / 2] - 0.25) > 0.001, "the glitches must disturb a plain median")
    }

    @Test func aWrongGainOrSilenceIsMeasuredNotExcused() {
        let quiet = Self.capture(amplitude: 0.2, periods: 94)
        let measured = Goertzel.steadyAmplitude(quiet[...], frequency: 1_000, sampleRate: 48_000, window: 240)
        #expect(measured.steady == measured.windows)
        #expect(abs((measured.amplitude ?? 0) - 0.2) < 1e-4)
        let silence = [Float](repeating: 0, count: 24_000)
        let none = Goertzel.steadyAmplitude(silence[...], frequency: 1_000, sampleRate: 48_000, window: 240)
        #expect(none.steady == none.windows)
        #expect(none.amplitude == 0)
        // A second tone on top (the path doubled) is not a steady 1 kHz sine.
        let doubled = quiet.enumerated().map { i, x in x + Float(0.1 * sin(2 * Double.pi * 1_400 * Double(i) / 48_000))
        }
        let mixed = Goertzel.steadyAmplitude(doubled[...], frequency: 1_000, sampleRate: 48_000, window: 240)
        #expect(mixed.steady == 0)
    }

    /// Captures each disturbed in most windows (as with every sanitized suite running beside a live test)
    /// count together: two with about a third of their windows steady make one measurement, and it is
    /// what the steady windows show, the right amplitude or a wrong one.
    @Test func capturesDisturbedInMostWindowsCountTogether() {
        // A period lost after each of the last two thirds of the periods: only windows inside one period
        // hold a steady sine there.
        let dropped = Set(32..<94)
        let one = Goertzel.steadyAmplitude(
            Self.capture(amplitude: 0.25, periods: 94, dropped: dropped)[...], frequency: 1_000, sampleRate: 48_000,
            window: 240)
        #expect(one.steady * 2 < one.windows && one.steady * 4 > one.windows, "\(one.steady) of \(one.windows)")
        for amplitude in [Float(0.25), 0.2] {
            var taken = 0
            let measured = Goertzel.steadyAmplitude(frequency: 1_000, sampleRate: 48_000, window: 240, attempts: 5) {
                taken += 1
                return .success(Self.capture(amplitude: amplitude, periods: 94, dropped: dropped)[...])
            }
            #expect(taken == 2, "\(measured.captures)")
            let value = measured.amplitude ?? 0
            #expect(abs(value - Double(amplitude)) < 1e-4, "measured \(value) of \(amplitude): \(measured.captures)")
        }
        // Mostly silence in every capture: silence is what is measured.
        let quiet = Goertzel.steadyAmplitude(frequency: 1_000, sampleRate: 48_000, window: 240, attempts: 2) {
            .success(Self.capture(amplitude: 0.25, periods: 94, silent: Set(0..<80))[...])
        }
        #expect(quiet.amplitude == 0, "\(quiet.captures)")
    }
}

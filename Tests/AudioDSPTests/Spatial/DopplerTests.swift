// Tests. OpenAL 1.1's Doppler formula, and the resampler's measured pitch against it for moving tones.
import AudioDSP
import DSPTestSupport
import Foundation
import Testing

@Suite struct DopplerTests {
    let doppler = DopplerShift()

    @Test func formulaMatchesTheClosedForm() {
        let ss = 343.3
        // Source approaching the listener along the line at 20 m/s.
        let approaching = doppler.pitchRatio(
            sourcePosition: SpatialVector(0, 0, -50), sourceVelocity: SpatialVector(0, 0, 20),
            listenerPosition: .zero, listenerVelocity: .zero)
        #expect(abs(approaching - ss / (ss - 20)) < 1e-12)
        // Receding.
        let receding = doppler.pitchRatio(
            sourcePosition: SpatialVector(0, 0, -50), sourceVelocity: SpatialVector(0, 0, -20),
            listenerPosition: .zero, listenerVelocity: .zero)
        #expect(abs(receding - ss / (ss + 20)) < 1e-12)
        // Listener moving towards a resting source.
        let listenerMoving = doppler.pitchRatio(
            sourcePosition: SpatialVector(0, 0, -50), sourceVelocity: .zero,
            listenerPosition: .zero, listenerVelocity: SpatialVector(0, 0, -10))
        #expect(abs(listenerMoving - (ss + 10) / ss) < 1e-12)
        // Only the component along the line counts: moving sideways gives no shift.
        let sideways = doppler.pitchRatio(
            sourcePosition: SpatialVector(0, 0, -50), sourceVelocity: SpatialVector(30, 0, 0),
            listenerPosition: .zero, listenerVelocity: .zero)
        #expect(sideways == 1)
        // The Doppler factor scales the velocities.
        let doubled = DopplerShift(dopplerFactor: 2).pitchRatio(
            sourcePosition: SpatialVector(0, 0, -50), sourceVelocity: SpatialVector(0, 0, 20),
            listenerPosition: .zero, listenerVelocity: .zero)
        #expect(abs(doubled - ss / (ss - 40)) < 1e-12)
    }

    @Test func edgeCasesGiveNoShiftOrTheClampedLimit() {
        let v = SpatialVector(0, 0, 20)
        #expect(
            DopplerShift(dopplerFactor: 0).pitchRatio(
                sourcePosition: SpatialVector(0, 0, -5), sourceVelocity: v, listenerPosition: .zero,
                listenerVelocity: .zero) == 1)
        #expect(
            doppler.pitchRatio(
                sourcePosition: .zero, sourceVelocity: v, listenerPosition: .zero, listenerVelocity: .zero) == 1)
        // At or beyond the speed of sound towards the listener: the pole.
        #expect(
            doppler.pitchRatio(
                sourcePosition: SpatialVector(0, 0, -5), sourceVelocity: SpatialVector(0, 0, 400),
                listenerPosition: .zero, listenerVelocity: .zero) == .infinity)
        // A listener fleeing at the speed of sound or faster is clamped to SS/DF: the ratio is 0.
        #expect(
            doppler.pitchRatio(
                sourcePosition: SpatialVector(0, 0, -5), sourceVelocity: .zero,
                listenerPosition: .zero, listenerVelocity: SpatialVector(0, 0, 500)) == 0)
    }

    /// Feeds a 1 kHz tone through the resampler at a fixed ratio and measures the output frequency.
    func measuredFrequency(ratio: Double, seconds: Double = 0.95) -> Double {
        var r = DopplerResampler(sampleRate: spatialTestRate, headroomSeconds: 0.5)
        defer { r.deallocate() }
        r.setPitchRatio(ratio, rampFrames: 0)
        let input = TestSignal.sine(
            frequency: 1000, sampleRate: spatialTestRate, frames: Int(seconds * spatialTestRate))
        var output = input
        input.withUnsafeBufferPointer { i in
            output.withUnsafeMutableBufferPointer { o in
                r.process(input: i.baseAddress!, output: o.baseAddress!, frames: input.count)
            }
        }
        // Skip the initial silence (the 0.5 s headroom, shortened or lengthened by the ratio).
        return FrequencyEstimator.zeroCrossingFrequency(output[34_000...], sampleRate: spatialTestRate)
    }

    @Test(arguments: [343.3 / (343.3 - 20), 343.3 / (343.3 + 20), 1.5, 0.75, 1])
    func resamplerShiftsAToneByTheRatio(ratio: Double) {
        let f = measuredFrequency(ratio: ratio)
        #expect(abs(f - 1000 * ratio) < 0.05, "measured \(f) Hz for ratio \(ratio)")
    }

    /// A tone source flying past the listener at 30 m/s on a straight line 10 m to the side, with the
    /// ratio from the OpenAL formula sent 60 times per second: the measured frequency in each 50 ms
    /// window matches f × ratio at the window's centre.
    @Test func aFlyByFollowsTheFormula() {
        let rate = spatialTestRate
        let speed = 30.0
        let frames = Int(2 * rate)
        var r = DopplerResampler(sampleRate: rate, headroomSeconds: 0.2)
        defer { r.deallocate() }
        func position(_ frame: Int) -> SpatialVector { SpatialVector(10, 0, -30 + speed * Double(frame) / rate) }
        func ratio(_ frame: Int) -> Double {
            doppler.pitchRatio(
                sourcePosition: position(frame), sourceVelocity: SpatialVector(0, 0, speed),
                listenerPosition: .zero, listenerVelocity: .zero)
        }
        let input = TestSignal.sine(frequency: 1000, sampleRate: rate, frames: frames)
        let update = Int(rate / 60)
        let out = renderSource(
            input, channelCount: 1, block: update,
            update: { frame in
                // Aim each segment at the ratio due at its end, so the glide tracks the formula.
                r.setPitchRatio(ratio(frame + update), rampFrames: update)
            }
        ) { input, bus, n in
            r.process(input: input, output: bus.channel(0), frames: n)
        }[0]
        let latency = Int(0.2 * rate)
        for centre in stride(from: latency + 2400, to: frames - 2400, by: 4800) {
            // Output at frame t was emitted ≈ `latency` frames earlier; the ratio applies at output time.
            let f = FrequencyEstimator.zeroCrossingFrequency(out[(centre - 1200)..<(centre + 1200)], sampleRate: rate)
            let expected = 1000 * ratio(centre)
            #expect(abs(f - expected) < 1.5, "at \(Double(centre) / rate) s: \(f) Hz, expected \(expected)")
        }
        #expect(ClickDetector.secondDifferenceRatio(out[latency...], frequency: 1100, sampleRate: rate) < 2)
    }

    /// Raising the pitch consumes headroom; near the end of it the rate glides back to 1, so the pitch
    /// returns to normal without a corner in the waveform.
    @Test func runningOutOfHeadroomReturnsToUnityWithoutAClick() {
        var r = DopplerResampler(sampleRate: spatialTestRate, headroomSeconds: 0.01)
        defer { r.deallocate() }
        r.setPitchRatio(1.2, rampFrames: 0)
        let input = TestSignal.sine(frequency: 200, sampleRate: spatialTestRate, frames: 24_000, amplitude: 0.5)
        let out = renderSource(input, channelCount: 1) { i, bus, n in
            r.process(input: i, output: bus.channel(0), frames: n)
        }[0]
        #expect(r.delayFrames - FractionalDelayLine.minimumDelay < 0.5)
        let late = FrequencyEstimator.zeroCrossingFrequency(out[12_000...], sampleRate: spatialTestRate)
        #expect(abs(late - 200) < 0.05)
        #expect(ClickDetector.secondDifferenceRatio(out[600...], frequency: 240, sampleRate: spatialTestRate) < 2)
    }

    /// The detector flags a jump in the delay (a step in the waveform), so the tests above can fail.
    @Test func detectorSeesADelayJump() {
        let x = TestSignal.sine(frequency: 200, sampleRate: spatialTestRate, frames: 4000, amplitude: 0.5)
        var jumped = x
        for i in 2000..<4000 { jumped[i] = x[i - 7] }
        #expect(ClickDetector.secondDifferenceRatio(jumped[...], frequency: 200, sampleRate: spatialTestRate) > 20)
    }
}

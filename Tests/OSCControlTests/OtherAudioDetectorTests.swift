// Other audio is playing once every peak stays above −60 dBFS for 200 ms, and stops after 1 s below;
// shorter bursts and gaps change nothing.
@testable import OSCControl
import Testing

@Suite struct OtherAudioDetectorTests {
    /// Feeds `peak` every 10 ms from `start` for `seconds`; returns the changes with their times.
    private func feed(
        _ detector: inout OtherAudioDetector, _ peak: Float, from start: Double, for seconds: Double
    ) -> [(Double, Bool)] {
        var changes: [(Double, Bool)] = []
        var t = start
        while t < start + seconds - 1e-9 {
            if let change = detector.update(peak: peak, now: t) { changes.append((t, change)) }
            t += 0.01
        }
        return changes
    }

    @Test func onsetTakes200MillisecondsAndReleaseOneSecond() {
        var d = OtherAudioDetector()
        // −59 dBFS for 150 ms, then silence: nothing.
        #expect(feed(&d, 0.0012, from: 0, for: 0.15).isEmpty)
        #expect(feed(&d, 0, from: 0.15, for: 0.1).isEmpty)
        // −59 dBFS from 0.25 s: playing at 0.45 s.
        let on = feed(&d, 0.0012, from: 0.25, for: 1)
        #expect(on.count == 1 && on[0].1 && abs(on[0].0 - 0.45) < 0.011, "\(on)")
        #expect(d.isPlaying)
        // A gap of 0.9 s changes nothing; 1 s of silence ends it.
        #expect(feed(&d, 0.0005, from: 1.25, for: 0.9).isEmpty)
        #expect(feed(&d, 0.5, from: 2.15, for: 0.05).isEmpty)
        let off = feed(&d, 0, from: 2.2, for: 2)
        #expect(off.count == 1 && !off[0].1 && abs(off[0].0 - 3.2) < 0.011, "\(off)")
        // −60 dBFS exactly is not above the threshold.
        #expect(feed(&d, OtherAudioDetector.threshold, from: 5, for: 1).isEmpty)
    }
}

// Time tag → engine sample time: the mapping formula and exact offsets between tags of one bundle.
import AudioGraph
@testable import OSCControl
import Testing

@Suite struct OSCClockMappingTests {
    let anchor = OSCClockMapping.Anchor(sampleTime: 96_000, monotonicNanoseconds: 5_000_000_000, sampleRate: 48_000)

    @Test func tagNowMapsThroughTheAnchor() {
        let now = OSCTimetag(unixSeconds: 1_800_000_000)
        // 10 ms after the anchor's cycle began, a tag 100 ms ahead of now lands 110 ms after the anchor.
        let frame = OSCClockMapping.sampleTime(
            for: now.adding(seconds: 0.1), wallNow: now,
            monotonicNow: 5_010_000_000, anchor: anchor)
        #expect(frame == 96_000 + 5_280)
        // A past tag maps before the anchor.
        let past = OSCClockMapping.sampleTime(
            for: now.adding(seconds: -1), wallNow: now,
            monotonicNow: 5_000_000_000, anchor: anchor)
        #expect(past == 48_000)
    }

    /// A frame's time tag maps back to that frame (the inverse used for lastRenderTime).
    @Test(arguments: [Int64(0), 96_000, 96_001, 143_999, 1_000_000])
    func aFramesTimetagMapsBackToIt(frame: Int64) {
        let now = OSCTimetag(unixSeconds: 1_800_000_000.25)
        let tag = OSCClockMapping.timetag(
            forSampleTime: frame, wallNow: now, monotonicNow: 5_007_000_000, anchor: anchor)
        #expect(
            OSCClockMapping.sampleTime(for: tag, wallNow: now, monotonicNow: 5_007_000_000, anchor: anchor) == frame)
        // The anchor's own frame lies 7 ms before now.
        let anchorTag = OSCClockMapping.timetag(
            forSampleTime: 96_000, wallNow: now, monotonicNow: 5_007_000_000,
            anchor: anchor)
        #expect(abs(now.seconds(since: anchorTag) - 0.007) < 1e-6)
    }

    @Test(arguments: [0.5, 0.25, 1.0 / 3.0, 2.0, 0.000_020_833])
    func offsetsBetweenTagsAreExact(seconds: Double) {
        let first = OSCTimetag(unixSeconds: 1_800_000_123.123_456)
        let second = first.adding(seconds: seconds)
        let frames = OSCClockMapping.sampleTimes(
            for: [first, .immediate, second], wallNow: first.adding(seconds: -0.2),
            monotonicNow: 5_003_333_333, anchor: anchor)
        #expect(frames[1] == nil)
        #expect(frames[2]! - frames[0]! == Int64((seconds * 48_000).rounded()))
    }

    @Test func halfSecondIsExactly24000FramesWhateverTheClockReading() {
        let t0 = OSCTimetag(unixSeconds: 1_799_999_999.987_654_321)
        let t1 = t0.adding(seconds: 0.5)
        for jitter in stride(from: 0, to: 1_000_000, by: 37_311) {
            let frames = OSCClockMapping.sampleTimes(
                for: [t0, t1], wallNow: t0.adding(seconds: -0.3),
                monotonicNow: 5_000_000_000 + Int64(jitter), anchor: anchor)
            #expect(frames[1]! - frames[0]! == 24_000)
        }
    }

    @Test func allImmediateTagsHaveNoFrames() {
        let frames = OSCClockMapping.sampleTimes(
            for: [.immediate, .immediate], wallNow: .immediate,
            monotonicNow: 0, anchor: anchor)
        #expect(frames == [nil, nil])
    }
}

@Suite struct OSCStableReferenceTests {
    @Test func jitteringCyclesKeepOneReferenceAndDriftReplacesIt() {
        var reference = OSCClockMapping.StableReference(tolerance: 0.002)
        let first = OSCClockMapping.Anchor(sampleTime: 0, monotonicNanoseconds: 1_000_000_000, sampleRate: 48_000)
        #expect(reference.update(with: first) == first)
        // A cycle 256 frames later that started 0.3 ms late: same reference.
        let jittered = OSCClockMapping.Anchor(
            sampleTime: 256, monotonicNanoseconds: 1_000_000_000 + 5_333_333 + 300_000,
            sampleRate: 48_000)
        #expect(reference.update(with: jittered) == first)
        // 10 ms of drift: a new reference.
        let drifted = OSCClockMapping.Anchor(
            sampleTime: 48_000, monotonicNanoseconds: 2_010_000_000, sampleRate: 48_000)
        #expect(reference.update(with: drifted) == drifted)
    }
}

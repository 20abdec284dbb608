// Control side. Maps OSC time tags to engine sample times (pure arithmetic, unit-tested).
import AudioGraph

/// Converts wall-clock time tags to engine frames through the render thread's clock anchor.
///
/// The anchor says frame `sampleTime` began rendering at `monotonicNanoseconds` (CLOCK_MONOTONIC). A tag
/// `dt` seconds after "now" on the wall clock therefore falls on
/// `anchor.sampleTime + round((monotonicNow + dt − anchor.monotonicNanoseconds) · rate)`.
/// Several tags of one bundle are converted through the first one plus their exact offsets, so tags
/// 0.5 s apart land exactly `0.5 · rate` frames apart whatever the clock jitter.
public enum OSCClockMapping {
    /// A render cycle's start: engine frame `sampleTime` began rendering at `monotonicNanoseconds`.
    public struct Anchor: Sendable, Equatable {
        public var sampleTime: Int64
        public var monotonicNanoseconds: Int64
        public var sampleRate: Double

        public init(sampleTime: Int64, monotonicNanoseconds: Int64, sampleRate: Double) {
            self.sampleTime = sampleTime
            self.monotonicNanoseconds = monotonicNanoseconds
            self.sampleRate = sampleRate
        }

        public init(_ anchor: EngineClockAnchor) {
            self.init(
                sampleTime: anchor.sampleTime, monotonicNanoseconds: anchor.monotonicNanoseconds,
                sampleRate: anchor.sampleRate)
        }
    }

    /// Keeps one anchor for as long as the engine's clock agrees with it, so that time tags converted at
    /// different moments (separate messages, separate bundles) keep their exact frame distances. Each
    /// render cycle's start jitters by scheduling latency; re-anchoring on every conversion would move
    /// frames by that jitter. The reference is replaced when the latest anchor drifts from it by more
    /// than `tolerance` seconds (a clock drift, an xrun, a restart) or the rate changes.
    public struct StableReference: Sendable {
        public private(set) var anchor: Anchor?
        public var tolerance: Double

        public init(tolerance: Double = 0.002) { self.tolerance = tolerance }

        /// The anchor to convert with, given the engine's latest one.
        public mutating func update(with latest: Anchor) -> Anchor {
            if let current = anchor, current.sampleRate == latest.sampleRate {
                let predicted =
                    Double(current.sampleTime)
                    + Double(latest.monotonicNanoseconds - current.monotonicNanoseconds) / 1e9 * current.sampleRate
                if abs(predicted - Double(latest.sampleTime)) <= tolerance * latest.sampleRate { return current }
            }
            anchor = latest
            return latest
        }
    }

    /// The engine sample time of `tag`, given the wall clock and the monotonic clock read together.
    public static func sampleTime(
        for tag: OSCTimetag, wallNow: OSCTimetag, monotonicNow: Int64, anchor: Anchor
    ) -> Int64 {
        let dt = tag.seconds(since: wallNow)
        let sinceAnchor = Double(monotonicNow - anchor.monotonicNanoseconds) / 1e9 + dt
        return anchor.sampleTime + Int64((sinceAnchor * anchor.sampleRate).rounded())
    }

    /// The wall-clock time tag of engine frame `sampleTime` (the inverse of `sampleTime(for:…)`).
    public static func timetag(
        forSampleTime sampleTime: Int64, wallNow: OSCTimetag, monotonicNow: Int64, anchor: Anchor
    ) -> OSCTimetag {
        let sinceAnchor = Double(sampleTime - anchor.sampleTime) / anchor.sampleRate
        let elapsed = Double(monotonicNow - anchor.monotonicNanoseconds) / 1e9
        return wallNow.adding(seconds: sinceAnchor - elapsed)
    }

    /// Frames from `reference` to `tag` at `sampleRate`, rounded to the nearest frame, computed from the
    /// tags' 64-bit NTP values (no wall-clock reading involved).
    public static func frameOffset(from reference: OSCTimetag, to tag: OSCTimetag, sampleRate: Double) -> Int64 {
        let units = Int64(bitPattern: tag.rawValue &- reference.rawValue)  // 2^-32 s
        let whole = units >> 32
        let fraction = Double(units & 0xFFFF_FFFF) / 4_294_967_296.0
        return Int64(((Double(whole) + fraction) * sampleRate).rounded())
    }

    /// Sample times for the tags of one bundle (nil for "immediately"): the first non-immediate tag is
    /// converted through the anchor; every other tag is that frame plus its exact offset.
    public static func sampleTimes(
        for tags: [OSCTimetag], wallNow: OSCTimetag, monotonicNow: Int64, anchor: Anchor
    ) -> [Int64?] {
        guard let reference = tags.first(where: { !$0.isImmediate }) else { return tags.map { _ in nil } }
        let base = sampleTime(for: reference, wallNow: wallNow, monotonicNow: monotonicNow, anchor: anchor)
        return tags.map { tag in
            tag.isImmediate ? nil : base + frameOffset(from: reference, to: tag, sampleRate: anchor.sampleRate)
        }
    }
}

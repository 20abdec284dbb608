// Control side. OSC time tags (NTP format) and the system clocks they are compared with.
import Glibc

/// An OSC time tag: seconds since 1900-01-01 UTC plus a 32-bit binary fraction (NTP format).
/// `{0, 1}` means "immediately".
public struct OSCTimetag: Sendable, Hashable, Comparable, CustomStringConvertible {
    public var seconds: UInt32
    public var fraction: UInt32

    public init(seconds: UInt32, fraction: UInt32) {
        self.seconds = seconds
        self.fraction = fraction
    }

    /// The special time tag that means "as soon as possible".
    public static let immediate = OSCTimetag(seconds: 0, fraction: 1)

    /// Seconds between the NTP epoch (1900) and the Unix epoch (1970).
    public static let unixEpochOffset: UInt64 = 2_208_988_800

    public var isImmediate: Bool { seconds == 0 && fraction == 1 }

    /// The tag as one 64-bit NTP value.
    public var rawValue: UInt64 { UInt64(seconds) << 32 | UInt64(fraction) }

    public init(rawValue: UInt64) {
        seconds = UInt32(truncatingIfNeeded: rawValue >> 32)
        fraction = UInt32(truncatingIfNeeded: rawValue)
    }

    /// The tag for a Unix time in seconds (CLOCK_REALTIME).
    public init(unixSeconds: Double) {
        let whole = unixSeconds.rounded(.down)
        let frac = (unixSeconds - whole) * 4_294_967_296.0
        seconds = UInt32(truncatingIfNeeded: UInt64(max(0, whole)) &+ Self.unixEpochOffset)
        fraction = UInt32(min(4_294_967_295.0, max(0, frac.rounded())))
    }

    /// Unix time in seconds.
    public var unixSeconds: Double {
        Double(Int64(seconds) - Int64(Self.unixEpochOffset)) + Double(fraction) / 4_294_967_296.0
    }

    /// `self - other` in seconds (what liblo's `lo_timetag_diff(self, other)` returns).
    public func seconds(since other: OSCTimetag) -> Double {
        Double(Int64(seconds) - Int64(other.seconds)) + (Double(fraction) - Double(other.fraction)) / 4_294_967_296.0
    }

    /// The tag `interval` seconds later (negative: earlier).
    public func adding(seconds interval: Double) -> OSCTimetag {
        let delta = Int64((interval * 4_294_967_296.0).rounded())
        return OSCTimetag(rawValue: UInt64(bitPattern: Int64(bitPattern: rawValue) &+ delta))
    }

    public static func < (a: OSCTimetag, b: OSCTimetag) -> Bool { a.rawValue < b.rawValue }

    public var description: String {
        isImmediate ? "immediate" : String(rawValue, radix: 16)
    }

    /// The current time from CLOCK_REALTIME.
    public static func now() -> OSCTimetag {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        let frac = (UInt64(ts.tv_nsec) << 32) / 1_000_000_000
        return OSCTimetag(
            seconds: UInt32(truncatingIfNeeded: UInt64(ts.tv_sec) &+ unixEpochOffset),
            fraction: UInt32(truncatingIfNeeded: frac))
    }
}

/// Reads the two clocks a time-tag conversion needs.
enum SystemClock {
    /// CLOCK_MONOTONIC in nanoseconds (the clock of `EngineClockAnchor`).
    static func monotonicNanoseconds() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec)
    }

    /// Seconds on CLOCK_MONOTONIC (for leases, ticks and deadlines).
    static func monotonicSeconds() -> Double {
        Double(monotonicNanoseconds()) / 1e9
    }

    /// Reads CLOCK_REALTIME and CLOCK_MONOTONIC as close together as possible (the pair with the
    /// tightest bracket out of three tries).
    static func pairedNow() -> (wall: OSCTimetag, monotonicNanoseconds: Int64) {
        var best: (OSCTimetag, Int64, Int64)?
        for _ in 0..<3 {
            let before = monotonicNanoseconds()
            let wall = OSCTimetag.now()
            let after = monotonicNanoseconds()
            if best == nil || after - before < best!.2 {
                best = (wall, before + (after - before) / 2, after - before)
            }
        }
        return (best!.0, best!.1)
    }
}

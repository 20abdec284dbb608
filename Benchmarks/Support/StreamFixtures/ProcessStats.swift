// Benchmark support. CPU time of the calling thread or of a named thread of this process, resident
// memory, and the small statistics the reports print.
import CHeapStats
import Foundation

public enum ProcessStats {
    /// CPU time of the calling thread, in seconds (CLOCK_THREAD_CPUTIME_ID).
    public static func threadCPUSeconds() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }

    /// CLOCK_MONOTONIC, in seconds.
    public static func now() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }

    /// CPU time, in seconds, of every thread of this process whose name is `name` (from
    /// /proc/self/task/*/schedstat, nanosecond resolution).
    public static func cpuSeconds(ofThreadsNamed name: String) -> Double {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        var total = 0.0
        for task in tasks {
            let comm = (try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8)) ?? ""
            guard comm.trimmingCharacters(in: .whitespacesAndNewlines) == name,
                let stat = try? String(contentsOfFile: "/proc/self/task/\(task)/schedstat", encoding: .utf8),
                let first = stat.split(separator: " ").first, let nanoseconds = Double(first)
            else { continue }
            total += nanoseconds / 1e9
        }
        return total
    }

    /// Resident set size of this process, in bytes (VmRSS).
    public static func residentBytes() -> Int {
        let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
        for line in status.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            let kilobytes = line.split(separator: " ").compactMap { Int($0) }.first ?? 0
            return kilobytes * 1024
        }
        return 0
    }

    /// Bytes malloc has handed out and not had back (glibc `mallinfo2`: `uordblks` + `hblkhd`).
    /// Unlike RSS it does not count freed memory malloc keeps for reuse.
    public static func heapInUseBytes() -> Int {
        Int(cheapstats_in_use_bytes())
    }

    public static func median(_ values: [Double]) -> Double {
        let s = values.sorted()
        guard !s.isEmpty else { return 0 }
        return s.count % 2 == 1 ? s[s.count / 2] : (s[s.count / 2 - 1] + s[s.count / 2]) / 2
    }

    /// The value at quantile `q` (0…1) of `values`, nearest rank.
    public static func quantile(_ values: [Double], _ q: Double) -> Double {
        let s = values.sorted()
        guard !s.isEmpty else { return 0 }
        let rank = max(1, Int((q * Double(s.count)).rounded(.up)))
        return s[min(s.count, rank) - 1]
    }

    /// `value` with `decimals` digits after the point.
    public static func fixed(_ value: Double, _ decimals: Int) -> String {
        String(format: "%.\(decimals)f", value)
    }
}

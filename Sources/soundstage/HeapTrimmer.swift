// Control side (the `run` main loop). Hands the free pages malloc keeps in its arenas back to the kernel
// now and then. Live edits make and free nodes, kernels and buffers on several threads; glibc keeps the
// freed memory in per-thread arenas, so the resident size of a long session climbs to its busiest
// moment and stays there even though the heap in use is flat (docs/benchmarks.md, the hour with heap
// statistics). The render thread never allocates, so the arena locks the trim takes cannot stall it.
import CProcessMemory
import Glibc

struct HeapTrimmer {
    /// Seconds between trims.
    static let interval = 30.0
    private var next = HeapTrimmer.now() + HeapTrimmer.interval

    /// Trims when the interval has passed.
    mutating func tick() {
        let now = Self.now()
        guard now >= next else { return }
        next = now + Self.interval
        _ = ss_heap_trim()
    }

    private static func now() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }
}

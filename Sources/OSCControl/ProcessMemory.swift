// OSC thread. The process's memory as the kernel and the C heap see it, for `/status/memory`: a long run
// tells a leak (heap in use climbing) from fragmentation (resident size climbing while the heap in use
// stays level).
import CProcessMemory
import Glibc

/// One reading of the process's memory, in bytes.
struct ProcessMemory: Sendable, Equatable {
    /// Resident set size (`/proc/self/statm`, second field times the page size).
    var residentBytes: Int64
    /// Bytes handed out by malloc and not yet freed, including blocks served by their own mapping (-1 for
    /// each heap figure when the allocator gives none, as under a sanitizer).
    var heapInUseBytes: Int64
    /// Bytes malloc holds free inside its arenas (returned to it, not to the kernel).
    var heapFreeBytes: Int64
    /// Bytes in blocks malloc served by their own mapping (large allocations).
    var heapMappedBytes: Int64

    /// Reads the current figures. The heap figures walk every arena under its lock: a control-thread
    /// call, never a render-thread one.
    static func current() -> ProcessMemory {
        let heap = ss_heap_stats_now()
        // A process whose allocator is not glibc's (a sanitizer's, say) gets all zeros: unknown, -1.
        let known = heap.arena_in_use != 0 || heap.arena_free != 0 || heap.mapped != 0
        return ProcessMemory(
            residentBytes: residentSetBytes(), heapInUseBytes: known ? heap.arena_in_use + heap.mapped : -1,
            heapFreeBytes: known ? heap.arena_free : -1, heapMappedBytes: known ? heap.mapped : -1)
    }

    private static func residentSetBytes() -> Int64 {
        let fd = open("/proc/self/statm", O_RDONLY)
        guard fd >= 0 else { return 0 }
        defer { close(fd) }
        var bytes = [UInt8](repeating: 0, count: 128)
        let count = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        guard count > 0 else { return 0 }
        let fields = bytes[..<count].split(separator: UInt8(ascii: " "))
        guard fields.count >= 2, let pages = Int64(String(decoding: fields[1], as: UTF8.self)) else { return 0 }
        return pages * Int64(sysconf(Int32(_SC_PAGESIZE)))
    }
}

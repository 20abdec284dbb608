// Test support. Counts heap allocations and mutex locks made by a chosen thread (CAllocationCounter).
import CAllocationCounter

public enum AllocationProbe {
    /// True when the process's malloc is the counting one (glibc, test executable).
    public static var isActive: Bool { ss_allocation_counter_is_active() != 0 }
    /// Starts or stops counting the calling thread.
    public static func trackCurrentThread(_ on: Bool) { ss_track_current_thread(on ? 1 : 0) }
    public static func reset() { ss_reset_tracked_counts() }
    /// Arms the debugger trap (SS_ALLOCATION_TRAP=1): from now on a counted call raises SIGTRAP.
    public static func armTrap(_ on: Bool) { ss_arm_trap(on ? 1 : 0) }
    public static var allocations: Int64 { ss_tracked_allocation_count() }
    public static var frees: Int64 { ss_tracked_free_count() }
    public static var locks: Int64 { ss_tracked_lock_count() }
}

// Test support. Counts heap allocations and mutex locks made by chosen threads (CAllocationCounter).
// Each probe owns a channel, so tests running in parallel in one process never see each other's counts.
import CAllocationCounter

public struct AllocationProbe: Sendable {
    /// True when the process's malloc is the counting one (glibc, test executable).
    public static var isActive: Bool { ss_allocation_counter_is_active() != 0 }
    /// True in a build with the address or thread sanitizer: the sanitizer owns malloc, nothing is
    /// counted, and the allocation tests are left to the plain build (`scripts/test.sh` runs both).
    public static var isSanitized: Bool { ss_allocation_counter_is_sanitized() != 0 }
    /// Arms the debugger trap (SS_ALLOCATION_TRAP=1 or 2): from now on a counted call raises SIGTRAP
    /// or prints its stack.
    public static func armTrap(_ on: Bool) { ss_arm_trap(on ? 1 : 0) }

    /// The counter channel; a C callback that cannot capture the probe passes it to
    /// `ss_track_current_thread` itself.
    public let channel: Int32

    /// Opens a fresh channel with zeroed counts.
    public init() { channel = ss_allocation_channel_open() }

    /// Starts or stops counting the calling thread into this probe.
    public func trackCurrentThread(_ on: Bool) { ss_track_current_thread(on ? channel : 0) }
    public func reset() { ss_reset_tracked_counts(channel) }
    public var allocations: Int64 { ss_tracked_allocation_count(channel) }
    public var frees: Int64 { ss_tracked_free_count(channel) }
    public var locks: Int64 { ss_tracked_lock_count(channel) }
}

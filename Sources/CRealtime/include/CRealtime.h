// Real-time helpers for the render thread: denormal control. Callable from any thread; never blocks.
#ifndef SOUNDSTAGE_CREALTIME_H
#define SOUNDSTAGE_CREALTIME_H
#include <stdint.h>

/// Sets flush-to-zero and denormals-are-zero for the calling thread (x86 MXCSR, arm64 FPCR.FZ) and
/// returns the previous floating-point control state, for `ss_restore_floating_point_mode`.
uint64_t ss_enable_flush_to_zero(void);

/// Restores a control state returned by `ss_enable_flush_to_zero`.
void ss_restore_floating_point_mode(uint64_t state);

/// Returns the calling thread's consumed CPU time in nanoseconds (CLOCK_THREAD_CPUTIME_ID).
int64_t ss_thread_cpu_time_ns(void);

/// Returns CLOCK_MONOTONIC in nanoseconds.
int64_t ss_monotonic_ns(void);
#endif

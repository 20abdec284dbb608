// Real-time helpers for the render thread: denormal control. Callable from any thread; never blocks.
#ifndef SOUNDSTAGE_CREALTIME_H
#define SOUNDSTAGE_CREALTIME_H
#include <stdint.h>

/// Sets flush-to-zero and denormals-are-zero for the calling thread (x86 MXCSR, arm64 FPCR.FZ).
void ss_enable_flush_to_zero(void);

/// Returns the calling thread's consumed CPU time in nanoseconds (CLOCK_THREAD_CPUTIME_ID).
int64_t ss_thread_cpu_time_ns(void);

/// Returns CLOCK_MONOTONIC in nanoseconds.
int64_t ss_monotonic_ns(void);
#endif

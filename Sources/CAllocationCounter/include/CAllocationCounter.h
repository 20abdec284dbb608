// Test-only: counts heap allocations and pthread mutex acquisitions made by threads that opted in.
// Linking this target into an executable replaces malloc & co. for the whole process (glibc only).
#ifndef SOUNDSTAGE_CALLOCATIONCOUNTER_H
#define SOUNDSTAGE_CALLOCATIONCOUNTER_H
#include <stdint.h>

/// Marks (1) or unmarks (0) the calling thread as tracked.
void ss_track_current_thread(int enabled);
/// Allocations (malloc, calloc, realloc, memalign family) made by tracked threads since the last reset.
int64_t ss_tracked_allocation_count(void);
/// Frees made by tracked threads since the last reset.
int64_t ss_tracked_free_count(void);
/// pthread_mutex_lock / trylock calls made by tracked threads since the last reset.
int64_t ss_tracked_lock_count(void);
/// With SS_ALLOCATION_TRAP=1 set, counted calls raise SIGTRAP only while armed (e.g. after warm-up).
void ss_arm_trap(int armed);
/// Zeroes all counters.
void ss_reset_tracked_counts(void);
/// 1 when this file's malloc is the one the process uses (checked by a probe allocation).
int ss_allocation_counter_is_active(void);
#endif

// Test-only: counts heap allocations and pthread mutex acquisitions made by threads that opted in,
// per channel: each probe opens its own, so probes in tests running in parallel stay independent.
// Linking this target into an executable replaces malloc & co. for the whole process (glibc only).
#ifndef SOUNDSTAGE_CALLOCATIONCOUNTER_H
#define SOUNDSTAGE_CALLOCATIONCOUNTER_H
#include <stdint.h>

/// A fresh channel (1...62) with zeroed counters.
int ss_allocation_channel_open(void);
/// The calling thread counts into `channel` from now on; 0 stops counting.
void ss_track_current_thread(int channel);
/// Allocations (malloc, calloc, realloc, memalign family) counted into `channel` since its last reset.
int64_t ss_tracked_allocation_count(int channel);
/// Frees counted into `channel` since its last reset.
int64_t ss_tracked_free_count(int channel);
/// pthread_mutex_lock / trylock calls counted into `channel` since its last reset.
int64_t ss_tracked_lock_count(int channel);
/// With SS_ALLOCATION_TRAP=1 set, counted calls raise SIGTRAP only while armed (e.g. after warm-up).
void ss_arm_trap(int armed);
/// Zeroes `channel`'s counters.
void ss_reset_tracked_counts(int channel);
/// 1 when this file's malloc is the one the process uses (checked by a probe allocation).
int ss_allocation_counter_is_active(void);
/// 1 when built with the address or thread sanitizer (which own malloc; nothing is counted then).
int ss_allocation_counter_is_sanitized(void);
#endif

// Test-only malloc/pthread interposer. Forwards to glibc's __libc_* entry points and counts calls made
// by threads that opted in with ss_track_current_thread(channel), per channel, so tests running in
// parallel in one process never see each other's counts. Any thread may call anything here.
#define _GNU_SOURCE
#include "CAllocationCounter.h"
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <execinfo.h>
#include <signal.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

// Under the address or thread sanitizer the sanitizer owns malloc and pthread_mutex_lock: nothing is
// interposed and the counter reports itself inactive (the allocation tests run in the plain build).
#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define SS_SANITIZED 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SS_SANITIZED 1
#endif

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);
extern void __libc_free(void *);

#define SS_CHANNEL_COUNT 64
/// The channel the calling thread counts into; 0 = not tracked.
static _Thread_local int tracked;
static _Atomic int64_t allocations[SS_CHANNEL_COUNT];
static _Atomic int64_t frees[SS_CHANNEL_COUNT];
static _Atomic int64_t locks[SS_CHANNEL_COUNT];
static _Atomic int next_channel;

// SS_ALLOCATION_TRAP=1 in the environment raises SIGTRAP at each counted call while armed, so a
// debugger shows the offending stack (gdb -ex run -ex bt); =2 prints the stack to stderr instead.
static int trap_mode = -1;
static _Thread_local int self_testing;
static _Atomic int trap_armed;
static inline void maybe_trap(void) {
    if (trap_mode < 0) {
        const char *v = getenv("SS_ALLOCATION_TRAP");
        trap_mode = (v && (v[0] == '1' || v[0] == '2')) ? v[0] - '0' : 0;
    }
    if (!trap_mode || self_testing || !atomic_load(&trap_armed)) return;
    if (trap_mode == 1) {
        raise(SIGTRAP);
    } else {
        // SS_ALLOCATION_TRAP=2: print the stack to stderr and carry on.
        int was = tracked;
        tracked = 0;
        void *frames[32];
        int n = backtrace(frames, 32);
        backtrace_symbols_fd(frames, n, 2);
        write(2, "----\n", 5);
        tracked = was;
    }
}

static inline void count_alloc(void) {
    if (tracked) {
        atomic_fetch_add_explicit(&allocations[tracked], 1, memory_order_relaxed);
        maybe_trap();
    }
}

#ifndef SS_SANITIZED
void *malloc(size_t size) { count_alloc(); return __libc_malloc(size); }
void *calloc(size_t n, size_t size) { count_alloc(); return __libc_calloc(n, size); }
void *realloc(void *p, size_t size) { count_alloc(); return __libc_realloc(p, size); }
void *memalign(size_t alignment, size_t size) { count_alloc(); return __libc_memalign(alignment, size); }
void *aligned_alloc(size_t alignment, size_t size) { count_alloc(); return __libc_memalign(alignment, size); }
void *valloc(size_t size) { count_alloc(); return __libc_memalign(4096, size); }
int posix_memalign(void **out, size_t alignment, size_t size) {
    count_alloc();
    if (alignment < sizeof(void *) || (alignment & (alignment - 1)) != 0) return EINVAL;
    void *p = __libc_memalign(alignment, size);
    if (!p && size) return ENOMEM;
    *out = p;
    return 0;
}
void free(void *p) {
    if (p && tracked) atomic_fetch_add_explicit(&frees[tracked], 1, memory_order_relaxed);
    __libc_free(p);
}

typedef int (*mutex_fn)(pthread_mutex_t *);
static mutex_fn real_lock;
static mutex_fn real_trylock;

__attribute__((constructor)) static void resolve_pthread(void) {
    real_lock = (mutex_fn)dlsym(RTLD_NEXT, "pthread_mutex_lock");
    real_trylock = (mutex_fn)dlsym(RTLD_NEXT, "pthread_mutex_trylock");
}

int pthread_mutex_lock(pthread_mutex_t *m) {
    if (tracked) { atomic_fetch_add_explicit(&locks[tracked], 1, memory_order_relaxed); maybe_trap(); }
    if (!real_lock) resolve_pthread();
    return real_lock ? real_lock(m) : 0;
}
int pthread_mutex_trylock(pthread_mutex_t *m) {
    if (tracked) atomic_fetch_add_explicit(&locks[tracked], 1, memory_order_relaxed);
    if (!real_trylock) resolve_pthread();
    return real_trylock ? real_trylock(m) : 0;
}
#endif

int ss_allocation_counter_is_sanitized(void) {
#ifdef SS_SANITIZED
    return 1;
#else
    return 0;
#endif
}

/// Channel reserved for `ss_allocation_counter_is_active`; probes get 1 ... SELF_TEST_CHANNEL - 1.
#define SELF_TEST_CHANNEL (SS_CHANNEL_COUNT - 1)
static inline int valid(int channel) { return channel > 0 && channel < SELF_TEST_CHANNEL; }

int ss_allocation_channel_open(void) {
    // Reused round-robin; a process never has that many probes alive at once.
    int n = atomic_fetch_add(&next_channel, 1);
    int channel = 1 + n % (SELF_TEST_CHANNEL - 1);
    ss_reset_tracked_counts(channel);
    return channel;
}
void ss_track_current_thread(int channel) { tracked = valid(channel) ? channel : 0; }
void ss_arm_trap(int armed) { atomic_store(&trap_armed, armed); }
int64_t ss_tracked_allocation_count(int channel) { return valid(channel) ? atomic_load(&allocations[channel]) : 0; }
int64_t ss_tracked_free_count(int channel) { return valid(channel) ? atomic_load(&frees[channel]) : 0; }
int64_t ss_tracked_lock_count(int channel) { return valid(channel) ? atomic_load(&locks[channel]) : 0; }
void ss_reset_tracked_counts(int channel) {
    if (!valid(channel)) return;
    atomic_store(&allocations[channel], 0);
    atomic_store(&frees[channel], 0);
    atomic_store(&locks[channel], 0);
}
int ss_allocation_counter_is_active(void) {
    int was = tracked;
    tracked = SELF_TEST_CHANNEL;
    self_testing = 1;
    int64_t before = atomic_load(&allocations[SELF_TEST_CHANNEL]);
    void *volatile p = malloc(16);
    free(p);
    int64_t after = atomic_load(&allocations[SELF_TEST_CHANNEL]);
    tracked = was;
    self_testing = 0;
    return after > before;
}

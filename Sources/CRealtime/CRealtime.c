// Denormal control and clocks. Render side (flush-to-zero) and benchmarks (clocks).
#include "CRealtime.h"
#include <time.h>
#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#endif

uint64_t ss_enable_flush_to_zero(void) {
#if defined(__x86_64__) || defined(__i386__)
    // Bit 15 = flush-to-zero, bit 6 = denormals-are-zero.
    unsigned int previous = _mm_getcsr();
    _mm_setcsr(previous | 0x8040);
    return previous;
#elif defined(__aarch64__)
    uint64_t fpcr;
    __asm__ __volatile__("mrs %0, fpcr" : "=r"(fpcr));
    __asm__ __volatile__("msr fpcr, %0" : : "r"(fpcr | (1ULL << 24))); // FZ
    return fpcr;
#else
    return 0;
#endif
}

void ss_restore_floating_point_mode(uint64_t state) {
#if defined(__x86_64__) || defined(__i386__)
    _mm_setcsr((unsigned int)state);
#elif defined(__aarch64__)
    __asm__ __volatile__("msr fpcr, %0" : : "r"(state));
#else
    (void)state;
#endif
}

int64_t ss_thread_cpu_time_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int64_t ss_monotonic_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

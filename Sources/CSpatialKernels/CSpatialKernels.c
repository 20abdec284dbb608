// AVX2/FMA build of the HRTF convolution (see the header). The rest of the program keeps the x86-64
// baseline; this file's function is compiled for AVX2 and FMA by attribute and only called when the CPU
// has both.
#include "CSpatialKernels.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>

static int has_avx2;

__attribute__((constructor)) static void detect(void) {
    __builtin_cpu_init();
    has_avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}

int ss_hrtf_has_avx2(void) { return has_avx2; }

__attribute__((target("avx2,fma")))
void ss_hrtf_convolve_avx2(const float *xl, const float *xr, const float *hl, const float *hr, int64_t taps,
                           float *yl, float *yr, int64_t frames) {
    if (!has_avx2) return;
    const int64_t passes = (frames + 15) / 16 * 16;
    int64_t i = 0;
    // 32 frames per pass while they last (ten loads for eight multiply-adds per tap), then 16.
    for (; i + 32 <= passes; i += 32) {
        __m256 l0 = _mm256_setzero_ps(), l1 = _mm256_setzero_ps(), l2 = _mm256_setzero_ps(), l3 = _mm256_setzero_ps();
        __m256 r0 = _mm256_setzero_ps(), r1 = _mm256_setzero_ps(), r2 = _mm256_setzero_ps(), r3 = _mm256_setzero_ps();
        const float *pl = xl + i, *pr = xr + i;
        for (int64_t j = 0; j < taps; j++) {
            const __m256 cl = _mm256_broadcast_ss(hl + j);
            const __m256 cr = _mm256_broadcast_ss(hr + j);
            l0 = _mm256_fmadd_ps(cl, _mm256_loadu_ps(pl + j), l0);
            l1 = _mm256_fmadd_ps(cl, _mm256_loadu_ps(pl + j + 8), l1);
            l2 = _mm256_fmadd_ps(cl, _mm256_loadu_ps(pl + j + 16), l2);
            l3 = _mm256_fmadd_ps(cl, _mm256_loadu_ps(pl + j + 24), l3);
            r0 = _mm256_fmadd_ps(cr, _mm256_loadu_ps(pr + j), r0);
            r1 = _mm256_fmadd_ps(cr, _mm256_loadu_ps(pr + j + 8), r1);
            r2 = _mm256_fmadd_ps(cr, _mm256_loadu_ps(pr + j + 16), r2);
            r3 = _mm256_fmadd_ps(cr, _mm256_loadu_ps(pr + j + 24), r3);
        }
        _mm256_storeu_ps(yl + i, l0);
        _mm256_storeu_ps(yl + i + 8, l1);
        _mm256_storeu_ps(yl + i + 16, l2);
        _mm256_storeu_ps(yl + i + 24, l3);
        _mm256_storeu_ps(yr + i, r0);
        _mm256_storeu_ps(yr + i + 8, r1);
        _mm256_storeu_ps(yr + i + 16, r2);
        _mm256_storeu_ps(yr + i + 24, r3);
    }
    for (; i < passes; i += 16) {
        __m256 l0 = _mm256_setzero_ps(), l1 = _mm256_setzero_ps();
        __m256 r0 = _mm256_setzero_ps(), r1 = _mm256_setzero_ps();
        const float *pl = xl + i, *pr = xr + i;
        for (int64_t j = 0; j < taps; j++) {
            const __m256 cl = _mm256_broadcast_ss(hl + j);
            const __m256 cr = _mm256_broadcast_ss(hr + j);
            l0 = _mm256_fmadd_ps(cl, _mm256_loadu_ps(pl + j), l0);
            l1 = _mm256_fmadd_ps(cl, _mm256_loadu_ps(pl + j + 8), l1);
            r0 = _mm256_fmadd_ps(cr, _mm256_loadu_ps(pr + j), r0);
            r1 = _mm256_fmadd_ps(cr, _mm256_loadu_ps(pr + j + 8), r1);
        }
        _mm256_storeu_ps(yl + i, l0);
        _mm256_storeu_ps(yl + i + 8, l1);
        _mm256_storeu_ps(yr + i, r0);
        _mm256_storeu_ps(yr + i + 8, r1);
    }
}
#else
int ss_hrtf_has_avx2(void) { return 0; }

void ss_hrtf_convolve_avx2(const float *xl, const float *xr, const float *hl, const float *hr, int64_t taps,
                           float *yl, float *yr, int64_t frames) {
    (void)xl; (void)xr; (void)hl; (void)hr; (void)taps; (void)yl; (void)yr; (void)frames;
}
#endif

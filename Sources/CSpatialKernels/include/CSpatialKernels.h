// Vectorised inner loops of the 3D mixer that need instructions beyond the x86-64 baseline (AVX2 and
// FMA), chosen at run time. Render side: no memory, no locks, no system calls.
#ifndef SOUNDSTAGE_CSPATIALKERNELS_H
#define SOUNDSTAGE_CSPATIALKERNELS_H
#include <stdint.h>

/// Non-zero when this CPU runs `ss_hrtf_convolve_avx2` (x86-64 with AVX2 and FMA). Fixed when the
/// library loads; reading it never blocks.
int ss_hrtf_has_avx2(void);

/// Both ears' direct convolutions, as `HRTFConvolver.convolve` defines them:
/// yl[i] = Σⱼ hl[j]·xl[i + j] and yr[i] = Σⱼ hr[j]·xr[i + j] for i < frames rounded up to a multiple of
/// 16, the taps summed in order j = 0 … taps − 1 (fused multiply-adds; passes of 32 frames, then 16), so
/// every frame's sum is the same
/// whatever pass it falls in. Reads xl/xr up to index (frames rounded up) + taps − 2 and writes yl/yr up
/// to (frames rounded up) − 1. Only call when `ss_hrtf_has_avx2()`; otherwise it does nothing.
void ss_hrtf_convolve_avx2(const float *xl, const float *xr, const float *hl, const float *hr, int64_t taps,
                           float *yl, float *yr, int64_t frames);
#endif

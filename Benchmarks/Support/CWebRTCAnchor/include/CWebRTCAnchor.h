// SPDX-License-Identifier: GPL-3.0-or-later
// webrtc-audio-processing 0.3 (Debian's libwebrtc-audio-processing) behind a C interface, so VoiceBench
// can call the library's echo cancellers directly as anchors. Benchmark-only: the main package does not
// depend on it.
#ifndef CWEBRTC_ANCHOR_H
#define CWEBRTC_ANCHOR_H

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    /// EchoCancellation (AEC), high suppression, drift compensation off, stream delay given as 0.
    WEBRTC_ANCHOR_AEC = 0,
    /// The same with the extended filter and delay-agnostic mode (the delay estimated from the signals).
    WEBRTC_ANCHOR_AEC_EXTENDED = 1,
    /// EchoControlMobile (AECM), loud-speakerphone routing, comfort noise off, stream delay given as 0.
    /// AECM works at 16 kHz at most: above it the module resamples the input to 16 kHz and a second,
    /// empty module resamples the output back (both with the library's own resamplers), so the output
    /// carries nothing above 8 kHz.
    WEBRTC_ANCHOR_AECM = 2
} webrtc_anchor_kind;

typedef struct webrtc_anchor webrtc_anchor;

/// A processing module at `sample_rate` (8000, 16000, 32000 or 48000), mono, with the high-pass filter
/// and, when `noise_suppression` is non-zero, noise suppression at its default (moderate) level.
/// Returns NULL on failure and the library's error code in `*error`.
webrtc_anchor *webrtc_anchor_create(int sample_rate, webrtc_anchor_kind kind, int noise_suppression, int *error);

/// One 10 ms frame (sample_rate / 100 samples) of the far end and the microphone; writes the processed
/// microphone to `out`. Returns 0 or the library's error code.
int webrtc_anchor_process(webrtc_anchor *anchor, const float *far, const float *mic, float *out);

void webrtc_anchor_destroy(webrtc_anchor *anchor);

#ifdef __cplusplus
}
#endif

#endif

// SPDX-License-Identifier: GPL-3.0-or-later
#include "CWebRTCAnchor.h"

#include <webrtc/modules/audio_processing/include/audio_processing.h>

struct webrtc_anchor {
    webrtc::AudioProcessing *apm;
    webrtc::StreamConfig stream;
    // AECM runs at 16 kHz at most: above it, `apm` takes the scene's rate in and gives 16 kHz out (its own
    // resampler), and `upsampler`, a module with nothing enabled, takes that back to the scene's rate.
    webrtc::StreamConfig processed;
    webrtc::AudioProcessing *upsampler;
};

webrtc_anchor *webrtc_anchor_create(int sample_rate, webrtc_anchor_kind kind, int noise_suppression, int *error) {
    webrtc::Config config;
    const bool extended = kind == WEBRTC_ANCHOR_AEC_EXTENDED;
    config.Set<webrtc::ExtendedFilter>(new webrtc::ExtendedFilter(extended));
    config.Set<webrtc::DelayAgnostic>(new webrtc::DelayAgnostic(extended));
    webrtc::AudioProcessing *apm = webrtc::AudioProcessing::Create(config);
    int status = apm ? webrtc::AudioProcessing::kNoError : webrtc::AudioProcessing::kUnspecifiedError;
    webrtc::StreamConfig stream(sample_rate, 1);
    const bool resampled = kind == WEBRTC_ANCHOR_AECM && sample_rate > 16000;
    webrtc::StreamConfig processed(resampled ? 16000 : sample_rate, 1);
    webrtc::AudioProcessing *upsampler = nullptr;
    if (status == 0) {
        webrtc::ProcessingConfig processing = {{stream, processed, stream, processed}};
        status = apm->Initialize(processing);
    }
    if (status == 0 && resampled) {
        upsampler = webrtc::AudioProcessing::Create();
        webrtc::ProcessingConfig processing = {{processed, stream, processed, processed}};
        status = upsampler ? upsampler->Initialize(processing) : webrtc::AudioProcessing::kUnspecifiedError;
    }
    if (status == 0) status = apm->high_pass_filter()->Enable(true);
    if (status == 0 && noise_suppression) status = apm->noise_suppression()->Enable(true);
    if (status == 0 && kind == WEBRTC_ANCHOR_AECM) {
        status = apm->echo_control_mobile()->set_routing_mode(webrtc::EchoControlMobile::kLoudSpeakerphone);
        if (status == 0) status = apm->echo_control_mobile()->enable_comfort_noise(false);
        if (status == 0) status = apm->echo_control_mobile()->Enable(true);
    } else if (status == 0) {
        webrtc::EchoCancellation *aec = apm->echo_cancellation();
        status = aec->enable_drift_compensation(false);
        if (status == 0) status = aec->set_suppression_level(webrtc::EchoCancellation::kHighSuppression);
        if (status == 0) status = aec->Enable(true);
    }
    if (error) *error = status;
    if (status != 0) {
        delete apm;
        delete upsampler;
        return nullptr;
    }
    return new webrtc_anchor{apm, stream, processed, upsampler};
}

int webrtc_anchor_process(webrtc_anchor *anchor, const float *far, const float *mic, float *out) {
    float far_copy[480];
    const size_t frames = anchor->stream.num_frames();
    if (frames > 480) return webrtc::AudioProcessing::kBadDataLengthError;
    for (size_t n = 0; n < frames; n++) far_copy[n] = far[n];
    const float *far_channels[1] = {far_copy};
    float *far_out[1] = {far_copy};
    int status = anchor->apm->ProcessReverseStream(far_channels, anchor->stream, anchor->processed, far_out);
    if (status != 0) return status;
    // The delay is not given to the canceller: reported as 0 on every frame, as the API requires.
    status = anchor->apm->set_stream_delay_ms(0);
    if (status != 0) return status;
    const float *mic_channels[1] = {mic};
    if (!anchor->upsampler) {
        float *out_channels[1] = {out};
        return anchor->apm->ProcessStream(mic_channels, anchor->stream, anchor->stream, out_channels);
    }
    float low[160];
    float *low_channels[1] = {low};
    status = anchor->apm->ProcessStream(mic_channels, anchor->stream, anchor->processed, low_channels);
    if (status != 0) return status;
    const float *low_in[1] = {low};
    float *out_channels[1] = {out};
    return anchor->upsampler->ProcessStream(low_in, anchor->processed, anchor->stream, out_channels);
}

void webrtc_anchor_destroy(webrtc_anchor *anchor) {
    if (!anchor) return;
    delete anchor->apm;
    delete anchor->upsampler;
    delete anchor;
}

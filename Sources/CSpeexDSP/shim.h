// SpeexDSP C API (libspeexdsp-dev, BSD-3-Clause): the MDF acoustic echo canceller and the preprocessor
// (noise suppression, AGC) used by the voice processor. The headers are included as they are.
#ifndef SOUNDSTAGE_CSPEEXDSP_SHIM_H
#define SOUNDSTAGE_CSPEEXDSP_SHIM_H
#include <speex/speex_echo.h>
#include <speex/speex_preprocess.h>
#endif

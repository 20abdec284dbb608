// Rubber Band Library C API (librubberband-dev, GPL-2.0-or-later): real-time time stretching and pitch
// shifting for TimePitchKernel. Nothing here needs a wrapper; the header is included as it is.
#ifndef SOUNDSTAGE_CRUBBERBAND_SHIM_H
#define SOUNDSTAGE_CRUBBERBAND_SHIM_H
#include <rubberband/rubberband-c.h>
#endif

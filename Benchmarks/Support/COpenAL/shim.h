// OpenAL Soft (Debian's libopenal, pkg-config "openal", apt libopenal-dev): the benchmark-only system
// library for Tools/OpenALCompare. The extension prototypes (ALC_SOFT_loopback, ALC_SOFT_HRTF,
// AL_SOFT_deferred_updates) are exported by OpenAL Soft and declared when AL_ALEXT_PROTOTYPES is set.
#ifndef COPENAL_SHIM_H
#define COPENAL_SHIM_H
#define AL_ALEXT_PROTOTYPES 1
#include <AL/al.h>
#include <AL/alc.h>
#include <AL/alext.h>
#endif

// Counts what one thread does inside a window: Swift ARC operations (swift_retain / swift_release and
// their _n forms) and, through malloc-interposer's allocation hook, malloc calls.
//
// Why per thread: the engine runs its own threads (the disk streamer wakes every 3 ms and retains and
// releases), and package-benchmark's counters are process-wide, so they count those threads' work
// inside the measured window too. Only operations made on a thread between render_probe_begin() and
// render_probe_end() are counted here.
//
// The ARC hooks chain onto whatever the runtime's overridable entry points hold at begin() and are put
// back at end(); begin/end must pair on one thread. While they are installed the runtime's override
// gate is on for the whole process, which on Swift 6.3/Linux is the path with a known bridge-object
// bug (swiftlang/swift#87696), so keep the windows short and put only render calls inside them.
#ifndef SOUNDSTAGE_CRENDERPROBE_H
#define SOUNDSTAGE_CRENDERPROBE_H
#include <stdint.h>

/// Installs the ARC hooks, turns on the runtime's override gate and starts counting on this thread.
void render_probe_begin(void);
/// Stops counting on this thread and restores the previous entry points and gate state.
void render_probe_end(void);
/// Retains counted so far (swift_retain_n(n) counts n).
int64_t render_probe_retains(void);
/// Releases counted so far (swift_release_n(n) counts n).
int64_t render_probe_releases(void);
/// Allocations counted so far (needs render_probe_allocation_hook installed with
/// MallocInterposerSwift.setAllocationHook, and the interposer counting: package-benchmark turns it on
/// when a malloc metric is requested).
int64_t render_probe_mallocs(void);
/// malloc-interposer allocation hook: counts the allocation if the calling thread is in a window.
void render_probe_allocation_hook(intptr_t size);
#endif

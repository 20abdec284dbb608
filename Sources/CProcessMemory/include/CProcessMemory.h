// The C heap's own figures (glibc mallinfo2), for diagnostics on a control thread. Walks every arena
// under its lock: never call it from the render thread.
#ifndef SOUNDSTAGE_CPROCESSMEMORY_H
#define SOUNDSTAGE_CPROCESSMEMORY_H
#include <stdint.h>

typedef struct {
    /// Bytes in chunks handed out from the arenas and not yet freed.
    int64_t arena_in_use;
    /// Bytes free inside the arenas (held by malloc, not returned to the kernel).
    int64_t arena_free;
    /// Bytes in blocks served by their own mapping (large allocations).
    int64_t mapped;
} ss_heap_stats;

/// The current figures.
ss_heap_stats ss_heap_stats_now(void);

/// Returns the free pages malloc holds in its arenas to the kernel (glibc malloc_trim(0)). Returns 1
/// if memory was released. Walks every arena under its lock: a control-thread call, never a render one.
int ss_heap_trim(void);
#endif

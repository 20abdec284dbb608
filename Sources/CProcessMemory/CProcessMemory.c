// See include/CProcessMemory.h.
#include "CProcessMemory.h"
#include <malloc.h>

ss_heap_stats ss_heap_stats_now(void) {
    struct mallinfo2 info = mallinfo2();
    ss_heap_stats stats = {(int64_t)info.uordblks, (int64_t)info.fordblks, (int64_t)info.hblkhd};
    return stats;
}

int ss_heap_trim(void) { return malloc_trim(0); }

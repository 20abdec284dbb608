// Benchmark support. See CHeapStats.h.
#include "CHeapStats.h"

#include <malloc.h>

size_t cheapstats_in_use_bytes(void) {
    struct mallinfo2 info = mallinfo2();
    return info.uordblks + info.hblkhd;
}

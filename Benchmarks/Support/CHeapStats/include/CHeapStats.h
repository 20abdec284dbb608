// Benchmark support. The heap bytes glibc's malloc has handed out and not had back.
#ifndef CHEAPSTATS_H
#define CHEAPSTATS_H

#include <stddef.h>

/// mallinfo2(): uordblks + hblkhd (bytes in use in the arenas plus mmapped blocks).
size_t cheapstats_in_use_bytes(void);

#endif

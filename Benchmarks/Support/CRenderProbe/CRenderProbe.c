// See CRenderProbe.h. The ARC part uses the same technique as package-benchmark's SwiftRuntimeHooks:
// swap the runtime's `_swift_retain`-style function pointers for counting wrappers.
#include "CRenderProbe.h"
#include <stdatomic.h>
#include <stddef.h>

typedef struct HeapObject_s HeapObject;

extern HeapObject *(*_swift_retain)(HeapObject *);
extern void (*_swift_release)(HeapObject *);
extern HeapObject *(*_swift_retain_n)(HeapObject *, uint32_t);
extern void (*_swift_release_n)(HeapObject *, uint32_t);
extern _Bool _swift_enableSwizzlingOfAllocationAndRefCountingFunctions_forInstrumentsOnly __attribute__((weak));

// Initial-exec TLS: reading it never allocates, which matters inside the allocation hook.
static _Thread_local int counting __attribute__((tls_model("initial-exec")));

static _Atomic int64_t retains;
static _Atomic int64_t releases;
static _Atomic int64_t mallocs;

static HeapObject *(*saved_retain)(HeapObject *);
static void (*saved_release)(HeapObject *);
static HeapObject *(*saved_retain_n)(HeapObject *, uint32_t);
static void (*saved_release_n)(HeapObject *, uint32_t);
static _Bool saved_gate;
static int installed;

static HeapObject *probe_retain(HeapObject *object) {
    if (counting) atomic_fetch_add_explicit(&retains, 1, memory_order_relaxed);
    return saved_retain(object);
}

static void probe_release(HeapObject *object) {
    if (counting) atomic_fetch_add_explicit(&releases, 1, memory_order_relaxed);
    saved_release(object);
}

static HeapObject *probe_retain_n(HeapObject *object, uint32_t n) {
    if (counting) atomic_fetch_add_explicit(&retains, (int64_t)n, memory_order_relaxed);
    return saved_retain_n(object, n);
}

static void probe_release_n(HeapObject *object, uint32_t n) {
    if (counting) atomic_fetch_add_explicit(&releases, (int64_t)n, memory_order_relaxed);
    saved_release_n(object, n);
}

void render_probe_allocation_hook(intptr_t size) {
    (void)size;
    if (counting) atomic_fetch_add_explicit(&mallocs, 1, memory_order_relaxed);
}

void render_probe_begin(void) {
    if (!installed) {
        saved_retain = __atomic_load_n(&_swift_retain, __ATOMIC_ACQUIRE);
        saved_release = __atomic_load_n(&_swift_release, __ATOMIC_ACQUIRE);
        saved_retain_n = __atomic_load_n(&_swift_retain_n, __ATOMIC_ACQUIRE);
        saved_release_n = __atomic_load_n(&_swift_release_n, __ATOMIC_ACQUIRE);
        __atomic_store_n(&_swift_retain, probe_retain, __ATOMIC_RELEASE);
        __atomic_store_n(&_swift_release, probe_release, __ATOMIC_RELEASE);
        __atomic_store_n(&_swift_retain_n, probe_retain_n, __ATOMIC_RELEASE);
        __atomic_store_n(&_swift_release_n, probe_release_n, __ATOMIC_RELEASE);
        _Bool *gate = &_swift_enableSwizzlingOfAllocationAndRefCountingFunctions_forInstrumentsOnly;
        if (gate != NULL) {
            saved_gate = __atomic_load_n(gate, __ATOMIC_ACQUIRE);
            __atomic_store_n(gate, 1, __ATOMIC_RELEASE);
        }
        installed = 1;
    }
    counting = 1;
}

void render_probe_end(void) {
    counting = 0;
    if (!installed) return;
    _Bool *gate = &_swift_enableSwizzlingOfAllocationAndRefCountingFunctions_forInstrumentsOnly;
    if (gate != NULL) __atomic_store_n(gate, saved_gate, __ATOMIC_RELEASE);
    // The saved originals stay valid, so a thread still inside a wrapper finishes correctly.
    __atomic_store_n(&_swift_release_n, saved_release_n, __ATOMIC_RELEASE);
    __atomic_store_n(&_swift_retain_n, saved_retain_n, __ATOMIC_RELEASE);
    __atomic_store_n(&_swift_release, saved_release, __ATOMIC_RELEASE);
    __atomic_store_n(&_swift_retain, saved_retain, __ATOMIC_RELEASE);
    installed = 0;
}

int64_t render_probe_retains(void) { return atomic_load_explicit(&retains, memory_order_relaxed); }

int64_t render_probe_releases(void) { return atomic_load_explicit(&releases, memory_order_relaxed); }

int64_t render_probe_mallocs(void) { return atomic_load_explicit(&mallocs, memory_order_relaxed); }

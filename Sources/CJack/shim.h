// Non-variadic wrappers over libjack for Swift (jack_client_open is variadic and unavailable in Swift).
#ifndef SOUNDSTAGE_CJACK_SHIM_H
#define SOUNDSTAGE_CJACK_SHIM_H
#include <jack/jack.h>
#include <jack/types.h>
#include <jack/statistics.h>
#include <jack/transport.h>
#include <jack/metadata.h>
#include <jack/uuid.h>
#include <jack/session.h>
#include <jack/thread.h>
#include <sys/syscall.h>
#include <unistd.h>

/// Opens a client; when `server_name` is non-NULL the JackServerName option is added and the name passed.
static inline jack_client_t *jackshim_client_open(const char *name, jack_options_t options,
                                                  jack_status_t *status, const char *server_name) {
    if (server_name) {
        return jack_client_open(name, (jack_options_t)(options | JackServerName), status, server_name);
    }
    return jack_client_open(name, options, status);
}
/// The calling thread's kernel id (gettid, which Swift's Glibc module does not export). Async-signal-safe.
static inline int jackshim_thread_id(void) { return (int)syscall(SYS_gettid); }
#endif

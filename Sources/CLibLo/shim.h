// liblo 0.31 for Swift. Control side only. liblo's send/add macros are variadic (unavailable in
// Swift); use the typed lo_message_add_* functions and lo_send_message_from / lo_send_bundle_from
// instead. The socket helpers live in COSCSocket: this header includes no socket header, so the
// socket types and constants a Swift module sees stay Glibc's (a module map that includes
// <sys/socket.h> textually takes them over in whole-module builds, and `sockaddr_in` then is not the
// type FlyingSocks extends).
#ifndef SOUNDSTAGE_CLIBLO_SHIM_H
#define SOUNDSTAGE_CLIBLO_SHIM_H

#include <lo/lo.h>
#include <lo/lo_lowlevel.h>

/// The immediate timetag {0, 1} (LO_TT_IMMEDIATE is a compound-literal macro).
static inline lo_timetag loshim_tt_immediate(void) {
    lo_timetag t = {0U, 1U};
    return t;
}

/// Size in bytes of a blob argument as delivered in a handler's argv.
static inline int32_t loshim_arg_blob_size(const lo_arg *arg) { return arg->blob.size; }

/// First byte of a blob argument's data.
static inline const unsigned char *loshim_arg_blob_data(const lo_arg *arg) {
    return (const unsigned char *)&arg->blob.data;
}

#endif

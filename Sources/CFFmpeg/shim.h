// FFmpeg (libavformat, libavcodec, libavutil, libswresample) for the AudioFiles module, plus
// static inline wrappers for the function-like macros Swift cannot import and a log callback
// (Swift cannot write a C function that takes a va_list).
#ifndef SOUNDSTAGE_CFFMPEG_SHIM_H
#define SOUNDSTAGE_CFFMPEG_SHIM_H

#include <errno.h>
#include <stdarg.h>
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavformat/avio.h>
#include <libavutil/avutil.h>
#include <libavutil/channel_layout.h>
#include <libavutil/dict.h>
#include <libavutil/error.h>
#include <libavutil/mem.h>
#include <libavutil/opt.h>
#include <libavutil/samplefmt.h>
#include <libswresample/swresample.h>

/// AVERROR_EOF: end of stream.
static inline int cffmpeg_error_eof(void) { return AVERROR_EOF; }
/// AVERROR(EAGAIN): the codec needs input first, or output must be drained first.
static inline int cffmpeg_error_again(void) { return AVERROR(EAGAIN); }
/// AVERROR(ENOMEM).
static inline int cffmpeg_error_no_memory(void) { return AVERROR(ENOMEM); }
/// AVERROR(EIO).
static inline int cffmpeg_error_io(void) { return AVERROR(EIO); }
/// AVERROR_INVALIDDATA.
static inline int cffmpeg_error_invalid_data(void) { return AVERROR_INVALIDDATA; }
/// AVERROR_DECODER_NOT_FOUND.
static inline int cffmpeg_error_decoder_not_found(void) { return AVERROR_DECODER_NOT_FOUND; }
/// AVERROR_STREAM_NOT_FOUND.
static inline int cffmpeg_error_stream_not_found(void) { return AVERROR_STREAM_NOT_FOUND; }
/// AVERROR(errno) for an operating-system error code.
static inline int cffmpeg_error_from_errno(int code) { return AVERROR(code); }

/// AVSEEK_SIZE: the seek callback is asked for the stream size.
static inline int cffmpeg_seek_size(void) { return AVSEEK_SIZE; }
/// AVSEEK_FORCE: a flag OR-ed into `whence`, ignored by plain files.
static inline int cffmpeg_seek_force(void) { return AVSEEK_FORCE; }

/// Little-endian 32-bit value at `data` (AV_RL32), for AV_PKT_DATA_SKIP_SAMPLES side data.
static inline uint32_t cffmpeg_read_le32(const uint8_t *data) {
    return (uint32_t)data[0] | ((uint32_t)data[1] << 8) | ((uint32_t)data[2] << 16) | ((uint32_t)data[3] << 24);
}

/// Storage for the last error-level log line, one per thread. It lives in a function-local
/// static because each Swift file that calls a `static inline` function gets its own copy of it
/// (and of its statics): only FFmpegLibrary.swift may call the three log functions below.
static inline char *cffmpeg_log_line_storage(void) {
    static __thread char line[512];
    return line;
}

/// av_log callback: keeps the calling thread's last line of level AV_LOG_ERROR or more severe,
/// without the "[demuxer @ 0x…]" prefix; prints nothing.
static inline void cffmpeg_log_callback(void *context, int level, const char *format, va_list arguments) {
    if (level > AV_LOG_ERROR || format == NULL) return;
    int print_prefix = 0;
    av_log_format_line2(context, level, format, arguments, cffmpeg_log_line_storage(), 512, &print_prefix);
}

/// Routes FFmpeg's log through cffmpeg_log_callback (process-wide).
static inline void cffmpeg_install_log_callback(void) { av_log_set_callback(cffmpeg_log_callback); }

/// The calling thread's last stored line ("" when none); valid until the next FFmpeg call.
static inline const char *cffmpeg_last_log_line(void) { return cffmpeg_log_line_storage(); }

/// Forgets the calling thread's stored line.
static inline void cffmpeg_clear_log_line(void) { cffmpeg_log_line_storage()[0] = 0; }

#endif

/* err.c — the error record and status names. */
#include "core.h"

#include <stdio.h>
#include <string.h>

const char *ts_status_name(ts_status s)
{
    static const char *const names[] = {
        [TS_OK] = "ok",
        [TS_ERR_INVALID_ARG] = "invalid argument",
        [TS_ERR_INVALID_MODEL] = "invalid model",
        [TS_ERR_PARSE] = "parse error",
        [TS_ERR_SHAPE] = "shape error",
        [TS_ERR_UNSUPPORTED] = "unsupported",
        [TS_ERR_OOM] = "out of memory",
        [TS_ERR_IO] = "i/o error",
        [TS_ERR_RUNTIME] = "runtime error",
        [TS_ERR_TOOLCHAIN] = "toolchain error",
        [TS_ERR_INTERNAL] = "internal error",
    };
    if ((unsigned)s >= sizeof names / sizeof names[0]) return "unknown status";
    return names[s];
}

ts_status ts_err_vset(ts_err *err, ts_status code, const char *fmt, va_list ap)
{
    if (err && err->code == TS_OK) {
        err->code = code;
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    }
    return code;
}

ts_status ts_err_set(ts_err *err, ts_status code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    ts_err_vset(err, code, fmt, ap);
    va_end(ap);
    return code;
}

void ts_err_prefix(ts_err *err, const char *fmt, ...)
{
    if (!err) return;
    char pre[256], old[sizeof err->msg];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(pre, sizeof pre, fmt, ap);
    va_end(ap);
    memcpy(old, err->msg, sizeof old);
    size_t n = strlen(pre);
    if (n >= sizeof err->msg) n = sizeof err->msg - 1;
    memcpy(err->msg, pre, n);
    /* the tail of the old message may be cut to fit; that is the intent */
    size_t rest = strnlen(old, sizeof old);
    if (rest > sizeof err->msg - 1 - n) rest = sizeof err->msg - 1 - n;
    memcpy(err->msg + n, old, rest);
    err->msg[n + rest] = 0;
}

void ts_err_clear(ts_err *err)
{
    if (!err) return;
    err->code = TS_OK;
    err->msg[0] = 0;
}

/* cache.c — the public face of the cpu target's compiled-code cache
 * (backend/cpu/jit.h, jit_cache.c): what `tessera cache` and a Python
 * user inspect and clean. */
#include "backend/cpu/jit.h"

static ts_jit_opts jit_opts(const ts_session_opts *o)
{
    ts_jit_opts jo = {0};
    if (o) jo.cache_dir = o->cache_dir;
    return jo;
}

ts_status ts_cache_dir(const ts_session_opts *o, char *buf, size_t cap, ts_err *err)
{
    if (!buf || !cap) return ts_err_set(err, TS_ERR_INVALID_ARG, "ts_cache_dir: no buffer");
    ts_jit_opts jo = jit_opts(o);
    return ts_jit_cache_dir(&jo, buf, cap, err);
}

ts_status ts_cache_usage(const ts_session_opts *o, int64_t *entries, int64_t *bytes, ts_err *err)
{
    if (!entries || !bytes) return ts_err_set(err, TS_ERR_INVALID_ARG, "ts_cache_usage: NULL argument");
    ts_jit_opts jo = jit_opts(o);
    return ts_jit_cache_usage(&jo, entries, bytes, err);
}

int64_t ts_cache_limit_bytes(void) { return ts_jit_cache_limit_bytes(); }

ts_status ts_cache_trim(const ts_session_opts *o, int64_t max_bytes, int64_t *removed, ts_err *err)
{
    if (max_bytes < 0) return ts_err_set(err, TS_ERR_INVALID_ARG, "ts_cache_trim: max_bytes %lld < 0", (long long)max_bytes);
    ts_jit_opts jo = jit_opts(o);
    return ts_jit_cache_trim(&jo, max_bytes, NULL, removed, err);
}

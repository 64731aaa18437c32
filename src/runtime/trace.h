/* trace.h — Chrome trace events for `--profile FILE`.
 *
 * A trace collects complete events (name, category, start, duration,
 * thread) from any number of threads at once and writes them as
 * {"traceEvents":[...]}, which chrome://tracing and Perfetto
 * (ui.perfetto.dev) load. Times are microseconds on the ts_now_us clock
 * (core/clock.h).
 *
 *     double t0 = ts_now_us();
 *     kernel(bufs, syms, ith, nth);
 *     ts_trace_add(tr, name, "kernel", t0, ts_now_us() - t0, ith);
 *
 * Recording is lock-free: one atomic increment claims a slot in chunked
 * storage (a mutex is taken only when a new chunk of 4096 events is
 * needed). Strings are not copied — recording stays a few stores — so a
 * name must stay valid until the trace is written: literals, names owned by
 * a compiled program, or copies made with ts_trace_intern. */
#ifndef TS_TRACE_H
#define TS_TRACE_H

#include "core/core.h"

typedef struct ts_trace ts_trace;

ts_status ts_trace_new(ts_trace **out, ts_err *err);
void ts_trace_free(ts_trace *t);  /* NULL is a no-op */

/* Record one event; safe from several threads at once. t == NULL does
 * nothing (so callers need no "profiling on?" test). An event that cannot
 * be stored (out of memory, or more than TS_TRACE_MAX_EVENTS) is counted
 * in ts_trace_dropped and left out. cat may be NULL. */
void ts_trace_add(ts_trace *t, const char *name, const char *cat, double start_us, double dur_us, int tid);

/* A copy of s owned by the trace (for names built at run time); NULL on
 * out of memory. Thread-safe (takes the trace's mutex). */
const char *ts_trace_intern(ts_trace *t, const char *s);

/* Events recorded and dropped so far. */
size_t ts_trace_count(const ts_trace *t);
size_t ts_trace_dropped(const ts_trace *t);

/* Write the JSON file (names escaped; invalid UTF-8 becomes U+FFFD). Call
 * when no thread is recording. Errors: TS_ERR_IO with the reason. */
ts_status ts_trace_write(const ts_trace *t, const char *path, ts_err *err);

#define TS_TRACE_MAX_EVENTS ((size_t)1 << 26)

#endif

/* trace.c — Chrome trace events: lock-free slots in chunks, a JSON writer.
 *
 * Slot k lives in chunk k / CHUNK at index k % CHUNK. The chunk table has a
 * fixed size (TS_TRACE_MAX_EVENTS / CHUNK entries), so it never moves and
 * readers need no lock; a missing chunk is allocated under the mutex and
 * published with a release store. Each event carries a `ready` flag set
 * last, so the writer skips a slot whose chunk allocation failed or whose
 * recorder was still mid-store (the writer's contract says no one records
 * during a write; the flag makes a violation harmless rather than garbage). */
#include "runtime/trace.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#define CHUNK 4096
#define NCHUNKS (TS_TRACE_MAX_EVENTS / CHUNK)

typedef struct event {
    const char *name, *cat;
    double start, dur;
    int tid;
    _Atomic int ready;
} event;

struct ts_trace {
    _Atomic size_t next;      /* slots claimed */
    _Atomic size_t dropped;
    pthread_mutex_t mu;       /* chunk allocation and interning */
    ts_arena *strings;
    _Atomic(event *) chunks[NCHUNKS];
};

ts_status ts_trace_new(ts_trace **out, ts_err *err)
{
    *out = NULL;
    ts_trace *t = ts_mem_zalloc(sizeof *t);
    ts_arena *a = ts_arena_new();
    if (!t || !a) {
        ts_mem_free(t);
        ts_arena_free(a);
        return ts_err_set(err, TS_ERR_OOM, "trace: out of memory");
    }
    t->strings = a;
    pthread_mutex_init(&t->mu, NULL);
    *out = t;
    return TS_OK;
}

void ts_trace_free(ts_trace *t)
{
    if (!t) return;
    for (size_t i = 0; i < NCHUNKS; i++) ts_mem_free(atomic_load(&t->chunks[i]));
    ts_arena_free(t->strings);
    pthread_mutex_destroy(&t->mu);
    ts_mem_free(t);
}

/* ---- recording ------------------------------------------------------------- */

static event *chunk_for(ts_trace *t, size_t c)
{
    event *e = atomic_load_explicit(&t->chunks[c], memory_order_acquire);
    if (e) return e;
    pthread_mutex_lock(&t->mu);
    e = atomic_load_explicit(&t->chunks[c], memory_order_relaxed);
    if (!e) {
        e = ts_mem_zalloc(sizeof *e * CHUNK);
        if (e) atomic_store_explicit(&t->chunks[c], e, memory_order_release);
    }
    pthread_mutex_unlock(&t->mu);
    return e;
}

void ts_trace_add(ts_trace *t, const char *name, const char *cat, double start_us, double dur_us, int tid)
{
    if (!t) return;
    size_t k = atomic_fetch_add_explicit(&t->next, 1, memory_order_relaxed);
    event *c = k < TS_TRACE_MAX_EVENTS ? chunk_for(t, k / CHUNK) : NULL;
    if (!c) {
        atomic_fetch_add_explicit(&t->dropped, 1, memory_order_relaxed);
        return;
    }
    event *e = &c[k % CHUNK];
    e->name = name ? name : "";
    e->cat = cat;
    e->start = start_us;
    e->dur = dur_us;
    e->tid = tid;
    atomic_store_explicit(&e->ready, 1, memory_order_release);
}

const char *ts_trace_intern(ts_trace *t, const char *s)
{
    if (!t || !s) return NULL;
    pthread_mutex_lock(&t->mu);
    const char *p = ts_arena_strdup(t->strings, s);
    pthread_mutex_unlock(&t->mu);
    return p;
}

size_t ts_trace_count(const ts_trace *t)
{
    if (!t) return 0;
    size_t n = atomic_load(&((ts_trace *)t)->next), d = ts_trace_dropped(t);
    return n - d;
}

size_t ts_trace_dropped(const ts_trace *t) { return t ? atomic_load(&((ts_trace *)t)->dropped) : 0; }

/* ---- writing --------------------------------------------------------------- */

/* The length of the valid UTF-8 sequence at s (1-4), or 0 if invalid
 * (overlong forms, surrogates and code points above U+10FFFF included). */
static int utf8_len(const unsigned char *s)
{
    unsigned c = s[0];
    int n = c < 0x80 ? 1 : (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 0;
    if (n <= 1) return n;
    unsigned cp = c & (0x7F >> n);
    for (int i = 1; i < n; i++) {
        if ((s[i] & 0xC0) != 0x80) return 0;
        cp = cp << 6 | (s[i] & 0x3F);
    }
    static const unsigned min[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < min[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
    return n;
}

/* A JSON string literal for s. */
static void put_string(FILE *f, const char *s)
{
    fputc('"', f);
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        if (*p == '"' || *p == '\\') {
            fputc('\\', f);
            fputc(*p++, f);
        } else if (*p < 0x20) {
            fprintf(f, "\\u%04x", *p++);
        } else {
            int n = utf8_len(p);
            if (n == 0) {
                fputs("\\ufffd", f);
                p++;
            } else {
                fwrite(p, 1, (size_t)n, f);
                p += n;
            }
        }
    }
    fputc('"', f);
}

static void put_event(FILE *f, const event *e)
{
    fputs(",\n{\"name\":", f);
    put_string(f, e->name);
    if (e->cat) {
        fputs(",\"cat\":", f);
        put_string(f, e->cat);
    }
    /* %.3f: nanosecond resolution. A NaN or infinity would not be JSON
     * (and a negative duration confuses viewers): write 0 instead */
    double ts = isfinite(e->start) ? e->start : 0;
    double dur = isfinite(e->dur) && e->dur >= 0 ? e->dur : 0;
    fprintf(f, ",\"ph\":\"X\",\"ts\":%.3f,\"dur\":%.3f,\"pid\":1,\"tid\":%d}", ts, dur, e->tid);
}

ts_status ts_trace_write(const ts_trace *t, const char *path, ts_err *err)
{
    FILE *f = fopen(path, "w");
    if (!f) return ts_err_set(err, TS_ERR_IO, "trace: cannot write '%s': %s", path, strerror(errno));
    fputs("{\"traceEvents\":[", f);
    fputs("\n{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":1,\"args\":{\"name\":\"tessera\"}}", f);
    size_t n = t ? atomic_load(&((ts_trace *)t)->next) : 0;
    if (n > TS_TRACE_MAX_EVENTS) n = TS_TRACE_MAX_EVENTS;
    for (size_t k = 0; k < n; k++) {
        const event *c = atomic_load_explicit(&((ts_trace *)t)->chunks[k / CHUNK], memory_order_acquire);
        if (!c) {
            k += CHUNK - 1 - k % CHUNK;  /* the whole chunk was dropped */
            continue;
        }
        const event *e = &c[k % CHUNK];
        if (atomic_load_explicit(&e->ready, memory_order_acquire)) put_event(f, e);
    }
    fputs("\n],\"displayTimeUnit\":\"ms\"}\n", f);
    bool bad = ferror(f) != 0;
    int saved = errno;
    if (fclose(f) != 0 && !bad) {
        bad = true;
        saved = errno;
    }
    if (bad) return ts_err_set(err, TS_ERR_IO, "trace: writing '%s' failed: %s", path, strerror(saved));
    return TS_OK;
}

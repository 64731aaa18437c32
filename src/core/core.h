/* core.h — errors, allocation and arenas: what every layer of tessera uses.
 * Internal to the library (module prefix ts_). */
#ifndef TS_CORE_H
#define TS_CORE_H

#include "tessera.h"

#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#if defined(__GNUC__) || defined(__clang__)
#define TS_PRINTF(f, a) __attribute__((format(printf, f, a)))
#define TS_UNUSED __attribute__((unused))
#else
#define TS_PRINTF(f, a)
#define TS_UNUSED
#endif

/* ---- errors ---------------------------------------------------------- */

/* Record an error and return its code, so callers write
 *     return ts_err_set(err, TS_ERR_SHAPE, "dot: %d != %d", a, b);
 * err may be NULL. The first error wins: a message already recorded is
 * kept, so the innermost (most precise) failure reaches the user. */
ts_status ts_err_set(ts_err *err, ts_status code, const char *fmt, ...) TS_PRINTF(3, 4);
ts_status ts_err_vset(ts_err *err, ts_status code, const char *fmt, va_list ap);
/* Put context in front of an existing message ("node %5 (dot): " + msg). */
void ts_err_prefix(ts_err *err, const char *fmt, ...) TS_PRINTF(2, 3);
void ts_err_clear(ts_err *err);

#define TS_TRY(expr) do { ts_status ts_try_s_ = (expr); \
    if (ts_try_s_ != TS_OK) return ts_try_s_; } while (0)

/* SQLite-style invariants: assert in debug builds, and in release builds
 * evaluate to the condition so the caller can return TS_ERR_INTERNAL. */
#ifdef NDEBUG
#define TS_ALWAYS(x) (x)
#define TS_NEVER(x) (x)
#else
#include <assert.h>
#define TS_ALWAYS(x) ((x) ? 1 : (assert(0 && #x), 0))
#define TS_NEVER(x) ((x) ? (assert(0 && #x), 1) : 0)
#endif

/* ---- memory ---------------------------------------------------------- */

/* All host memory goes through the hook of ts_set_allocator. */
void *ts_mem_alloc(size_t n);          /* uninitialised; NULL on failure */
void *ts_mem_zalloc(size_t n);         /* zeroed */
void *ts_mem_realloc(void *p, size_t n);
void ts_mem_free(void *p);
char *ts_mem_strdup(const char *s);
/* Blocks whose address is a multiple of 64, a cache line: a vector load
 * from a buffer that starts mid-line splits lines (malloc's large blocks
 * start 16 bytes into a page; softmax 8192x1024 ran 40% slower on them,
 * D48). Freed only by ts_mem_free_aligned. */
void *ts_mem_alloc_aligned(size_t n);
void *ts_mem_zalloc_aligned(size_t n);
void ts_mem_free_aligned(void *p);
/* The same for large buffers the kernels stream through (packed weights,
 * a run's arena and workspace): from TS_MEM_HUGE_MIN bytes on, the block
 * starts on a 2 MiB boundary and is advised for transparent huge pages
 * where the system has them, so that one TLB entry covers 2 MiB, not 4
 * KiB (D75); TESSERA_NO_HUGE_PAGES set in the environment turns it off.
 * Also freed by ts_mem_free_aligned. */
#define TS_MEM_HUGE_MIN ((size_t)2 << 20)
void *ts_mem_alloc_huge(size_t n);

/* Overflow-checked size arithmetic: false on overflow. */
bool ts_size_mul(size_t a, size_t b, size_t *out);
bool ts_size_add(size_t a, size_t b, size_t *out);
bool ts_i64_mul(int64_t a, int64_t b, int64_t *out);
bool ts_i64_add(int64_t a, int64_t b, int64_t *out);

/* An arena owns many small objects that die together (a graph's nodes,
 * values, attributes and strings). Allocations are zeroed. Cleanups run in
 * reverse order of registration when the arena is freed. */
typedef struct ts_arena ts_arena;
ts_arena *ts_arena_new(void);
void ts_arena_free(ts_arena *a);
void *ts_arena_alloc(ts_arena *a, size_t n);
void *ts_arena_array(ts_arena *a, size_t count, size_t elem);  /* checked */
char *ts_arena_strdup(ts_arena *a, const char *s);
char *ts_arena_strndup(ts_arena *a, const char *s, size_t n);
/* Run fn(p) when the arena dies. Returns false (and runs nothing) on OOM. */
bool ts_arena_defer(ts_arena *a, void (*fn)(void *), void *p);

/* A growable byte buffer for building text. Fails sticky: after an
 * allocation failure `oom` is set and further appends do nothing. */
typedef struct ts_buf {
    char *data;
    size_t len, cap;
    bool oom;
} ts_buf;
void ts_buf_puts(ts_buf *b, const char *s);
void ts_buf_putn(ts_buf *b, const char *s, size_t n);
void ts_buf_printf(ts_buf *b, const char *fmt, ...) TS_PRINTF(2, 3);
void ts_buf_free(ts_buf *b);

#endif

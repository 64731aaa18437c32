/* mem.c — the allocation hook, checked size arithmetic, arenas, buffers. */
/* madvise's MADV_HUGEPAGE is outside POSIX */
#define _DEFAULT_SOURCE
#include "core.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

/* ---- the hook --------------------------------------------------------- */

static void *default_alloc(void *ud, void *ptr, size_t n)
{
    (void)ud;
    if (n == 0) {
        free(ptr);
        return NULL;
    }
    return realloc(ptr, n);
}

static ts_alloc_fn hook = default_alloc;
static void *hook_ud;

void ts_set_allocator(ts_alloc_fn fn, void *ud)
{
    hook = fn ? fn : default_alloc;
    hook_ud = fn ? ud : NULL;
}

void *ts_mem_alloc(size_t n) { return hook(hook_ud, NULL, n ? n : 1); }
void *ts_mem_realloc(void *p, size_t n) { return hook(hook_ud, p, n ? n : 1); }
void ts_mem_free(void *p) { if (p) hook(hook_ud, p, 0); }

/* The hook's block starts before the returned address and its pointer is
 * kept in the 8 bytes just below it: the hook's memory is at least
 * 8-aligned, so the gap up to the next multiple of 64 is 8 to 64 bytes. */
void *ts_mem_alloc_aligned(size_t n)
{
    size_t total;   /* at least one usable byte, as ts_mem_alloc gives */
    if (!ts_size_add(n ? n : 1, 64, &total)) return NULL;
    char *raw = ts_mem_alloc(total);
    if (!raw) return NULL;
    char *p = (char *)(((uintptr_t)raw + 64) & ~(uintptr_t)63);
    memcpy(p - sizeof raw, &raw, sizeof raw);
    return p;
}

void *ts_mem_alloc_huge(size_t n)
{
    const size_t page = (size_t)2 << 20;
    size_t total;
    if (n < TS_MEM_HUGE_MIN || getenv("TESSERA_NO_HUGE_PAGES")) return ts_mem_alloc_aligned(n);
    /* up to a page of address space is skipped; pages never touched are
     * never backed, so it costs no memory */
    if (!ts_size_add(n, page + sizeof(char *), &total)) return NULL;
    char *raw = ts_mem_alloc(total);
    if (!raw) return NULL;
    char *p = (char *)(((uintptr_t)raw + sizeof raw + page - 1) & ~(uintptr_t)(page - 1));
    memcpy(p - sizeof raw, &raw, sizeof raw);
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    /* advice only: where it is refused (no THP) the pages stay 4 KiB */
    (void)madvise(p, n / page * page, MADV_HUGEPAGE);
#endif
    return p;
}

void *ts_mem_zalloc_aligned(size_t n)
{
    void *p = ts_mem_alloc_aligned(n);
    if (p) memset(p, 0, n ? n : 1);
    return p;
}

void ts_mem_free_aligned(void *p)
{
    if (!p) return;
    char *raw;
    memcpy(&raw, (char *)p - sizeof raw, sizeof raw);
    ts_mem_free(raw);
}

void *ts_mem_zalloc(size_t n)
{
    void *p = ts_mem_alloc(n);
    if (p) memset(p, 0, n ? n : 1);
    return p;
}

char *ts_mem_strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *p = ts_mem_alloc(n);
    if (p) memcpy(p, s, n);
    return p;
}

/* ---- checked arithmetic ---------------------------------------------- */

bool ts_size_mul(size_t a, size_t b, size_t *out) { return !__builtin_mul_overflow(a, b, out); }
bool ts_size_add(size_t a, size_t b, size_t *out) { return !__builtin_add_overflow(a, b, out); }
bool ts_i64_mul(int64_t a, int64_t b, int64_t *out) { return !__builtin_mul_overflow(a, b, out); }
bool ts_i64_add(int64_t a, int64_t b, int64_t *out) { return !__builtin_add_overflow(a, b, out); }

/* ---- arenas ------------------------------------------------------------ */

typedef struct chunk {
    struct chunk *next;
    size_t used, cap;
    max_align_t data[];
} chunk;

typedef struct cleanup {
    struct cleanup *next;
    void (*fn)(void *);
    void *p;
} cleanup;

struct ts_arena {
    chunk *head;
    cleanup *cleanups;
};

ts_arena *ts_arena_new(void) { return ts_mem_zalloc(sizeof(ts_arena)); }

void ts_arena_free(ts_arena *a)
{
    if (!a) return;
    for (cleanup *c = a->cleanups; c;) {
        cleanup *next = c->next;
        c->fn(c->p);
        c = next;  /* the record itself lives in a chunk */
    }
    for (chunk *c = a->head; c;) {
        chunk *next = c->next;
        ts_mem_free(c);
        c = next;
    }
    ts_mem_free(a);
}

void *ts_arena_alloc(ts_arena *a, size_t n)
{
    const size_t align = sizeof(max_align_t);
    if (n > SIZE_MAX - align) return NULL;
    n = (n + align - 1) / align * align;
    if (n == 0) n = align;
    chunk *c = a->head;
    if (!c || c->cap - c->used < n) {
        size_t cap = n > 16384 ? n : 16384;
        c = ts_mem_alloc(sizeof(chunk) + cap);
        if (!c) return NULL;
        c->cap = cap;
        c->used = 0;
        if (a->head && n > 4096) {
            /* a big object gets its own chunk behind the current one, so the
             * current chunk's free space is not wasted */
            c->next = a->head->next;
            a->head->next = c;
        } else {
            c->next = a->head;
            a->head = c;
        }
    }
    void *p = (char *)c->data + c->used;
    c->used += n;
    memset(p, 0, n);
    return p;
}

void *ts_arena_array(ts_arena *a, size_t count, size_t elem)
{
    size_t n;
    if (!ts_size_mul(count, elem, &n)) return NULL;
    return ts_arena_alloc(a, n);
}

char *ts_arena_strndup(ts_arena *a, const char *s, size_t n)
{
    char *p = ts_arena_alloc(a, n + 1);
    if (p) {
        memcpy(p, s, n);
        p[n] = 0;
    }
    return p;
}

char *ts_arena_strdup(ts_arena *a, const char *s) { return ts_arena_strndup(a, s, strlen(s)); }

bool ts_arena_defer(ts_arena *a, void (*fn)(void *), void *p)
{
    cleanup *c = ts_arena_alloc(a, sizeof *c);
    if (!c) return false;
    c->fn = fn;
    c->p = p;
    c->next = a->cleanups;
    a->cleanups = c;
    return true;
}

/* ---- text buffers ------------------------------------------------------ */

static bool buf_reserve(ts_buf *b, size_t extra)
{
    if (b->oom) return false;
    size_t need;
    if (!ts_size_add(b->len, extra + 1, &need)) {
        b->oom = true;
        return false;
    }
    if (need <= b->cap) return true;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < need) {
        if (!ts_size_mul(cap, 2, &cap)) {
            b->oom = true;
            return false;
        }
    }
    char *p = ts_mem_realloc(b->data, cap);
    if (!p) {
        b->oom = true;
        return false;
    }
    b->data = p;
    b->cap = cap;
    return true;
}

void ts_buf_putn(ts_buf *b, const char *s, size_t n)
{
    if (!buf_reserve(b, n)) return;
    memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = 0;
}

void ts_buf_puts(ts_buf *b, const char *s) { ts_buf_putn(b, s, strlen(s)); }

void ts_buf_printf(ts_buf *b, const char *fmt, ...)
{
    char small[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    if ((size_t)n < sizeof small) {
        ts_buf_putn(b, small, (size_t)n);
        return;
    }
    if (!buf_reserve(b, (size_t)n)) return;
    va_start(ap, fmt);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

void ts_buf_free(ts_buf *b)
{
    ts_mem_free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
    b->oom = false;
}

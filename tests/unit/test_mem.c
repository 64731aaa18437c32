/* test_mem.c — cache-line aligned blocks (ts_mem_alloc_aligned, D48): the
 * address is a multiple of 64 for every size, under the default hook and
 * under a hook whose blocks start 8 bytes past a multiple of 16; the whole
 * block is usable (ASan watches the edges) and freed (LeakSanitizer);
 * zeroed blocks are zero; an impossible size is NULL, not a wrapped
 * request; host tensors' data is aligned. ts_mem_alloc_huge (D75): from
 * TS_MEM_HUGE_MIN bytes a 2 MiB boundary, below it a cache line, the
 * whole block usable, freed by ts_mem_free_aligned. */
#include "check.h"
#include "core/core.h"
#include "core/tensor.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* A hook that returns blocks 8 bytes past a 16-byte boundary: the worst
 * alignment the documented contract (at least 8) allows. The raw block's
 * start is kept 16 bytes below what it returns. */
static int live;

static void *odd_hook(void *ud, void *ptr, size_t n)
{
    (void)ud;
    if (ptr && n) return NULL;   /* no resizing: nothing here asks for it */
    if (ptr) {
        char *raw;
        memcpy(&raw, (char *)ptr - 16, sizeof raw);
        free(raw);
        live--;
        return NULL;
    }
    char *raw = malloc(n + 64);
    if (!raw) return NULL;
    char *p = (char *)(((uintptr_t)raw + 32) & ~(uintptr_t)15) + 8;
    memcpy(p - 16, &raw, sizeof raw);
    live++;
    return p;
}

static void check_sizes(const char *hook)
{
    static const size_t sizes[] = {0, 1, 7, 63, 64, 65, 4096, 100000, (size_t)33 << 20};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        size_t n = sizes[i];
        unsigned char *p = ts_mem_alloc_aligned(n);
        CHECK_MSG(p && (uintptr_t)p % 64 == 0, "%s hook, %zu bytes: %p", hook, n, (void *)p);
        if (!p) continue;
        memset(p, 0xA5, n);   /* the whole block is ours */
        CHECK(n == 0 || (p[0] == 0xA5 && p[n - 1] == 0xA5));
        ts_mem_free_aligned(p);
        unsigned char *z = ts_mem_zalloc_aligned(n);
        CHECK(z && (uintptr_t)z % 64 == 0);
        size_t nonzero = 0;
        for (size_t k = 0; z && k < n; k++) nonzero += z[k] != 0;
        CHECK_MSG(nonzero == 0, "%s hook, %zu bytes: %zu nonzero", hook, n, nonzero);
        ts_mem_free_aligned(z);
    }
    CHECK(ts_mem_alloc_aligned(SIZE_MAX - 8) == NULL);
    ts_mem_free_aligned(NULL);
    static const size_t big[] = {1, 4096, TS_MEM_HUGE_MIN - 1, TS_MEM_HUGE_MIN, TS_MEM_HUGE_MIN + 1,
                                 (size_t)5 << 20};
    for (size_t i = 0; i < sizeof big / sizeof big[0]; i++) {
        size_t n = big[i];
        unsigned char *p = ts_mem_alloc_huge(n);
        const uintptr_t align = n >= TS_MEM_HUGE_MIN ? (uintptr_t)2 << 20 : 64;
        CHECK_MSG(p && (uintptr_t)p % align == 0, "%s hook, huge %zu bytes: %p", hook, n, (void *)p);
        if (!p) continue;
        memset(p, 0x5A, n);
        CHECK(p[0] == 0x5A && p[n - 1] == 0x5A);
        ts_mem_free_aligned(p);
    }
    CHECK(ts_mem_alloc_huge(SIZE_MAX - 8) == NULL);
}

static void test_default_hook(void) { check_sizes("default"); }

static void test_odd_hook(void)
{
    ts_set_allocator(odd_hook, NULL);
    void *probe = ts_mem_alloc(100);
    CHECK((uintptr_t)probe % 16 == 8);   /* the hook really is misaligned */
    ts_mem_free(probe);
    check_sizes("odd");
    CHECK_MSG(live == 0, "%d blocks not given back", live);
    ts_set_allocator(NULL, NULL);
}

/* Tensors get their data from the aligned allocator: a kernel reading a
 * model input or writing an output starts on a cache line, and from
 * TS_MEM_HUGE_MIN bytes on a 2 MiB boundary (huge pages, D82); the data
 * starts zeroed. */
static void test_tensor_data(void)
{
    ts_err err = {0};
    const int64_t shapes[][2] = {{1, 1}, {3, 5}, {8192, 1024}};
    for (int i = 0; i < 3; i++) {
        ts_tensor *t = NULL;
        CHECK(ts_tensor_new(TS_DTYPE_F32, 2, shapes[i], &t, &err) == TS_OK);
        const uintptr_t align = shapes[i][0] * shapes[i][1] * 4 >= (int64_t)TS_MEM_HUGE_MIN ? (uintptr_t)2 << 20 : 64;
        CHECK_MSG(t && (uintptr_t)ts_tensor_data(t) % align == 0, "%lld x %lld: %p", (long long)shapes[i][0],
                  (long long)shapes[i][1], t ? ts_tensor_data(t) : NULL);
        size_t nonzero = 0;
        const unsigned char *d = t ? ts_tensor_data(t) : NULL;
        for (size_t k = 0; d && k < ts_tensor_nbytes(t); k++) nonzero += d[k] != 0;
        CHECK(nonzero == 0);
        ts_tensor *c = NULL;
        CHECK(t && ts_tensor_clone(t, &c, &err) == TS_OK);
        CHECK(c && (uintptr_t)ts_tensor_data(c) % align == 0);
        ts_tensor_release(c);
        ts_tensor_release(t);
    }
}

int main(void)
{
    test_default_hook();
    test_odd_hook();
    test_tensor_data();
    return check_report();
}

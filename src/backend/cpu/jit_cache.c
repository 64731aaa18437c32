/* jit_cache.c — what the JIT cache holds, and trimming it to a size.
 *
 * An entry is KEY.so (its checked trailer included: jit_entry.h, D89)
 * with its sources KEY.0.c, KEY.1.c, ... (KEY: 32 hex digits, jit.h), or
 * a unit many modules link, KEY.o (sealed the same way) with KEY.0.c; the
 * trailer lives inside the object, so an entry has no other file to count
 * or remove. Only names of that form are counted or removed: the
 * directory may be shared with files that are not ours (a user pointing
 * TESSERA_CACHE_DIR at a folder with other things in it loses nothing).
 * An entry's age is its shared object's mtime; a cache hit touches it
 * (ts_jit_cache_touch), so trimming removes the least recently used.
 * Removing an entry another process has loaded is safe (the mapping stays
 * until it unloads); one that is being looked up at that moment is rebuilt. */
#define _XOPEN_SOURCE 700
#include "backend/cpu/jit.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

typedef struct entry {
    char key[TS_JIT_KEY_HEX + 1];
    int64_t bytes;    /* the object and its sources */
    int64_t mtime_ns; /* the object's (.so or .o) */
} entry;

/* The key of a cache file name (KEY.so, KEY.o or KEY.N.c), or false;
 * *is_so: an object, not a source. */
static bool parse_name(const char *name, char key[TS_JIT_KEY_HEX + 1], bool *is_so)
{
    for (int i = 0; i < TS_JIT_KEY_HEX; i++) {
        char c = name[i];
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
    }
    const char *rest = name + TS_JIT_KEY_HEX;
    *is_so = strcmp(rest, ".so") == 0 || strcmp(rest, ".o") == 0;
    if (!*is_so) {
        if (rest[0] != '.' || !(rest[1] >= '0' && rest[1] <= '9')) return false;
        const char *p = rest + 1;
        while (*p >= '0' && *p <= '9') p++;
        if (strcmp(p, ".c") != 0) return false;
    }
    memcpy(key, name, TS_JIT_KEY_HEX);
    key[TS_JIT_KEY_HEX] = 0;
    return true;
}

static int find(const entry *es, int n, const char *key)
{
    for (int i = 0; i < n; i++)
        if (strcmp(es[i].key, key) == 0) return i;
    return -1;
}

/* Every entry of dir, into *out (caller frees). A missing directory is an
 * empty cache. Sources without a .so (a build in progress, or one that
 * failed) count as an entry of age 0, so trimming removes them first only
 * when they are old enough to be left over: see trim. */
static ts_status scan(const char *dir, entry **out, int *count, ts_err *err)
{
    *out = NULL;
    *count = 0;
    DIR *d = opendir(dir);
    if (!d) {
        if (errno == ENOENT) return TS_OK;
        return ts_err_set(err, TS_ERR_IO, "JIT cache: cannot read '%s': %s", dir, strerror(errno));
    }
    entry *es = NULL;
    int n = 0, cap = 0;
    ts_status st = TS_OK;
    for (struct dirent *e; (e = readdir(d));) {
        char key[TS_JIT_KEY_HEX + 1], path[PATH_MAX];
        bool is_so;
        if (!parse_name(e->d_name, key, &is_so)) continue;
        if (snprintf(path, sizeof path, "%s/%s", dir, e->d_name) >= (int)sizeof path) continue;
        struct stat sb;
        if (lstat(path, &sb) != 0 || !S_ISREG(sb.st_mode)) continue;
        int i = find(es, n, key);
        if (i < 0) {
            if (n == cap) {
                int nc = cap ? 2 * cap : 64;
                entry *ne = ts_mem_realloc(es, sizeof *es * (size_t)nc);
                if (!ne) {
                    st = ts_err_set(err, TS_ERR_OOM, "JIT cache: out of memory");
                    break;
                }
                es = ne;
                cap = nc;
            }
            i = n++;
            memcpy(es[i].key, key, sizeof key);
            es[i].bytes = 0;
            es[i].mtime_ns = 0;
        }
        es[i].bytes += (int64_t)sb.st_size;
        if (is_so) es[i].mtime_ns = (int64_t)sb.st_mtim.tv_sec * 1000000000 + sb.st_mtim.tv_nsec;
    }
    closedir(d);
    if (st != TS_OK) {
        ts_mem_free(es);
        return st;
    }
    *out = es;
    *count = n;
    return TS_OK;
}

ts_status ts_jit_cache_usage(const ts_jit_opts *o, int64_t *entries, int64_t *bytes, ts_err *err)
{
    char dir[PATH_MAX];
    TS_TRY(ts_jit_cache_dir(o, dir, sizeof dir, err));
    entry *es;
    int n;
    TS_TRY(scan(dir, &es, &n, err));
    *entries = n;
    *bytes = 0;
    for (int i = 0; i < n; i++) *bytes += es[i].bytes;
    ts_mem_free(es);
    return TS_OK;
}

static int by_age(const void *a, const void *b)
{
    const entry *x = a, *y = b;
    return x->mtime_ns < y->mtime_ns ? -1 : x->mtime_ns > y->mtime_ns;
}

/* Removes KEY.so or KEY.o first (so no reader finds sources without
 * their object and takes them for a build in progress), then KEY.0.c,
 * KEY.1.c, ... up to the first that is missing. A module already linked
 * with a removed KEY.o keeps its own copy of what it used. */
static void remove_entry(const char *dir, const char *key)
{
    char path[PATH_MAX];
    if (snprintf(path, sizeof path, "%s/%s.so", dir, key) < (int)sizeof path) unlink(path);
    if (snprintf(path, sizeof path, "%s/%s.o", dir, key) < (int)sizeof path) unlink(path);
    for (int i = 0;; i++) {
        if (snprintf(path, sizeof path, "%s/%s.%d.c", dir, key, i) >= (int)sizeof path) break;
        if (unlink(path) != 0) break;
    }
}

ts_status ts_jit_cache_trim(const ts_jit_opts *o, int64_t max_bytes, const char *keep, int64_t *removed,
                            ts_err *err)
{
    char dir[PATH_MAX];
    if (removed) *removed = 0;
    TS_TRY(ts_jit_cache_dir(o, dir, sizeof dir, err));
    entry *es;
    int n;
    TS_TRY(scan(dir, &es, &n, err));
    int64_t total = 0;
    for (int i = 0; i < n; i++) total += es[i].bytes;
    qsort(es, (size_t)n, sizeof *es, by_age);
    /* Sources without an object have age 0 and so sort first; one younger
     * than a minute may be a build another process is running now: skip
     * it (it is small, and the next trim takes it if it was left over). */
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    for (int i = 0; i < n && total > max_bytes; i++) {
        if (keep && strcmp(es[i].key, keep) == 0) continue;
        if (es[i].mtime_ns == 0) {
            char path[PATH_MAX];
            struct stat sb;
            if (snprintf(path, sizeof path, "%s/%s.0.c", dir, es[i].key) < (int)sizeof path &&
                stat(path, &sb) == 0 && now.tv_sec - sb.st_mtim.tv_sec < 60)
                continue;
        }
        remove_entry(dir, es[i].key);
        total -= es[i].bytes;
        if (removed) ++*removed;
    }
    ts_mem_free(es);
    return TS_OK;
}

void ts_jit_cache_touch(const char *so_path)
{
    /* Best effort: a read-only cache still serves hits; it just ages by
     * build time instead of use. */
    (void)utimensat(AT_FDCWD, so_path, NULL, 0);
}

int64_t ts_jit_cache_limit_bytes(void)
{
    const char *e = getenv("TESSERA_CACHE_MAX_MB");
    if (e && *e) {
        char *end;
        errno = 0;
        long long mb = strtoll(e, &end, 10);
        /* 0 or garbage: no limit is not offered, since an unbounded cache
         * is what this exists to prevent; an invalid value falls back to
         * the default rather than failing a compile. */
        if (!errno && !*end && mb > 0 && mb < (INT64_MAX >> 20)) return (int64_t)mb << 20;
    }
    return (int64_t)TS_JIT_CACHE_DEFAULT_MB << 20;
}

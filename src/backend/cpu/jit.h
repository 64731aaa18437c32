/* jit.h — C source to a loaded shared object, through the system C
 * compiler, with an on-disk cache.
 *
 *     const char *src[] = {"int answer(void) { return 42; }"};
 *     ts_jit_module *m = NULL;
 *     bool hit;
 *     TS_TRY(ts_jit_compile(NULL, 1, src, &m, &hit, NULL, err));
 *     int (*answer)(void) = (int (*)(void))ts_jit_sym(m, "answer");
 *     ...
 *     ts_jit_free(m);
 *
 * n translation units are compiled to objects in parallel (one compiler
 * process each, at most `jobs` at a time) and linked into one shared
 * object, or taken from the cache. The cache key is the SHA-256 (first 128
 * bits, 32 hex digits) of: a format version, the compiler's identity (its
 * resolved path and the first line of `cc --version`, found once per
 * process), the flags, the host CPU's model and feature flags when the
 * flags say -march=native / -mcpu=native, and the sources. The cache
 * directory holds KEY.so and the sources as KEY.0.c, KEY.1.c, ... (the
 * shared object's debug info points at them). KEY.so ends in a trailer
 * with the length and SHA-256 of the object before it (jit_entry.h).
 *
 * The compiler runs without a shell (posix_spawn; flags are split on
 * spaces, so a path or flag cannot inject a command). Every cache write
 * is atomic and durable: a temporary file in the cache directory, written
 * whole, fsync'ed, renamed onto its name, then the directory fsync'ed; so
 * concurrent processes never see half a file, and a crash leaves the old
 * file, the new one or none. A cached object is checked (read, never
 * mapped) before it is loaded: one that is cut short, altered, lacks its
 * trailer or does not load is rebuilt as on a miss, never loaded, so a
 * damaged cache cannot crash the process (dlopen of a cut-short file is
 * SIGBUS). */
#ifndef TS_JIT_H
#define TS_JIT_H

#include "core/core.h"

typedef struct ts_jit_module ts_jit_module;

/* Every field may be 0/NULL for its default; a NULL ts_jit_opts means all
 * defaults. */
typedef struct ts_jit_opts {
    const char *cc;         /* NULL: $TESSERA_CC, else "cc". One program (a name found on
                             * $PATH, or a path); no arguments. */
    const char *flags;      /* NULL: $TESSERA_CFLAGS, else TS_JIT_DEFAULT_FLAGS. -fPIC, -c,
                             * -shared and -lm are added where they belong. */
    const char *cache_dir;  /* NULL: $TESSERA_CACHE_DIR, else $XDG_CACHE_HOME/tessera,
                             * else $HOME/.cache/tessera */
    int jobs;               /* parallel compiler processes; <= 0: number of online cores */
    bool light;             /* the units' kernels are all tiny (D145): with the default flags,
                             * they compile at -O1 (TS_JIT_LIGHT_FLAGS); the shared unit not */
} ts_jit_opts;

/* -mprefer-vector-width=512: gcc's tuning for Intel's AVX-512 cores keeps
 * auto-vectorized loops at 256 bits; the generated row and elementwise
 * kernels then ran at half the width the hand-written contractions use
 * (D58). It changes nothing where the machine lacks AVX-512. */
#define TS_JIT_DEFAULT_FLAGS "-O3 -march=native -mprefer-vector-width=512 -std=c11 -fno-math-errno -fno-trapping-math"
/* A program of tiny kernels (the ONNX node tests, a model's shape
 * arithmetic): -O3's vectorizer costs more compile time than such
 * kernels ever run (D145). gcc and clang take the last -O. */
#define TS_JIT_LIGHT_FLAGS TS_JIT_DEFAULT_FLAGS " -O1"
#define TS_JIT_KEY_HEX 32

/* Compile (or load from the cache) n >= 1 translation units into one
 * module. *hit says whether the cache served it (may be NULL); *ms, the
 * wall time of the call (may be NULL). Errors: TS_ERR_TOOLCHAIN for a
 * missing compiler ("C compiler 'X' not found (set TESSERA_CC, or run with
 * --target interp)"), a failing compile or link (with the compiler's first
 * error lines) or an object that does not load; TS_ERR_IO when the cache
 * directory cannot be made, written or synced (a full disk: "JIT cache:
 * cannot write 'PATH': No space left on device", no temporary file left),
 * or is writable by anyone (loading code from it would run whatever
 * another user put there); TS_ERR_OOM. A damaged cache entry is no error:
 * it is rebuilt (*hit false).
 * Thread-safe. */
ts_status ts_jit_compile(const ts_jit_opts *o, int n, const char *const *sources, ts_jit_module **out,
                         bool *hit, double *ms, ts_err *err);

/* As ts_jit_compile, with one more unit, `shared` (NULL: none), that
 * many modules have in common (the runtime templates, D112): it is
 * compiled once, with -ffunction-sections, into a cached object KEY.o
 * (sealed and checked like a .so, jit_entry.h) and linked into each
 * module that names it (--gc-sections keeps what the module calls), so
 * a module's build compiles only its own units. The module's key covers
 * the shared unit's. The object is statically linked: a module does not
 * depend on KEY.o once built, and trimming KEY.o costs only its rebuild.
 * When KEY.o must be built, it compiles in parallel with the units. */
ts_status ts_jit_compile_shared(const ts_jit_opts *o, const char *shared, int n, const char *const *sources,
                                ts_jit_module **out, bool *hit, double *ms, ts_err *err);

/* Whether the toolchain works at all: compiles (or loads from the cache)
 * a one-function module and calls it. TS_OK, or ts_jit_compile's error.
 * Tells a missing or broken compiler from generated code it rejects. */
ts_status ts_jit_probe(const ts_jit_opts *o, ts_err *err);

/* The address of an exported symbol, or NULL if absent. */
void *ts_jit_sym(const ts_jit_module *m, const char *name);

/* The shared object's path in the cache (its sources are next to it). */
const char *ts_jit_path(const ts_jit_module *m);

/* Unloads (dlclose) and frees. NULL is a no-op. */
void ts_jit_free(ts_jit_module *m);

/* The cache key of these sources under these options, as 32 hex digits
 * and a NUL: the file name stem in the cache (for tests and tools). Runs
 * the compiler's --version the first time for each compiler. */
ts_status ts_jit_key(const ts_jit_opts *o, int n, const char *const *sources, char key[TS_JIT_KEY_HEX + 1],
                     ts_err *err);

/* The cache directory these options use (not created). */
ts_status ts_jit_cache_dir(const ts_jit_opts *o, char *buf, size_t cap, ts_err *err);

/* ---- cache maintenance (jit_cache.c) ----
 * After each build the cache is trimmed to ts_jit_cache_limit_bytes(),
 * least recently used entries first (a hit marks its entry used); the new
 * entry is never the one removed. Only files named like cache entries are
 * counted or removed; an entry's bytes are its files' sizes, the .so's
 * trailer included. */
#define TS_JIT_CACHE_DEFAULT_MB 1024

/* $TESSERA_CACHE_MAX_MB in bytes when it is a positive integer, else the
 * default. */
int64_t ts_jit_cache_limit_bytes(void);

/* The entries (compiled modules) in the cache and their bytes, sources
 * included. A cache directory that does not exist yet is empty. */
ts_status ts_jit_cache_usage(const ts_jit_opts *o, int64_t *entries, int64_t *bytes, ts_err *err);

/* Removes least recently used entries until at most max_bytes remain
 * (0: all), except the entry `keep` (a key, or NULL); *removed counts them
 * (may be NULL). */
ts_status ts_jit_cache_trim(const ts_jit_opts *o, int64_t max_bytes, const char *keep, int64_t *removed,
                            ts_err *err);

/* Marks the shared object at so_path as just used (best effort). */
void ts_jit_cache_touch(const char *so_path);

#endif

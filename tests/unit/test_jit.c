/* test_jit.c — C to a loaded module: compile and call; the second compile
 * is a cache hit and faster; two units linked; a unit shared by modules,
 * compiled once; compiler errors, a missing
 * compiler, link and load errors; a corrupt cached object is rebuilt; the
 * key follows flags and sources; the cache directory is made private and a
 * world-writable one refused; concurrent compiles of one key; allocation
 * failures; and no temporary file is ever left behind. Everything happens
 * in a fresh directory under $TMPDIR (TESSERA_CACHE_DIR), never in $HOME. */
#include "check.h"
#include "test_files.h"
#include "backend/cpu/jit.h"
#include "core/core.h"
#include "core/sha256.h"

#include <dirent.h>
#include <fcntl.h>
#include <time.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- helpers ------------------------------------------------------------- */

static char root[256];

static const ts_jit_opts fast = {.flags = "-O1 -std=c11"};

static bool exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}


typedef int (*int_fn)(int);

/* ---- the hash --------------------------------------------------------------- */

static void test_sha256(void)
{
    const char *in[] = {"", "abc", "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"};
    const char *want[] = {
        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1",
    };
    for (int i = 0; i < 3; i++) {
        ts_sha256 s;
        ts_sha256_init(&s);
        for (const char *p = in[i]; *p; p++) ts_sha256_update(&s, p, 1);  /* byte by byte */
        unsigned char d[32];
        ts_sha256_final(&s, d);
        char hex[65];
        for (int k = 0; k < 32; k++) snprintf(hex + 2 * k, 3, "%02x", d[k]);
        CHECK_STR(hex, want[i]);
    }
}

/* ---- compile, hit, call ---------------------------------------------------- */

static void test_compile_and_hit(void)
{
    const char *src[] = {"int answer(int x) { return 2 * x + 1; }\n"};
    ts_jit_module *m = NULL;
    bool hit = true;
    double ms1 = 0, ms2 = 0;
    ts_err err = {0};
    CHECK_MSG(ts_jit_compile(&fast, 1, src, &m, &hit, &ms1, &err) == TS_OK, "%s", err.msg);
    CHECK(!hit && m);
    int_fn f = m ? (int_fn)ts_jit_sym(m, "answer") : NULL;
    CHECK(f && f(20) == 41);
    CHECK(ts_jit_sym(m, "no_such_symbol") == NULL);
    /* the sources sit next to the object, named by the key */
    char key[TS_JIT_KEY_HEX + 1], path[512];
    CHECK(ts_jit_key(&fast, 1, src, key, &err) == TS_OK && strlen(key) == TS_JIT_KEY_HEX);
    snprintf(path, sizeof path, "%s/%s.so", root, key);
    CHECK_STR(ts_jit_path(m), path);
    snprintf(path, sizeof path, "%s/%s.0.c", root, key);
    CHECK(exists(path));
    ts_jit_free(m);

    CHECK(ts_jit_compile(&fast, 1, src, &m, &hit, &ms2, &err) == TS_OK);
    CHECK(hit);
    CHECK_MSG(ms2 < ms1, "hit %.2f ms, miss %.2f ms", ms2, ms1);
    printf("jit: one tiny unit: compile %.1f ms, cache hit %.2f ms\n", ms1, ms2);
    f = m ? (int_fn)ts_jit_sym(m, "answer") : NULL;
    CHECK(f && f(1) == 3);
    ts_jit_free(m);
    ts_jit_free(NULL);

    /* default flags (-O3 -march=native) work too, and hit/ms may be NULL */
    CHECK_MSG(ts_jit_compile(NULL, 1, src, &m, NULL, NULL, &err) == TS_OK, "%s", err.msg);
    ts_jit_free(m);
}

static void test_two_units(void)
{
    const char *src[] = {
        "int twice(int);\nint quad(int x) { return twice(twice(x)); }\n",
        "int twice(int x) { return 2 * x; }\n",
    };
    for (int jobs = 1; jobs <= 2; jobs++) {
        ts_jit_opts o = fast;
        o.jobs = jobs;
        o.flags = jobs == 1 ? "-O1 -std=c11" : "-O2 -std=c11";  /* a different key: a real build */
        ts_jit_module *m = NULL;
        bool hit = true;
        double ms = 0;
        ts_err err = {0};
        CHECK_MSG(ts_jit_compile(&o, 2, src, &m, &hit, &ms, &err) == TS_OK, "%s", err.msg);
        CHECK(!hit);
        int_fn q = m ? (int_fn)ts_jit_sym(m, "quad") : NULL;
        CHECK(q && q(3) == 12);
        printf("jit: two units, %d job%s: %.1f ms\n", jobs, jobs > 1 ? "s" : "", ms);
        ts_jit_free(m);
    }
}

/* ---- a unit many modules share ---------------------------------------------- */

/* A file's inode: a rebuild renames a new file onto the name. */
static int64_t inode(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (int64_t)st.st_ino : -1;
}

/* The shared unit is compiled once into KEY.o and linked into each module
 * that names it; a second module reuses the object (not rebuilt); a
 * damaged object is rebuilt; a module built once loads without it; a
 * different shared text is a different module key; a shared unit that
 * does not compile is an error naming it. */
static void test_shared_unit(void)
{
    const char *shared = "int shared_twice(int x) { return 2 * x; }\nint shared_unused(int x) { return x - 1; }\n";
    const char *a[] = {"int shared_twice(int);\nint use_a(int x) { return shared_twice(x) + 1; }\n"};
    const char *b[] = {"int shared_twice(int);\nint use_b(int x) { return shared_twice(x) + 2; }\n",
                       "int other_b(int x) { return x; }\n"};
    ts_jit_opts o = fast;
    o.flags = "-O1 -std=c11 -DSHARED_TEST";   /* keys of its own */
    char skey[TS_JIT_KEY_HEX + 1], obj[512];
    ts_err err = {0};
    CHECK(ts_jit_key(&o, 1, &shared, skey, &err) == TS_OK);
    snprintf(obj, sizeof obj, "%s/%s.o", root, skey);
    CHECK(!exists(obj));
    ts_jit_module *m = NULL;
    bool hit = true;
    CHECK_MSG(ts_jit_compile_shared(&o, shared, 1, a, &m, &hit, NULL, &err) == TS_OK, "%s", err.msg);
    CHECK(!hit && exists(obj));
    int_fn f = m ? (int_fn)ts_jit_sym(m, "use_a") : NULL;
    CHECK(f && f(5) == 11);
    ts_jit_free(m);
    /* another module: the object is reused, not rebuilt */
    const int64_t ino = inode(obj);
    CHECK_MSG(ts_jit_compile_shared(&o, shared, 2, b, &m, &hit, NULL, &err) == TS_OK, "%s", err.msg);
    CHECK(!hit);
    f = m ? (int_fn)ts_jit_sym(m, "use_b") : NULL;
    CHECK(f && f(5) == 12);
    ts_jit_free(m);
    char path[512];
    snprintf(path, sizeof path, "%s/%s.0.c", root, skey);
    CHECK(exists(path) && inode(obj) == ino);
    /* damaged: rebuilt as on a miss by the next module that needs it */
    FILE *fp = fopen(obj, "r+b");
    CHECK(fp != NULL);
    if (fp) {
        fseek(fp, 100, SEEK_SET);
        fputc(0x5a, fp);
        fclose(fp);
    }
    const char *c[] = {"int shared_twice(int);\nint use_c(int x) { return shared_twice(x) + 3; }\n"};
    CHECK_MSG(ts_jit_compile_shared(&o, shared, 1, c, &m, &hit, NULL, &err) == TS_OK, "%s", err.msg);
    f = m ? (int_fn)ts_jit_sym(m, "use_c") : NULL;
    CHECK(f && f(5) == 13);
    ts_jit_free(m);
    CHECK(exists(obj) && inode(obj) != ino);
    /* a module already built loads without the object */
    CHECK(unlink(obj) == 0);
    CHECK(ts_jit_compile_shared(&o, shared, 1, a, &m, &hit, NULL, &err) == TS_OK && hit);
    ts_jit_free(m);
    CHECK(!exists(obj));
    /* the shared text is part of the module's key */
    char k1[TS_JIT_KEY_HEX + 1];
    const char *shared2 = "int shared_twice(int x) { return x + x; }\n";
    CHECK(ts_jit_compile_shared(&o, shared2, 1, a, &m, &hit, NULL, &err) == TS_OK && !hit);
    f = m ? (int_fn)ts_jit_sym(m, "use_a") : NULL;
    CHECK(f && f(5) == 11);
    ts_jit_free(m);
    CHECK(ts_jit_key(&o, 1, a, k1, &err) == TS_OK);   /* without a shared unit: no such module built */
    snprintf(path, sizeof path, "%s/%s.so", root, k1);
    CHECK(!exists(path));
    /* a shared unit that does not compile: the error names its file */
    const char *bad = "int shared_bad(void) { return nope; }\n";
    char bkey[TS_JIT_KEY_HEX + 1];
    CHECK(ts_jit_key(&o, 1, &bad, bkey, &err) == TS_OK);
    m = (ts_jit_module *)1;
    ts_status s = ts_jit_compile_shared(&o, bad, 1, a, &m, NULL, NULL, &err);
    CHECK_MSG(s == TS_ERR_TOOLCHAIN && m == NULL && strstr(err.msg, bkey) && strstr(err.msg, "nope"), "%s", err.msg);
}

/* ---- errors ------------------------------------------------------------------ */

static void expect_error(const ts_jit_opts *o, int n, const char **src, ts_status code, const char *frag1,
                         const char *frag2)
{
    ts_jit_module *m = (ts_jit_module *)1;
    ts_err err = {0};
    ts_status s = ts_jit_compile(o, n, src, &m, NULL, NULL, &err);
    CHECK_MSG(s == code, "got %s: %s", ts_status_name(s), err.msg);
    CHECK(m == NULL);
    CHECK_MSG(strstr(err.msg, frag1) != NULL, "'%s' lacks '%s'", err.msg, frag1);
    if (frag2) CHECK_MSG(strstr(err.msg, frag2) != NULL, "'%s' lacks '%s'", err.msg, frag2);
}

static void test_errors(void)
{
    const char *bad[] = {"int f(void) { return 1 }\n"};
    expect_error(&fast, 1, bad, TS_ERR_TOOLCHAIN, "error", "expected");
    ts_err err = {0};
    char key[TS_JIT_KEY_HEX + 1], path[512];
    ts_jit_key(&fast, 1, bad, key, &err);
    snprintf(path, sizeof path, "%s/%s.so", root, key);
    CHECK(!exists(path));
    snprintf(path, sizeof path, "%s/%s.0.c", root, key);
    CHECK(exists(path));  /* kept for the user to look at */

    /* an error in the second of two units names it */
    const char *bad2[] = {"int ok(void) { return 1; }\n", "int g(void) { return undeclared; }\n"};
    expect_error(&fast, 2, bad2, TS_ERR_TOOLCHAIN, ".1.c", "undeclared");

    const char *dup[] = {"int same(void) { return 1; }\n", "int same(void) { return 2; }\n"};
    expect_error(&fast, 2, dup, TS_ERR_TOOLCHAIN, "the link", "same");

    const char *undef[] = {"int missing_fn(void);\nint call(void) { return missing_fn(); }\n"};
    expect_error(&fast, 1, undef, TS_ERR_TOOLCHAIN, "cannot load", "missing_fn");

    ts_jit_opts o = fast;
    o.cc = "/nonexistent/cc";
    const char *ok[] = {"int x;\n"};
    expect_error(&o, 1, ok, TS_ERR_TOOLCHAIN,
                 "C compiler '/nonexistent/cc' not found (set TESSERA_CC, or run with --target interp)", NULL);
    o.cc = "tessera-no-such-compiler";
    expect_error(&o, 1, ok, TS_ERR_TOOLCHAIN, "'tessera-no-such-compiler' not found", NULL);
    setenv("TESSERA_CC", "/nonexistent", 1);
    expect_error(&fast, 1, ok, TS_ERR_TOOLCHAIN, "C compiler '/nonexistent' not found", NULL);
    CHECK(ts_jit_key(&fast, 1, ok, key, &err) == TS_ERR_TOOLCHAIN);
    unsetenv("TESSERA_CC");

    expect_error(&fast, 0, ok, TS_ERR_INVALID_ARG, "0 translation units", NULL);
    const char *null_src[] = {NULL};
    expect_error(&fast, 1, null_src, TS_ERR_INVALID_ARG, "is NULL", NULL);
    o = fast;
    o.flags = "-O1 -fno-such-flag-at-all";
    expect_error(&o, 1, ok, TS_ERR_TOOLCHAIN, "no-such-flag", NULL);
}

/* ---- the cache ------------------------------------------------------------------ */

static void test_corrupt(void)
{
    const char *src[] = {"int seven(int x) { return 7 + x; }\n"};
    ts_jit_module *m = NULL;
    bool hit;
    ts_err err = {0};
    CHECK(ts_jit_compile(&fast, 1, src, &m, &hit, NULL, &err) == TS_OK && !hit);
    char so[512];
    snprintf(so, sizeof so, "%s", ts_jit_path(m));
    ts_jit_free(m);
    /* replace (not overwrite: the old one might still be mapped) with junk */
    char tmp[600];
    snprintf(tmp, sizeof tmp, "%s.junk", so);
    FILE *f = fopen(tmp, "wb");
    fputs("\x7f" "ELF this is not a shared object", f);
    fclose(f);
    CHECK(rename(tmp, so) == 0);
    CHECK_MSG(ts_jit_compile(&fast, 1, src, &m, &hit, NULL, &err) == TS_OK, "%s", err.msg);
    CHECK(!hit);
    int_fn s7 = m ? (int_fn)ts_jit_sym(m, "seven") : NULL;
    CHECK(s7 && s7(1) == 8);
    ts_jit_free(m);
    CHECK(ts_jit_compile(&fast, 1, src, &m, &hit, NULL, &err) == TS_OK && hit);
    ts_jit_free(m);
    /* an empty file, as a crash between create and write might leave */
    f = fopen(tmp, "wb");
    fclose(f);
    CHECK(rename(tmp, so) == 0);
    CHECK(ts_jit_compile(&fast, 1, src, &m, &hit, NULL, &err) == TS_OK && !hit);
    ts_jit_free(m);
}

static void test_key(void)
{
    const char *a[] = {"int k(void) { return 1; }\n"}, *b[] = {"int k(void) { return 2; }\n"};
    const char *ab[] = {"int k(void) { return 1; }\n", ""}, *ab2[] = {"int k(void) { return 1; }\n"};
    char k1[TS_JIT_KEY_HEX + 1], k2[TS_JIT_KEY_HEX + 1], k3[TS_JIT_KEY_HEX + 1];
    ts_jit_opts o1 = {.flags = "-O1"}, o2 = {.flags = "-O2"}, o3 = {.flags = " -O1 "};
    CHECK(ts_jit_key(&o1, 1, a, k1, NULL) == TS_OK);
    CHECK(ts_jit_key(&o1, 1, a, k2, NULL) == TS_OK && strcmp(k1, k2) == 0);  /* stable */
    CHECK(ts_jit_key(&o2, 1, a, k2, NULL) == TS_OK && strcmp(k1, k2) != 0);  /* flags */
    CHECK(ts_jit_key(&o1, 1, b, k2, NULL) == TS_OK && strcmp(k1, k2) != 0);  /* source */
    CHECK(ts_jit_key(&o1, 2, ab, k2, NULL) == TS_OK && strcmp(k1, k2) != 0); /* unit count */
    CHECK(ts_jit_key(&o1, 1, ab2, k3, NULL) == TS_OK && strcmp(k1, k3) == 0);
    /* the flags text is hashed as given: spacing changes the key (harmless) */
    CHECK(ts_jit_key(&o3, 1, a, k3, NULL) == TS_OK && strcmp(k1, k3) != 0);
    /* light (D145): the default flags then -O1, keyed as such; flags given
     * by the options (or $TESSERA_CFLAGS) are used as given */
    ts_jit_opts dflt = {.light = false}, light = {.light = true}, given = {.flags = "-O1", .light = true};
    const char *env_flags = getenv("TESSERA_CFLAGS");
    CHECK(ts_jit_key(&dflt, 1, a, k2, NULL) == TS_OK && ts_jit_key(&light, 1, a, k3, NULL) == TS_OK);
    CHECK((strcmp(k2, k3) != 0) == !(env_flags && *env_flags));
    CHECK(ts_jit_key(&given, 1, a, k3, NULL) == TS_OK && strcmp(k1, k3) == 0);
    char dir[512];
    CHECK(ts_jit_cache_dir(NULL, dir, sizeof dir, NULL) == TS_OK);
    CHECK_STR(dir, root);
}

static void test_cache_dir(void)
{
    char nested[512], ww[512];
    snprintf(nested, sizeof nested, "%s/deep/er/cache", root);
    ts_jit_opts o = fast;
    o.cache_dir = nested;
    const char *src[] = {"int nine(void) { return 9; }\n"};
    ts_jit_module *m = NULL;
    ts_err err = {0};
    CHECK_MSG(ts_jit_compile(&o, 1, src, &m, NULL, NULL, &err) == TS_OK, "%s", err.msg);
    ts_jit_free(m);
    struct stat st;
    CHECK(stat(nested, &st) == 0 && (st.st_mode & 0777) == 0700);
    CHECK(count_prefixed(nested, ".tmp-") == 0);

    snprintf(ww, sizeof ww, "%s/shared", root);
    mkdir(ww, 0700);
    chmod(ww, 0777);
    o.cache_dir = ww;
    expect_error(&o, 1, src, TS_ERR_IO, "writable by every user", NULL);

    o.cache_dir = "/proc/tessera-cannot-create";
    expect_error(&o, 1, src, TS_ERR_IO, "cannot create", NULL);
}

/* Two threads compile the same new source at once: both succeed (the
 * loser's rename replaces an identical file). */
typedef struct race_arg {
    ts_status s;
    int value;
} race_arg;

static void *racer(void *p)
{
    race_arg *r = p;
    const char *src[] = {"int raced(int x) { return x + 100; }\n"};
    ts_jit_module *m = NULL;
    ts_err err = {0};
    r->s = ts_jit_compile(&fast, 1, src, &m, NULL, NULL, &err);
    int_fn f = m ? (int_fn)ts_jit_sym(m, "raced") : NULL;
    r->value = f ? f(1) : -1;
    ts_jit_free(m);
    return NULL;
}

static void test_race(void)
{
    pthread_t t[2];
    race_arg r[2];
    for (int i = 0; i < 2; i++) pthread_create(&t[i], NULL, racer, &r[i]);
    for (int i = 0; i < 2; i++) {
        pthread_join(t[i], NULL);
        CHECK(r[i].s == TS_OK && r[i].value == 101);
    }
}

/* ---- allocation failures --------------------------------------------------------- */

static long alloc_count, alloc_fail_at;

static void *failing_alloc(void *ud, void *ptr, size_t n)
{
    (void)ud;
    if (n == 0) {
        free(ptr);
        return NULL;
    }
    if (++alloc_count == alloc_fail_at) return NULL;
    return realloc(ptr, n);
}

/* Fail each allocation of a two-unit build in turn: every failure comes
 * before a compiler runs (the argv is built first), so this costs about
 * one build. */
static void test_oom(void)
{
    const char *src[] = {"int o1(void) { return 1; }\n", "int o2(void) { return 2; }\n"};
    for (long k = 1; k < 200; k++) {
        ts_set_allocator(failing_alloc, NULL);
        alloc_count = 0;
        alloc_fail_at = k;
        ts_jit_module *m = NULL;
        ts_err err = {0};
        ts_status s = ts_jit_compile(&fast, 2, src, &m, NULL, NULL, &err);
        bool hit = alloc_count >= k;
        ts_jit_free(m);
        ts_set_allocator(NULL, NULL);
        CHECK_MSG(hit ? s == TS_ERR_OOM : s == TS_OK, "allocation %ld: %s", k, err.msg);
        if (!hit) break;
    }
}

/* ---- cache upkeep: usage, LRU trim, automatic trim ------------------------------ */

/* Sets the .so's mtime to `age` seconds before now. */
static void age_entry(const char *dir, const char *key, int age)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s.so", dir, key);
    struct timespec t[2];
    clock_gettime(CLOCK_REALTIME, &t[0]);
    t[0].tv_sec -= age;
    t[1] = t[0];
    CHECK(utimensat(AT_FDCWD, path, t, 0) == 0);
}

static void test_cache_trim(void)
{
    char dir[300];
    snprintf(dir, sizeof dir, "%s/trim", root);
    ts_jit_opts o = fast;
    o.cache_dir = dir;
    ts_err err = {0};
    int64_t entries = -1, bytes = -1, removed = -1;
    /* a cache that does not exist yet is empty */
    CHECK(ts_jit_cache_usage(&o, &entries, &bytes, &err) == TS_OK && entries == 0 && bytes == 0);
    const char *srcs[3][1] = {{"int a(void) { return 1; }\n"}, {"int b(void) { return 2; }\n"},
                              {"int c(void) { return 3; }\n"}};
    char keys[3][TS_JIT_KEY_HEX + 1];
    for (int i = 0; i < 3; i++) {
        ts_jit_module *m = NULL;
        CHECK_MSG(ts_jit_compile(&o, 1, srcs[i], &m, NULL, NULL, &err) == TS_OK, "%s", err.msg);
        ts_jit_free(m);
        CHECK(ts_jit_key(&o, 1, srcs[i], keys[i], &err) == TS_OK);
    }
    CHECK(ts_jit_cache_usage(&o, &entries, &bytes, &err) == TS_OK && entries == 3 && bytes > 0);
    /* a, then c, then b in age (b least recently used) */
    age_entry(dir, keys[0], 100);
    age_entry(dir, keys[1], 300);
    age_entry(dir, keys[2], 200);
    /* a file that is not an entry is never counted or removed */
    char foreign[400];
    snprintf(foreign, sizeof foreign, "%s/0123456789abcdef0123456789abcdef.txt", dir);
    FILE *f = fopen(foreign, "w");
    if (f) fputs("mine\n", f), fclose(f);
    int64_t one = bytes / 3 + 1; /* room for about one entry */
    CHECK(ts_jit_cache_trim(&o, one + one / 2, NULL, &removed, &err) == TS_OK);
    CHECK_MSG(removed == 2, "removed %lld", (long long)removed);
    char path[512];
    snprintf(path, sizeof path, "%s/%s.so", dir, keys[0]);
    CHECK(exists(path)); /* the most recent survives */
    snprintf(path, sizeof path, "%s/%s.so", dir, keys[1]);
    CHECK(!exists(path));
    snprintf(path, sizeof path, "%s/%s.0.c", dir, keys[1]);
    CHECK(!exists(path)); /* sources go with their object */
    CHECK(exists(foreign));
    /* a hit marks its entry used: compile b again (a miss), hit a, then
     * trim to one entry keeping b: a goes, b stays */
    ts_jit_module *m = NULL;
    bool hit = true;
    CHECK(ts_jit_compile(&o, 1, srcs[1], &m, &hit, NULL, &err) == TS_OK && !hit);
    ts_jit_free(m);
    CHECK(ts_jit_compile(&o, 1, srcs[0], &m, &hit, NULL, &err) == TS_OK && hit);
    ts_jit_free(m);
    CHECK(ts_jit_cache_trim(&o, 1, keys[1], &removed, &err) == TS_OK && removed == 1);
    snprintf(path, sizeof path, "%s/%s.so", dir, keys[1]);
    CHECK(exists(path));
    CHECK(ts_jit_cache_usage(&o, &entries, &bytes, &err) == TS_OK && entries == 1);
    /* 0 empties the cache */
    CHECK(ts_jit_cache_trim(&o, 0, NULL, &removed, &err) == TS_OK && removed == 1);
    CHECK(ts_jit_cache_usage(&o, &entries, &bytes, &err) == TS_OK && entries == 0 && bytes == 0);
    CHECK(exists(foreign));
    /* the automatic trim after a build: a 1 MB limit keeps the cache at
     * most one big entry plus the new one */
    CHECK(ts_jit_cache_limit_bytes() == (int64_t)TS_JIT_CACHE_DEFAULT_MB << 20);
    setenv("TESSERA_CACHE_MAX_MB", "junk", 1);
    CHECK(ts_jit_cache_limit_bytes() == (int64_t)TS_JIT_CACHE_DEFAULT_MB << 20);
    setenv("TESSERA_CACHE_MAX_MB", "1", 1);
    CHECK(ts_jit_cache_limit_bytes() == 1 << 20);
    static char big[2][700000];
    for (int i = 0; i < 2; i++) {
        /* ~700 KB of source each: together over the limit */
        int n = snprintf(big[i], sizeof big[i], "int big%d(void) { return 0; }\n", i);
        memset(big[i] + n, ' ', sizeof big[i] - (size_t)n - 2);
        big[i][sizeof big[i] - 2] = '\n';
        big[i][sizeof big[i] - 1] = 0;
        const char *src[1] = {big[i]};
        CHECK(ts_jit_compile(&o, 1, src, &m, &hit, NULL, &err) == TS_OK && !hit);
        ts_jit_free(m);
    }
    CHECK(ts_jit_cache_usage(&o, &entries, &bytes, &err) == TS_OK);
    CHECK_MSG(entries == 1 && bytes <= (1 << 20), "entries %lld bytes %lld", (long long)entries, (long long)bytes);
    unsetenv("TESSERA_CACHE_MAX_MB");
    unlink(foreign);
}

int main(void)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(root, sizeof root, "%s/tessera_jit_XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(root)) {
        perror("mkdtemp");
        return 1;
    }
    setenv("TESSERA_CACHE_DIR", root, 1);
    unsetenv("TESSERA_CFLAGS");
    test_sha256();
    test_compile_and_hit();
    test_two_units();
    test_shared_unit();
    test_errors();
    test_corrupt();
    test_key();
    test_cache_dir();
    test_race();
    test_oom();
    test_cache_trim();
    CHECK(count_prefixed(root, ".tmp-") == 0);  /* nothing temporary left, failures included */
    remove_tree(root);
    return check_report();
}

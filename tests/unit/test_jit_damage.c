/* test_jit_damage.c — a damaged JIT cache entry is rebuilt, never loaded
 * (D89). One module is compiled into a fresh cache; between loads its
 * entry is damaged in each way a crash, a partial copy or a bad disk can
 * (cut short, emptied, zeroed, a flipped byte in the body or the trailer,
 * bytes appended, the trailer missing as in the old format, the object or
 * the sources deleted); each time the check names what is wrong, the next
 * compile succeeds, rebuilds where the object was damaged, and the
 * function returns the right answer. A cut-short object used to be
 * dlopen'ed and killed the process with SIGBUS. Then the writes: the
 * trailer is what jit_entry.h says and the entry's bytes are counted and
 * cleaned whole; a write that fails (a file size limit standing in for a
 * full disk: a source, the linker's output, the trailer) is a clear error
 * with no object and no temporary file left behind. */
/* setrlimit and SIGXFSZ are XSI */
#define _XOPEN_SOURCE 700
#include "check.h"
#include "test_files.h"
#include "backend/cpu/jit.h"
#include "backend/cpu/jit_entry.h"
#include "core/sha256.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- helpers ------------------------------------------------------------- */

static char root[256];

static const ts_jit_opts fast = {.flags = "-O1 -std=c11"};
static const char *const src[] = {"int checked(int x) { return 3 * x + 4; }\n"};

typedef int (*int_fn)(int);

static long file_size(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (long)st.st_size : -1;
}


/* Compile src; check the cache's answer (want_hit), the function's, and
 * that the entry left behind passes its check. */
static void compile_expect(const char *what, bool want_hit)
{
    ts_jit_module *m = NULL;
    bool hit = !want_hit;
    ts_err err = {0};
    ts_status s = ts_jit_compile(&fast, 1, src, &m, &hit, NULL, &err);
    CHECK_MSG(s == TS_OK, "%s: %s", what, err.msg);
    CHECK_MSG(hit == want_hit, "%s: cache %s, expected %s", what, hit ? "hit" : "miss", want_hit ? "hit" : "miss");
    int_fn f = m ? (int_fn)ts_jit_sym(m, "checked") : NULL;
    CHECK_MSG(f && f(5) == 19, "%s: wrong answer", what);
    const char *why = m ? ts_jit_entry_check(ts_jit_path(m)) : "no module";
    CHECK_MSG(why == NULL, "%s: the entry left behind fails its check: %s", what, why);
    ts_jit_free(m);  /* unmapped before the next damage, as a new process would be */
}

/* ---- the damages ------------------------------------------------------------ */

static void cut(const char *so, long n) { CHECK(truncate(so, n) == 0); }
static void cut_1000(const char *so, const char *c) { (void)c; cut(so, 1000); }
static void cut_0(const char *so, const char *c) { (void)c; cut(so, 0); }
static void strip_trailer(const char *so, const char *c) { (void)c; cut(so, file_size(so) - TS_JIT_TRAILER_BYTES); }

/* Overwrite in place (same inode, same size), as a disk error would. */
static void zero_all(const char *so, const char *c)
{
    (void)c;
    long n = file_size(so);
    char *z = calloc((size_t)n, 1);
    int fd = open(so, O_WRONLY);
    CHECK(z && fd >= 0 && pwrite(fd, z, (size_t)n, 0) == n);
    close(fd);
    free(z);
}

/* Flip every bit of the byte `from_end` bytes before the end (or, when
 * negative, the middle one). */
static void flip(const char *so, long from_end)
{
    long n = file_size(so), at = from_end < 0 ? n / 2 : n - from_end;
    unsigned char b = 0;
    int fd = open(so, O_RDWR);
    CHECK(fd >= 0 && pread(fd, &b, 1, at) == 1);
    b ^= 0xff;
    CHECK(pwrite(fd, &b, 1, at) == 1);
    close(fd);
}

static void flip_middle(const char *so, const char *c) { (void)c; flip(so, -1); }
static void flip_hash(const char *so, const char *c) { (void)c; flip(so, TS_JIT_TRAILER_BYTES - 5); }
static void flip_length(const char *so, const char *c) { (void)c; flip(so, 16); }
static void flip_magic(const char *so, const char *c) { (void)c; flip(so, 3); }

/* A copy that wrote too much: the trailer is no longer at the end. */
static void append_byte(const char *so, const char *c)
{
    (void)c;
    FILE *f = fopen(so, "ab");
    CHECK(f && fputc('x', f) == 'x');
    if (f) fclose(f);
}

static void delete_so(const char *so, const char *c) { (void)c; CHECK(unlink(so) == 0); }
static void delete_sources(const char *so, const char *c) { (void)so; CHECK(unlink(c) == 0); }

typedef struct damage {
    const char *what;
    void (*apply)(const char *so, const char *c0);
    const char *why;  /* ts_jit_entry_check's reason after it; NULL: the object is intact */
} damage;

/* An intact object is a hit; any other is rebuilt (a miss). */
static const damage damages[] = {
    {"cut to 1000 bytes (was SIGBUS)", cut_1000, "no trailer"},
    {"cut to 0 bytes", cut_0, "too short"},
    {"zeroed, same size", zero_all, "no trailer"},
    {"a byte flipped in the middle", flip_middle, "wrong hash"},
    {"a byte flipped in the trailer's hash", flip_hash, "wrong hash"},
    {"a byte flipped in the trailer's length", flip_length, "wrong length"},
    {"a byte flipped in the trailer's magic", flip_magic, "no trailer"},
    {"a byte appended", append_byte, "no trailer"},
    {"the trailer stripped (the format before D89)", strip_trailer, "no trailer"},
    {"the sources deleted", delete_sources, NULL},  /* a hit: the object is whole */
    {"the .so deleted", delete_so, "missing"},       /* and the rebuild writes them again */
};

static void test_damages(void)
{
    char key[TS_JIT_KEY_HEX + 1], so[512], c0[512];
    ts_err err = {0};
    CHECK(ts_jit_key(&fast, 1, src, key, &err) == TS_OK);
    snprintf(so, sizeof so, "%s/%s.so", root, key);
    snprintf(c0, sizeof c0, "%s/%s.0.c", root, key);
    compile_expect("first compile", false);
    compile_expect("second compile", true);
    for (size_t i = 0; i < sizeof damages / sizeof damages[0]; i++) {
        const damage *d = &damages[i];
        d->apply(so, c0);
        const char *why = ts_jit_entry_check(so);
        CHECK_MSG(why == d->why || (why && d->why && strcmp(why, d->why) == 0), "%s: check says %s, expected %s",
                  d->what, why ? why : "intact", d->why ? d->why : "intact");
        compile_expect(d->what, d->why == NULL);
        compile_expect(d->what, true);  /* and the rebuilt entry serves the next one */
    }
    CHECK(count_prefixed(root, ".tmp-") == 0);
}

/* ---- the format ------------------------------------------------------------- */

/* The trailer is what jit_entry.h says, computed here independently. */
static void test_trailer_format(void)
{
    char key[TS_JIT_KEY_HEX + 1], so[512];
    CHECK(ts_jit_key(&fast, 1, src, key, NULL) == TS_OK);
    snprintf(so, sizeof so, "%s/%s.so", root, key);
    long n = file_size(so), body = n - TS_JIT_TRAILER_BYTES;
    unsigned char *buf = malloc((size_t)n);
    FILE *f = fopen(so, "rb");
    CHECK(buf && f && n > TS_JIT_TRAILER_BYTES && fread(buf, 1, (size_t)n, f) == (size_t)n);
    if (f) fclose(f);
    if (!buf || n <= TS_JIT_TRAILER_BYTES) {
        free(buf);
        return;
    }
    CHECK(memcmp(buf, "\x7f" "ELF", 4) == 0);  /* the body is the linker's object, untouched */
    const unsigned char *t = buf + body;
    unsigned char d[32];
    ts_sha256 h;
    ts_sha256_init(&h);
    ts_sha256_update(&h, buf, (size_t)body);
    ts_sha256_final(&h, d);
    CHECK(memcmp(t, d, 32) == 0);
    uint64_t len = 0;
    for (int i = 0; i < 8; i++) len |= (uint64_t)t[32 + i] << (8 * i);
    CHECK(len == (uint64_t)body);
    CHECK(memcmp(t + 40, TS_JIT_TRAILER_MAGIC, 8) == 0);
    free(buf);
    /* the trailer is inside the .so: the entry's bytes are its two files,
     * and cleaning the cache leaves nothing of it */
    char c0[512];
    snprintf(c0, sizeof c0, "%s/%s.0.c", root, key);
    int64_t entries = -1, bytes = -1, removed = -1;
    CHECK(ts_jit_cache_usage(NULL, &entries, &bytes, NULL) == TS_OK);
    CHECK_MSG(entries == 1 && bytes == n + file_size(c0), "entries %lld bytes %lld", (long long)entries,
              (long long)bytes);
    CHECK(ts_jit_cache_trim(NULL, 0, NULL, &removed, NULL) == TS_OK && removed == 1);
    CHECK(count_prefixed(root, key) == 0);
}

/* ---- failing writes --------------------------------------------------------- */

/* RLIMIT_FSIZE stands in for a full disk: a write past the limit fails
 * (EFBIG) exactly where ENOSPC would. Compiler children inherit it. */
static void limit_file_size(rlim_t bytes)
{
    struct rlimit r;
    CHECK(getrlimit(RLIMIT_FSIZE, &r) == 0);
    r.rlim_cur = bytes;
    CHECK(setrlimit(RLIMIT_FSIZE, &r) == 0);
}

static void expect_io_error(const ts_jit_opts *o, const char *const *s, const char *frag)
{
    ts_jit_module *m = NULL;
    ts_err err = {0};
    ts_status st = ts_jit_compile(o, 1, s, &m, NULL, NULL, &err);
    CHECK_MSG(st == TS_ERR_IO, "got %s: %s", ts_status_name(st), err.msg);
    CHECK_MSG(strstr(err.msg, "JIT cache: cannot write") && strstr(err.msg, frag), "'%s' lacks '%s'", err.msg, frag);
    CHECK(m == NULL);
    ts_jit_free(m);
}

static void test_write_errors(void)
{
    char dir[300];
    snprintf(dir, sizeof dir, "%s/full", root);
    ts_jit_opts o = fast;
    o.cache_dir = dir;
    signal(SIGXFSZ, SIG_IGN);  /* the write fails with EFBIG instead of killing us */
    rlim_t old = RLIM_INFINITY;
    struct rlimit r;
    if (getrlimit(RLIMIT_FSIZE, &r) == 0) old = r.rlim_cur;

    /* a source longer than the limit: writing it fails */
    static char big[4096];
    memset(big, ' ', sizeof big - 1);
    memcpy(big, "int big(void) { return 1; }", 27);
    const char *bigsrc[] = {big};
    ts_jit_module *m = NULL;
    CHECK(ts_jit_compile(&o, 1, src, &m, NULL, NULL, NULL) == TS_OK);  /* makes dir; the object's size */
    long body = file_size(ts_jit_path(m)) - TS_JIT_TRAILER_BYTES;
    char so[512];
    snprintf(so, sizeof so, "%s", ts_jit_path(m));
    ts_jit_free(m);
    limit_file_size(1024);
    expect_io_error(&o, bigsrc, ".0.c");
    CHECK(count_prefixed(dir, ".tmp-") == 0);

    /* no room for the linker's output: GNU ld 2.40 fails on its own
     * ("final link failed: File too large", TS_ERR_TOOLCHAIN) when short
     * by a few KB, but exits 0 with the file cut short when only its last
     * write is; that is caught before sealing (TS_ERR_IO). Either way no
     * object and no temporary file remain. */
    CHECK(unlink(so) == 0);
    for (long short_by = 1; short_by <= 8192; short_by *= 8) {
        limit_file_size((rlim_t)(body - short_by));
        ts_err err = {0};
        ts_status st = ts_jit_compile(&o, 1, src, &m, NULL, NULL, &err);
        CHECK_MSG((st == TS_ERR_TOOLCHAIN || (st == TS_ERR_IO && strstr(err.msg, "cut short"))) && m == NULL,
                  "%ld bytes short: got %s: %s", short_by, ts_status_name(st), err.msg);
        printf("jit: a link %ld bytes past the file size limit: %s\n", short_by, err.msg);
        CHECK(file_size(so) == -1);
        CHECK(count_prefixed(dir, ".tmp-") == 0);
    }

    /* room for the linker's output but not for the trailer: sealing fails */
    limit_file_size((rlim_t)body);
    expect_io_error(&o, src, ".so");
    CHECK(file_size(so) == -1);
    CHECK(count_prefixed(dir, ".tmp-") == 0);

    limit_file_size(old);
    signal(SIGXFSZ, SIG_DFL);
    m = NULL;  /* room again: the same build succeeds */
    bool hit = true;
    CHECK(ts_jit_compile(&o, 1, src, &m, &hit, NULL, NULL) == TS_OK && !hit);
    ts_jit_free(m);
}

int main(void)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(root, sizeof root, "%s/tessera_jit_damage_XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(root)) {
        perror("mkdtemp");
        return 1;
    }
    setenv("TESSERA_CACHE_DIR", root, 1);
    unsetenv("TESSERA_CFLAGS");
    test_damages();
    test_trailer_format();
    test_write_errors();
    CHECK(count_prefixed(root, ".tmp-") == 0);
    remove_tree(root);
    return check_report();
}

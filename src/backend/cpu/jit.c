/* jit.c — compile C to a loaded module through the system compiler, with a
 * content-addressed on-disk cache. See jit.h for the contract.
 *
 * Processes: posix_spawn with an explicit argv (no shell), stdin from
 * /dev/null, stdout and stderr into an unlinked temporary file in the cache
 * directory (read back after the child exits; nothing is left behind even
 * if we crash, and a chatty compiler cannot fill a pipe and stall). We wait
 * for our own pids only (never waitpid(-1), which would reap children that
 * other parts of the program own). */
/* realpath is XSI: name the level explicitly (the build sets only POSIX). */
#define _XOPEN_SOURCE 700
#include "backend/cpu/jit.h"
#include "backend/cpu/jit_entry.h"
#include "core/clock.h"
#include "core/sha256.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

/* Bump when the build recipe below or the entry format (jit_entry.h)
 * changes: old entries then have other keys and age out of the cache.
 * 2: the checked trailer (D89). */
#define KEY_VERSION "tessera-jit-2"
#define ERR_TEXT_MAX 65536           /* compiler output read back for a message */

struct ts_jit_module {
    void *handle;
    char path[];
};

/* ---- options ------------------------------------------------------------- */

typedef struct cfg {
    const char *cc, *flags;   /* the units' flags */
    const char *shared_flags; /* the shared unit's: never light, one object per machine */
    char dir[PATH_MAX];
    int jobs;
} cfg;

static const char *env_or(const char *v, const char *name, const char *dflt)
{
    if (v) return v;
    const char *e = getenv(name);
    return e && *e ? e : dflt;
}

static ts_status cache_dir(const ts_jit_opts *o, char *buf, size_t cap, ts_err *err)
{
    const char *d = o ? o->cache_dir : NULL, *e;
    int len;
    if (!d) d = getenv("TESSERA_CACHE_DIR");
    if (d && *d) len = snprintf(buf, cap, "%s", d);
    else if ((e = getenv("XDG_CACHE_HOME")) && e[0] == '/')  /* the XDG spec: relative is invalid */
        len = snprintf(buf, cap, "%s/tessera", e);
    else if ((e = getenv("HOME")) && *e)
        len = snprintf(buf, cap, "%s/.cache/tessera", e);
    else
        return ts_err_set(err, TS_ERR_IO, "JIT cache: no directory (set TESSERA_CACHE_DIR or HOME)");
    if (len < 0 || (size_t)len >= cap) return ts_err_set(err, TS_ERR_IO, "JIT cache: directory path too long");
    return TS_OK;
}

ts_status ts_jit_cache_dir(const ts_jit_opts *o, char *buf, size_t cap, ts_err *err)
{
    return cache_dir(o, buf, cap, err);
}

static ts_status resolve(const ts_jit_opts *o, cfg *c, ts_err *err)
{
    c->cc = env_or(o ? o->cc : NULL, "TESSERA_CC", "cc");
    c->shared_flags = c->flags = env_or(o ? o->flags : NULL, "TESSERA_CFLAGS", TS_JIT_DEFAULT_FLAGS);
    /* a user's own flags are kept as given */
    if (o && o->light && strcmp(c->flags, TS_JIT_DEFAULT_FLAGS) == 0) c->flags = TS_JIT_LIGHT_FLAGS;
    c->jobs = o && o->jobs > 0 ? o->jobs : (int)sysconf(_SC_NPROCESSORS_ONLN);
    if (c->jobs < 1) c->jobs = 1;
    if (!*c->cc) return ts_err_set(err, TS_ERR_TOOLCHAIN, "C compiler '' not found (set TESSERA_CC, or run with --target interp)");
    return cache_dir(o, c->dir, sizeof c->dir, err);
}

/* ---- argv ---------------------------------------------------------------- */

/* A growable argv whose strings are owned by it. */
typedef struct argv_t {
    char **v;
    int n, cap;
    bool oom;
} argv_t;

static void arg(argv_t *a, const char *s)
{
    if (a->oom) return;
    if (a->n + 2 > a->cap) {
        int cap = a->cap ? 2 * a->cap : 16;
        char **v = ts_mem_realloc(a->v, sizeof *v * (size_t)cap);
        if (!v) {
            a->oom = true;
            return;
        }
        a->v = v;
        a->cap = cap;
    }
    char *d = ts_mem_strdup(s);
    if (!d) {
        a->oom = true;
        return;
    }
    a->v[a->n++] = d;
    a->v[a->n] = NULL;
}

/* The flags, split on blanks (no quoting: a flag never needs a space). */
static void arg_flags(argv_t *a, const char *flags)
{
    char word[PATH_MAX];
    for (const char *p = flags; *p;) {
        while (*p == ' ' || *p == '\t' || *p == '\n') p++;
        size_t n = 0;
        while (p[n] && p[n] != ' ' && p[n] != '\t' && p[n] != '\n') n++;
        if (n == 0) break;
        if (n >= sizeof word) {
            a->oom = true;  /* reported as out of memory: a 4 KiB flag is no flag */
            return;
        }
        memcpy(word, p, n);
        word[n] = 0;
        arg(a, word);
        p += n;
    }
}

static void argv_free(argv_t *a)
{
    for (int i = 0; i < a->n; i++) ts_mem_free(a->v[i]);
    ts_mem_free(a->v);
    memset(a, 0, sizeof *a);
}

/* ---- processes ----------------------------------------------------------- */

/* An unlinked temporary file in dir for a child's output; -1 on failure. */
static int capture_file(const char *dir)
{
    char path[PATH_MAX];
    if (snprintf(path, sizeof path, "%s/.tmp-out-XXXXXX", dir) >= (int)sizeof path) return -1;
    int fd = mkstemp(path);
    if (fd < 0) return -1;
    unlink(path);
    fcntl(fd, F_SETFD, FD_CLOEXEC);  /* other children must not inherit it */
    return fd;
}

/* Start path with argv; output into out_fd. Returns 0 or an errno. */
static int spawn(const char *path, char *const argv[], int out_fd, pid_t *pid)
{
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t at;
    sigset_t none;
    sigemptyset(&none);
    if (posix_spawn_file_actions_init(&fa)) return ENOMEM;
    if (posix_spawnattr_init(&at)) {
        posix_spawn_file_actions_destroy(&fa);
        return ENOMEM;
    }
    /* the child starts with no signal blocked, whatever thread calls us */
    posix_spawnattr_setsigmask(&at, &none);
    posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGMASK);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, out_fd, 1);
    posix_spawn_file_actions_adddup2(&fa, out_fd, 2);
    int rc = posix_spawn(pid, path, &fa, &at, argv, environ);
    posix_spawnattr_destroy(&at);
    posix_spawn_file_actions_destroy(&fa);
    return rc;
}

/* Exit status of a finished child: its code, or 128 + the signal. */
static int exit_code(int st)
{
    if (WIFEXITED(st)) return WEXITSTATUS(st);
    if (WIFSIGNALED(st)) return 128 + WTERMSIG(st);
    return 255;
}

static int wait_child(pid_t pid)
{
    int st = 0;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR) return 255;
    return exit_code(st);
}

/* Up to max-1 bytes of what was written to fd, NUL-terminated. */
static void read_back(int fd, char *buf, size_t max)
{
    size_t n = 0;
    if (lseek(fd, 0, SEEK_SET) == 0) {
        ssize_t r;
        while (n + 1 < max && (r = read(fd, buf + n, max - 1 - n)) > 0) n += (size_t)r;
    }
    buf[n] = 0;
}

/* ---- the compiler's identity ------------------------------------------- */

/* A program name to a path through $PATH, as execvp would; a name with a
 * slash is taken as is. False if there is no such executable file. */
static bool find_program(const char *cc, char *out, size_t cap)
{
    struct stat st;
    if (strchr(cc, '/')) {
        if (stat(cc, &st) != 0 || !S_ISREG(st.st_mode) || access(cc, X_OK) != 0) return false;
        return snprintf(out, cap, "%s", cc) < (int)cap;
    }
    const char *path = getenv("PATH");
    if (!path || !*path) path = "/usr/local/bin:/usr/bin:/bin";
    for (const char *p = path;;) {
        size_t n = strcspn(p, ":");
        int len = n ? snprintf(out, cap, "%.*s/%s", (int)n, p, cc) : snprintf(out, cap, "./%s", cc);
        if (len > 0 && (size_t)len < cap && stat(out, &st) == 0 && S_ISREG(st.st_mode) && access(out, X_OK) == 0)
            return true;
        if (!p[n]) return false;
        p += n + 1;
    }
}

/* Identities found so far, per compiler name; a fixed table in static
 * storage (nothing to free at exit, no allocation hook involved). */
typedef struct ident {
    char cc[256], path[PATH_MAX], id[PATH_MAX + 256];
} ident;
static ident idents[8];
static int nidents;
static pthread_mutex_t ident_mu = PTHREAD_MUTEX_INITIALIZER;

static void probe_version(const char *path, const char *cc, const char *dir, char *line, size_t cap)
{
    line[0] = 0;
    int fd = capture_file(dir);
    if (fd < 0) fd = capture_file(getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (fd < 0) return;
    char *argv[] = {(char *)cc, "--version", NULL};
    pid_t pid;
    if (spawn(path, argv, fd, &pid) == 0) {
        wait_child(pid);
        char text[1024];
        read_back(fd, text, sizeof text);
        snprintf(line, cap, "%.*s", (int)strcspn(text, "\n"), text);
    }
    close(fd);
}

/* The path to run for cc and its identity text. */
static ts_status identify(const char *cc, const char *dir, char *path, char *id, size_t idcap, ts_err *err)
{
    pthread_mutex_lock(&ident_mu);
    for (int i = 0; i < nidents; i++)
        if (strcmp(idents[i].cc, cc) == 0) {
            snprintf(path, PATH_MAX, "%s", idents[i].path);
            snprintf(id, idcap, "%s", idents[i].id);
            pthread_mutex_unlock(&ident_mu);
            return TS_OK;
        }
    pthread_mutex_unlock(&ident_mu);
    if (!find_program(cc, path, PATH_MAX))
        return ts_err_set(err, TS_ERR_TOOLCHAIN, "C compiler '%s' not found (set TESSERA_CC, or run with --target interp)",
                          cc);
    char real[PATH_MAX], version[256];
    if (!realpath(path, real)) snprintf(real, sizeof real, "%s", path);
    probe_version(path, cc, dir, version, sizeof version);
    snprintf(id, idcap, "%s\n%s", real, version);
    pthread_mutex_lock(&ident_mu);  /* remember it (two threads may both probe: harmless) */
    if (nidents < (int)(sizeof idents / sizeof idents[0]) && strlen(cc) < sizeof idents[0].cc) {
        ident *d = &idents[nidents++];
        snprintf(d->cc, sizeof d->cc, "%s", cc);
        snprintf(d->path, sizeof d->path, "%s", path);
        snprintf(d->id, sizeof d->id, "%s", id);
    }
    pthread_mutex_unlock(&ident_mu);
    return TS_OK;
}

/* The CPU model and feature lines of /proc/cpuinfo (Linux; empty
 * elsewhere): code built with -march=native must not be shared with a
 * machine that lacks the instructions it uses. */
static void cpu_identity(ts_sha256 *h)
{
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f) return;
    char line[8192];
    int got = 0;
    while (got < 2 && fgets(line, sizeof line, f)) {
        if (strncmp(line, "model name", 10) == 0 || strncmp(line, "flags", 5) == 0 ||
            strncmp(line, "Features", 8) == 0 || strncmp(line, "CPU part", 8) == 0) {
            ts_sha256_update(h, line, strlen(line));
            got++;
        }
    }
    fclose(f);
}

/* ---- the key --------------------------------------------------------------- */

static void hash_str(ts_sha256 *h, const char *s, size_t n)
{
    /* length first, so no two field sequences hash the same bytes */
    uint64_t len = n;
    ts_sha256_update(h, &len, sizeof len);
    ts_sha256_update(h, s, n);
}

/* shared: the key of the shared object a module links (NULL: none). */
static void make_key(const char *id, const char *flags, int n, const char *const *sources, const char *shared,
                     char *key)
{
    ts_sha256 h;
    ts_sha256_init(&h);
    hash_str(&h, KEY_VERSION, strlen(KEY_VERSION));
    hash_str(&h, id, strlen(id));
    hash_str(&h, flags, strlen(flags));
    if (strstr(flags, "=native")) cpu_identity(&h);
    uint64_t count = (uint64_t)n;
    ts_sha256_update(&h, &count, sizeof count);
    for (int i = 0; i < n; i++) hash_str(&h, sources[i], strlen(sources[i]));
    if (shared) hash_str(&h, shared, strlen(shared));
    unsigned char d[32];
    ts_sha256_final(&h, d);
    for (int i = 0; i < TS_JIT_KEY_HEX / 2; i++) snprintf(key + 2 * i, 3, "%02x", d[i]);
}

static ts_status check_sources(int n, const char *const *sources, ts_err *err)
{
    if (n < 1 || !sources) return ts_err_set(err, TS_ERR_INVALID_ARG, "JIT: %d translation units", n);
    for (int i = 0; i < n; i++)
        if (!sources[i]) return ts_err_set(err, TS_ERR_INVALID_ARG, "JIT: translation unit %d is NULL", i);
    return TS_OK;
}

ts_status ts_jit_key(const ts_jit_opts *o, int n, const char *const *sources, char key[TS_JIT_KEY_HEX + 1],
                     ts_err *err)
{
    key[0] = 0;
    cfg c;
    char path[PATH_MAX], id[PATH_MAX + 256];
    TS_TRY(check_sources(n, sources, err));
    TS_TRY(resolve(o, &c, err));
    /* the version probe writes into the cache dir if it exists, else $TMPDIR */
    TS_TRY(identify(c.cc, c.dir, path, id, sizeof id, err));
    make_key(id, c.flags, n, sources, NULL, key);
    return TS_OK;
}

/* ---- files ------------------------------------------------------------------ */

/* mkdir -p with mode 0700 for what it creates (the cache holds code that
 * will be run: private by default), then refuse a world-writable result. */
static ts_status make_dir(const char *dir, ts_err *err)
{
    char p[PATH_MAX];
    snprintf(p, sizeof p, "%s", dir);
    for (char *s = p + 1;; s++) {
        if (*s == '/' || *s == 0) {
            char c = *s;
            *s = 0;
            if (mkdir(p, 0700) != 0 && errno != EEXIST)
                return ts_err_set(err, TS_ERR_IO, "JIT cache: cannot create '%s': %s", p, strerror(errno));
            *s = c;
            if (!c) break;
        }
    }
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
        return ts_err_set(err, TS_ERR_IO, "JIT cache: '%s' is not a directory", dir);
    if (st.st_mode & S_IWOTH)
        return ts_err_set(err, TS_ERR_IO,
                          "JIT cache: '%s' is writable by every user; refusing to load code from it "
                          "(set TESSERA_CACHE_DIR to a private directory)", dir);
    return TS_OK;
}

/* Reserve a unique temporary name in dir (the compiler overwrites it). */
static ts_status temp_name(const char *dir, const char *key, char *out, ts_err *err)
{
    int fd = snprintf(out, PATH_MAX, "%s/.tmp-%.8s-XXXXXX", dir, key) < PATH_MAX ? mkstemp(out) : -1;
    if (fd < 0) return ts_err_set(err, TS_ERR_IO, "JIT cache: cannot write in '%s': %s", dir, strerror(errno));
    close(fd);
    return TS_OK;
}

/* ---- compiler messages ------------------------------------------------------- */

static bool has(const char *l, size_t n, const char *word)
{
    size_t w = strlen(word);
    for (size_t i = 0; i + w <= n; i++)
        if (memcmp(l + i, word, w) == 0) return true;
    return false;
}

/* Whether line l (n bytes) is worth showing in pass `pass`: 0, what the
 * compiler or linker says went wrong (the driver's own "ld returned 1"
 * summary only says that something did; GNU ld reports a full disk as
 * "final link failed: No space left on device", without "error"); 1,
 * anything saying "error"; 2, any line. */
static bool wanted(const char *l, size_t n, int pass)
{
    if (n == 0) return false;
    if (pass == 2) return true;
    if (pass == 1) return has(l, n, "error");
    if (has(l, n, "ld returned") || has(l, n, "linker command failed") || has(l, n, " generated.")) return false;
    return has(l, n, "error") || has(l, n, "undefined reference") || has(l, n, "multiple definition") ||
           has(l, n, "final link failed");
}

/* The first three wanted lines, "; "-joined, trying the passes in order;
 * the cache directory prefix is dropped from each. */
static void first_errors(const char *text, const char *dir, char *out, size_t cap)
{
    size_t dl = strlen(dir), len = 0;
    out[0] = 0;
    for (int pass = 0; pass < 3 && len == 0; pass++) {
        int taken = 0;
        for (const char *l = text; *l && taken < 3;) {
            size_t n = strcspn(l, "\n");
            if (wanted(l, n, pass)) {
                const char *s = l;
                size_t m = n;
                if (m > dl + 1 && strncmp(s, dir, dl) == 0 && s[dl] == '/') s += dl + 1, m -= dl + 1;
                int w = snprintf(out + len, cap - len, "%s%.*s", taken ? "; " : "", (int)m, s);
                if (w < 0 || (size_t)w >= cap - len) {
                    len = cap - 1;
                    break;
                }
                len += (size_t)w;
                taken++;
            }
            l += n + (l[n] == '\n');
        }
    }
    if (len == 0) snprintf(out, cap, "(no output)");
}

/* ---- building ------------------------------------------------------------------ */

typedef struct job {
    argv_t argv;
    const char *what;  /* the file it works on, for messages */
    pid_t pid;
    int fd;            /* its output, while running */
    bool running;
} job;

static ts_status job_failed(const job *j, int code, const char *cc, const char *dir, ts_err *err)
{
    char small[1024], msg[400];
    char *text = ts_mem_alloc(ERR_TEXT_MAX);
    read_back(j->fd, text ? text : small, text ? ERR_TEXT_MAX : sizeof small);
    first_errors(text ? text : small, dir, msg, sizeof msg);
    ts_mem_free(text);
    if (code > 128)
        return ts_err_set(err, TS_ERR_TOOLCHAIN, "C compiler '%s' killed by signal %d on %s: %s", cc, code - 128,
                          j->what, msg);
    return ts_err_set(err, TS_ERR_TOOLCHAIN, "C compiler '%s' failed on %s (exit %d): %s", cc, j->what, code, msg);
}

/* Start job j; TS_OK or the reason it could not start. */
static ts_status job_start(job *j, const char *cc_path, const char *cc, const char *dir, ts_err *err)
{
    if (j->argv.oom) return ts_err_set(err, TS_ERR_OOM, "JIT: out of memory");
    j->fd = capture_file(dir);
    if (j->fd < 0) return ts_err_set(err, TS_ERR_IO, "JIT cache: cannot write in '%s': %s", dir, strerror(errno));
    int rc = spawn(cc_path, j->argv.v, j->fd, &j->pid);
    if (rc == 0) {
        j->running = true;
        return TS_OK;
    }
    close(j->fd);
    if (rc == ENOENT || rc == EACCES)
        return ts_err_set(err, TS_ERR_TOOLCHAIN, "C compiler '%s' not found (set TESSERA_CC, or run with --target interp)",
                          cc);
    return ts_err_set(err, TS_ERR_TOOLCHAIN, "cannot run C compiler '%s': %s", cc, strerror(rc));
}

/* Run the jobs, at most par at a time. After the first failure nothing
 * more starts; the running ones are waited for, and that failure is
 * reported. Children are polled with WNOHANG every 200 us: waiting for
 * "any child" would reap children that are not ours. */
static ts_status run_jobs(job *jobs, int n, int par, const char *cc_path, const char *cc, const char *dir,
                          ts_err *err)
{
    int next = 0, running = 0;
    ts_status st = TS_OK;
    for (;;) {
        while (st == TS_OK && next < n && running < par) {
            st = job_start(&jobs[next], cc_path, cc, dir, err);
            if (st == TS_OK) running++;
            next++;
        }
        if (running == 0) return st;
        bool reaped = false;
        for (int i = 0; i < next; i++) {
            job *j = &jobs[i];
            int ws = 0;
            if (!j->running) continue;
            pid_t r = waitpid(j->pid, &ws, WNOHANG);
            if (r == 0 || (r < 0 && errno == EINTR)) continue;
            /* ECHILD: SIGCHLD is ignored, so the status is gone; the link
             * or the load that follows will tell if something failed */
            int code = r < 0 ? 0 : exit_code(ws);
            if (code != 0 && st == TS_OK) st = job_failed(j, code, cc, dir, err);
            close(j->fd);
            j->running = false;
            running--;
            reaped = true;
        }
        if (!reaped) nanosleep(&(struct timespec){0, 200000}, NULL);
    }
}

/* The unit many modules share (ts_jit_compile_shared): its key, its
 * source and sealed object in the cache, and whether that object is
 * there and whole (else this build compiles it). */
typedef struct shared_t {
    char key[TS_JIT_KEY_HEX + 1];
    char src[PATH_MAX], obj[PATH_MAX];
    bool ready;
} shared_t;

/* Everything one build creates, so that every exit path cleans up. */
typedef struct build_t {
    int n;
    char **src, **obj;   /* the kept sources; temporary objects (n > 1, or a shared unit) */
    char tmp_so[PATH_MAX], tmp_shared[PATH_MAX];
    job *jobs;           /* [the shared unit's compile], n compiles, the link; or one compile-and-link */
    int ncompile, njobs;
} build_t;

static void build_free(build_t *b)
{
    for (int i = 0; i < b->n; i++) {
        if (b->obj && b->obj[i]) unlink(b->obj[i]);
        ts_mem_free(b->src ? b->src[i] : NULL);
        ts_mem_free(b->obj ? b->obj[i] : NULL);
    }
    if (b->tmp_so[0]) unlink(b->tmp_so);
    if (b->tmp_shared[0]) unlink(b->tmp_shared);
    for (int i = 0; i < b->njobs; i++) argv_free(&b->jobs[i].argv);
    ts_mem_free(b->src);
    ts_mem_free(b->obj);
    ts_mem_free(b->jobs);
}

static char *path_of(const char *dir, const char *key, int i)
{
    ts_buf b = {0};
    ts_buf_printf(&b, "%s/%s.%d.c", dir, key, i);
    return b.oom ? (ts_buf_free(&b), NULL) : b.data;
}

static void compile_job(job *j, const cfg *c, const char *src, const char *obj, bool sections)
{
    arg(&j->argv, c->cc);
    arg_flags(&j->argv, sections ? c->shared_flags : c->flags);
    /* its own section per function, so each module's link keeps only the
     * shared templates it calls */
    if (sections) arg(&j->argv, "-ffunction-sections");
    const char *rest[] = {"-fPIC", "-c", src, "-o", obj};
    for (size_t k = 0; k < sizeof rest / sizeof rest[0]; k++) arg(&j->argv, rest[k]);
    j->what = src;
}

/* The compiler command lines: with one unit and no shared unit to build
 * first, compile and link in one process (saves a few ms); else compile
 * each unit to an object, then link them with the shared object. */
static void build_jobs(build_t *b, const cfg *c, const shared_t *sh)
{
    job *j = b->jobs;
    if (b->n == 1 && (!sh || sh->ready)) {
        arg(&j->argv, c->cc);
        arg_flags(&j->argv, c->flags);
        const char *rest[] = {"-fPIC", "-shared", b->src[0], "-o", b->tmp_so};
        for (size_t k = 0; k < sizeof rest / sizeof rest[0]; k++) arg(&j->argv, rest[k]);
        if (sh) arg(&j->argv, sh->obj);
        if (sh) arg(&j->argv, "-Wl,--gc-sections");
        arg(&j->argv, "-lm");
        j->what = b->src[0];
        b->ncompile = b->njobs = 1;
        return;
    }
    if (sh && !sh->ready) compile_job(j++, c, sh->src, b->tmp_shared, true);
    for (int i = 0; i < b->n; i++) compile_job(j++, c, b->src[i], b->obj[i], false);
    b->ncompile = (int)(j - b->jobs);
    arg(&j->argv, c->cc);
    arg_flags(&j->argv, c->flags);
    arg(&j->argv, "-shared");
    arg(&j->argv, "-o");
    arg(&j->argv, b->tmp_so);
    for (int i = 0; i < b->n; i++) arg(&j->argv, b->obj[i]);
    if (sh) arg(&j->argv, sh->obj);
    if (sh) arg(&j->argv, "-Wl,--gc-sections");
    arg(&j->argv, "-lm");
    j->what = "the link";
    b->njobs = b->ncompile + 1;
}

/* The shared unit's fresh object: sealed and renamed onto its name in
 * the cache, where later builds find it. */
static ts_status keep_shared(build_t *b, const cfg *c, const shared_t *sh, ts_err *err)
{
    TS_TRY(ts_jit_entry_seal(b->tmp_shared, sh->obj, err));
    if (rename(b->tmp_shared, sh->obj) != 0)
        return ts_err_set(err, TS_ERR_IO, "JIT cache: cannot write '%s': %s", sh->obj, strerror(errno));
    b->tmp_shared[0] = 0;
    return ts_jit_entry_sync_dir(c->dir, err);
}

static ts_status build(const cfg *c, const char *cc_path, const char *key, int n, const char *const *sources,
                       const shared_t *sh, const char *so, ts_err *err)
{
    build_t b;
    memset(&b, 0, sizeof b);
    b.n = n;
    ts_status st = TS_OK;
    const bool separate = n > 1 || (sh && !sh->ready);   /* objects, then a link */
    b.src = ts_mem_zalloc(sizeof *b.src * (size_t)n);
    b.obj = ts_mem_zalloc(sizeof *b.obj * (size_t)n);
    b.jobs = ts_mem_zalloc(sizeof *b.jobs * (size_t)(n + 2));
    if (!b.src || !b.obj || !b.jobs) st = ts_err_set(err, TS_ERR_OOM, "JIT: out of memory");
    for (int i = 0; i < n && st == TS_OK; i++) {
        b.src[i] = path_of(c->dir, key, i);
        if (!b.src[i]) st = ts_err_set(err, TS_ERR_OOM, "JIT: out of memory");
        else st = ts_jit_entry_write(c->dir, b.src[i], sources[i], err);
        if (st == TS_OK && separate) {
            b.obj[i] = ts_mem_zalloc(PATH_MAX);
            st = b.obj[i] ? temp_name(c->dir, key, b.obj[i], err) : ts_err_set(err, TS_ERR_OOM, "JIT: out of memory");
        }
    }
    if (st == TS_OK && sh && !sh->ready) st = temp_name(c->dir, sh->key, b.tmp_shared, err);
    if (st == TS_OK) st = temp_name(c->dir, key, b.tmp_so, err);
    if (st == TS_OK) {
        build_jobs(&b, c, sh);
        st = run_jobs(b.jobs, b.ncompile, c->jobs, cc_path, c->cc, c->dir, err);
        if (st == TS_OK && sh && !sh->ready) st = keep_shared(&b, c, sh, err);
        if (st == TS_OK && b.njobs > b.ncompile) st = run_jobs(b.jobs + b.ncompile, 1, 1, cc_path, c->cc, c->dir, err);
    }
    /* the trailer and fsync before the rename: whatever name a crash
     * leaves behind holds a whole, checkable object */
    if (st == TS_OK) st = ts_jit_entry_seal(b.tmp_so, so, err);
    if (st == TS_OK) {
        if (rename(b.tmp_so, so) != 0) {
            st = ts_err_set(err, TS_ERR_IO, "JIT cache: cannot write '%s': %s", so, strerror(errno));
        } else {
            b.tmp_so[0] = 0;  /* gone: build_free must not unlink a name that may be reused */
            st = ts_jit_entry_sync_dir(c->dir, err);
        }
    }
    build_free(&b);
    return st;
}

/* ---- loading ------------------------------------------------------------------- */

/* The cached object at so, loaded, or NULL for the caller to rebuild: it
 * is missing, fails its check (cut short, zeroed, altered, no trailer:
 * jit_entry.h), or does not load. Checked before dlopen because dlopen
 * maps the file, and touching a page past the end of a cut-short file
 * is SIGBUS, which no error path can catch. */
static void *load_cached(const char *so)
{
    if (ts_jit_entry_check(so)) return NULL;
    return dlopen(so, RTLD_NOW | RTLD_LOCAL);
}

/* Load the object just built, checked like any other (another process
 * may have put its own build of the key there since: also checked). */
static ts_status load_fresh(const char *so, void **h, ts_err *err)
{
    const char *why = ts_jit_entry_check(so);
    if (why)
        return ts_err_set(err, TS_ERR_IO, "JIT cache: '%s' fails its check right after it was written: %s", so, why);
    *h = dlopen(so, RTLD_NOW | RTLD_LOCAL);
    if (*h) return TS_OK;
    const char *e = dlerror();
    ts_err_set(err, TS_ERR_TOOLCHAIN, "JIT: cannot load '%s': %s", so, e ? e : "unknown error");
    unlink(so);  /* it would fail the same way next time */
    return TS_ERR_TOOLCHAIN;
}

/* ---- the entry points ------------------------------------------------------------ */

/* The shared unit's files (sh->key set); its object checked, and its
 * source written when this build must compile it. */
static ts_status shared_find(const cfg *c, const char *text, shared_t *sh, ts_err *err)
{
    if (snprintf(sh->src, sizeof sh->src, "%s/%s.0.c", c->dir, sh->key) >= (int)sizeof sh->src ||
        snprintf(sh->obj, sizeof sh->obj, "%s/%s.o", c->dir, sh->key) >= (int)sizeof sh->obj)
        return ts_err_set(err, TS_ERR_IO, "JIT cache: directory path too long");
    sh->ready = ts_jit_entry_check(sh->obj) == NULL;
    if (sh->ready) {
        ts_jit_cache_touch(sh->obj);   /* in use: the last thing a trim removes */
        return TS_OK;
    }
    return ts_jit_entry_write(c->dir, sh->src, text, err);
}

ts_status ts_jit_compile_shared(const ts_jit_opts *o, const char *shared, int n, const char *const *sources,
                                ts_jit_module **out, bool *hit, double *ms, ts_err *err)
{
    double t0 = ts_now_ms();
    *out = NULL;
    if (hit) *hit = false;
    if (ms) *ms = 0;
    cfg c;
    char cc_path[PATH_MAX], id[PATH_MAX + 256], key[TS_JIT_KEY_HEX + 1], so[PATH_MAX];
    shared_t sh;
    TS_TRY(check_sources(n, sources, err));
    TS_TRY(resolve(o, &c, err));
    TS_TRY(make_dir(c.dir, err));
    TS_TRY(identify(c.cc, c.dir, cc_path, id, sizeof id, err));
    if (shared) make_key(id, c.shared_flags, 1, &shared, NULL, sh.key);
    make_key(id, c.flags, n, sources, shared ? sh.key : NULL, key);
    if (snprintf(so, sizeof so, "%s/%s.so", c.dir, key) >= (int)sizeof so)
        return ts_err_set(err, TS_ERR_IO, "JIT cache: directory path too long");

    void *h = load_cached(so);
    bool cached = h != NULL;
    if (cached) ts_jit_cache_touch(so);
    if (!h) {
        if (shared) TS_TRY(shared_find(&c, shared, &sh, err));
        ts_status s = build(&c, cc_path, key, n, sources, shared ? &sh : NULL, so, err);
        if (s != TS_OK) return s;
        /* Trimming is upkeep: a cache we cannot read or trim still built
         * this module, so that does not fail the compile; running out of
         * memory does, as everywhere (the object stays cached). */
        if (ts_jit_cache_trim(o, ts_jit_cache_limit_bytes(), key, NULL, err) == TS_ERR_OOM) return TS_ERR_OOM;
        ts_err_clear(err);
        TS_TRY(load_fresh(so, &h, err));
    }
    size_t len = strlen(so) + 1;
    ts_jit_module *m = ts_mem_alloc(sizeof *m + len);
    if (!m) {
        dlclose(h);
        return ts_err_set(err, TS_ERR_OOM, "JIT: out of memory");
    }
    m->handle = h;
    memcpy(m->path, so, len);
    *out = m;
    if (hit) *hit = cached;
    if (ms) *ms = ts_now_ms() - t0;
    return TS_OK;
}

ts_status ts_jit_compile(const ts_jit_opts *o, int n, const char *const *sources, ts_jit_module **out,
                         bool *hit, double *ms, ts_err *err)
{
    return ts_jit_compile_shared(o, NULL, n, sources, out, hit, ms, err);
}

ts_status ts_jit_probe(const ts_jit_opts *o, ts_err *err)
{
    static const char src[] = "int ts_jit_probe(void) { return 42; }\n";
    const char *units[] = {src};
    ts_jit_module *m = NULL;
    TS_TRY(ts_jit_compile(o, 1, units, &m, NULL, NULL, err));
    int (*fn)(void) = NULL;
    *(void **)&fn = ts_jit_sym(m, "ts_jit_probe");
    int got = fn ? fn() : 0;
    ts_jit_free(m);
    if (got != 42) return ts_err_set(err, TS_ERR_TOOLCHAIN, "JIT: the C compiler's probe module does not run");
    return TS_OK;
}

void *ts_jit_sym(const ts_jit_module *m, const char *name)
{
    return m && name ? dlsym(m->handle, name) : NULL;
}

const char *ts_jit_path(const ts_jit_module *m) { return m ? m->path : NULL; }

void ts_jit_free(ts_jit_module *m)
{
    if (!m) return;
    dlclose(m->handle);
    ts_mem_free(m);
}

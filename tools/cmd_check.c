/* cmd_check.c — `tessera check PATH... [--xfail FILE] [--target T] [-j N]
 * [--timeout S] [--rtol X] [--atol X] [--verbose]`: run ONNX backend test
 * cases and report one line per case, then "N passed, N failed".
 *
 * Each case runs in a child process (fork), so that nothing a model does —
 * a crash, a sanitizer report, a run past --timeout — takes the other cases
 * down with it; the child sends its one line back through a pipe and the
 * parent prints the lines in case order. -j runs that many children at
 * once. --batch N runs up to N cases in one child, one after another (a
 * device driver starts once per child: PoCL's ~0.5 s); a case that kills
 * its child fails alone, and the cases after it run in a new child. */
#include "check.h"

#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---- finding cases ------------------------------------------------------------------ */

typedef struct case_list {
    check_case *c;
    int n, cap;
} case_list;

static char *join(const char *dir, const char *name)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *p = malloc(n);
    if (p) snprintf(p, n, "%s/%s", dir, name);
    return p;
}

static int add_case(case_list *l, const char *name, const char *dir, const char *model, bool light)
{
    if (l->n == l->cap) {
        int cap = l->cap ? l->cap * 2 : 256;
        check_case *c = realloc(l->c, sizeof *c * (size_t)cap);
        if (!c) return fail("out of memory");
        l->c = c;
        l->cap = cap;
    }
    check_case *c = &l->c[l->n];
    c->name = strdup(name);
    c->dir = strdup(dir);
    c->model = strdup(model);
    c->light = light;
    if (!c->name || !c->dir || !c->model) return fail("out of memory");
    l->n++;
    return 0;
}

static void case_list_free(case_list *l)
{
    for (int i = 0; i < l->n; i++) {
        free(l->c[i].name);
        free(l->c[i].dir);
        free(l->c[i].model);
    }
    free(l->c);
}

static const char *base_name(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

/* A light model: FILE.onnx beside FILE_output_0.pb. */
static int add_light(case_list *l, const char *path, bool *added)
{
    char stem[4096], out0[8300], dir[4096];
    const char *b = base_name(path);
    snprintf(stem, sizeof stem, "%.*s", (int)(strlen(b) - 5), b);
    if (b == path) snprintf(dir, sizeof dir, ".");
    else snprintf(dir, sizeof dir, "%.*s", (int)(b - path - 1), path);
    snprintf(out0, sizeof out0, "%s/%s_output_0.pb", dir, stem);
    *added = is_file(out0);
    return *added ? add_case(l, stem, dir, path, true) : 0;
}

/* PATH: a case folder (model.onnx), a light model, or a folder searched
 * (in name order, down to `depth` more levels) for those. */
static int expand(case_list *l, const char *path, int depth, bool *found)
{
    char *model = join(path, "model.onnx");
    if (!model) return fail("out of memory");
    if (is_file(model)) {
        /* the folder's own name, whatever slashes end the path (DIR/, DIR//) */
        char name[4096];
        size_t len = strlen(path);
        while (len > 1 && path[len - 1] == '/') len--;
        snprintf(name, sizeof name, "%.*s", (int)len, path);
        int r = add_case(l, base_name(name), path, model, false);
        free(model);
        *found = true;
        return r;
    }
    free(model);
    if (has_ext(path, ".onnx") && is_file(path)) {
        bool added = false;
        if (add_light(l, path, &added)) return 1;
        *found |= added;
        return 0;
    }
    if (depth == 0 || !is_dir(path)) return 0;
    struct dirent **ents = NULL;
    int n = scandir(path, &ents, NULL, alphasort), r = 0;
    if (n < 0) return fail("cannot read '%s': %s", path, strerror(errno));
    for (int i = 0; i < n; i++) {
        char *sub = ents[i]->d_name[0] == '.' ? NULL : join(path, ents[i]->d_name);
        if (sub && !r) r = expand(l, sub, depth - 1, found);
        free(sub);
        free(ents[i]);
    }
    free(ents);
    return r;
}

static int find_cases(case_list *l, const cli *c)
{
    for (int i = 0; i < c->n_files; i++) {
        const char *p = c->files[i];
        bool found = false;
        if (!is_dir(p) && !is_file(p)) return fail("'%s' does not exist", p);
        if (expand(l, p, 3, &found)) return 1;
        if (!found)
            return fail("'%s' holds no test case (a folder with model.onnx and test_data_set_N, or NAME.onnx "
                        "with NAME_output_0.pb)", p);
    }
    return 0;
}

/* --shard K/N: cases K, K+N, K+2N, ... (1-based, in the sorted order they
 * were found in), so N machines or CI jobs split a suite. */
static void keep_shard(case_list *l, long k, long n)
{
    int kept = 0;
    for (int i = 0; i < l->n; i++) {
        if (i % n == k - 1) {
            l->c[kept++] = l->c[i];
            continue;
        }
        free(l->c[i].name), free(l->c[i].dir), free(l->c[i].model);
    }
    l->n = kept;
}

/* ---- the expected-failure list ------------------------------------------------------- */

typedef struct xfail_list {
    char **name;         /* sorted */
    int n;
} xfail_list;

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* One case name per line, first word; '#' starts a comment. */
static int xfail_read(xfail_list *x, const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) return fail("%s: %s", path, strerror(errno));
    char line[4096];
    int cap = 0, r = 0;
    while (!r && fgets(line, sizeof line, f)) {
        char *hash = strchr(line, '#');
        if (hash) *hash = 0;
        char *w = line + strspn(line, " \t\r\n");
        w[strcspn(w, " \t\r\n")] = 0;
        if (!*w) continue;
        if (x->n == cap) {
            cap = cap ? cap * 2 : 256;
            char **grown = realloc(x->name, sizeof *grown * (size_t)cap);
            if (!grown) r = fail("out of memory");
            else x->name = grown;
        }
        if (!r && !(x->name[x->n++] = strdup(w))) r = fail("out of memory");
    }
    fclose(f);
    if (r) return r;
    qsort(x->name, (size_t)x->n, sizeof *x->name, cmp_str);
    return 0;
}

static int xfail_find(const xfail_list *x, const char *name)
{
    if (!x->n) return -1;
    char **hit = bsearch(&name, x->name, (size_t)x->n, sizeof *x->name, cmp_str);
    return hit ? (int)(hit - x->name) : -1;
}

static void xfail_free(xfail_list *x)
{
    for (int i = 0; i < x->n; i++) free(x->name[i]);
    free(x->name);
}

/* ---- running cases in children --------------------------------------------------------- */

/* A child process and the cases it runs, in order (--batch: more than one,
 * so that a device driver's start-up is paid once per batch, not per
 * case). Its lines come through its pipe, each ended by a NUL, and are
 * kept until it exits: how it ended qualifies them. */
typedef struct job {
    pid_t pid;
    int fd;          /* read end of the child's pipe */
    int *idx, n;     /* its cases */
    char **got;      /* by position in idx: the line received, or NULL */
    int done;        /* lines received */
    char part[CHECK_LINE_MAX];
    size_t part_len; /* the line being received */
} job;

/* The wall-clock backstop of --timeout S. */
static long wall_limit(long timeout_s) { return timeout_s * 10 + 60; }

/* Limits for the next case: timeout_s of CPU time from now (SIGXCPU at
 * the soft limit, moved per case; a one-case child gets the hard limit
 * 10 s later too) and the wall-clock alarm. CPU time, not wall time, so
 * a busy machine does not fail a case; the alarm only catches a case
 * that blocks without computing. */
static void limit_case(long timeout_s, bool alone)
{
    if (timeout_s <= 0) return;
    struct rusage ru;
    struct rlimit rl;
    getrusage(RUSAGE_SELF, &ru);
    getrlimit(RLIMIT_CPU, &rl);
    rlim_t used = (rlim_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) + 1;
    rl.rlim_cur = used + (rlim_t)timeout_s;
    if (alone) rl.rlim_max = rl.rlim_cur + 10;
    else if (rl.rlim_max != RLIM_INFINITY && rl.rlim_cur > rl.rlim_max) rl.rlim_cur = rl.rlim_max;
    setrlimit(RLIMIT_CPU, &rl);
    alarm((unsigned)wall_limit(timeout_s));
}

static void send_line(int fd, const char *line)
{
    size_t len = strlen(line) + 1, off = 0;   /* with its NUL */
    while (off < len) {
        ssize_t w = write(fd, line + off, len - off);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) break;
        off += (size_t)w;
    }
}

/* The child: run its cases, write their lines, exit through exit() so
 * that sanitizers' at-exit checks (leaks) run and show in the status. */
static void child(const case_list *l, const job *j, const check_opts *o, int fd, long timeout_s)
{
    static char line[CHECK_LINE_MAX];
    for (int k = 0; k < j->n; k++) {
        limit_case(timeout_s, j->n == 1);
        check_run_case(&l->c[j->idx[k]], o, line, sizeof line);
        send_line(fd, line);
    }
    close(fd);
    exit(0);
}

static void job_free(job *j)
{
    for (int k = 0; j->got && k < j->n; k++) free(j->got[k]);
    free(j->got);
    free(j->idx);
    *j = (job){.fd = -1};
}

/* Start cases idx[0..n) in a child. */
static int start(const case_list *l, const int *idx, int n, const check_opts *o, long timeout_s, job *j)
{
    *j = (job){.fd = -1, .n = n, .idx = malloc(sizeof *j->idx * (size_t)n), .got = calloc((size_t)n, sizeof *j->got)};
    if (!j->idx || !j->got) return job_free(j), fail("out of memory");
    memcpy(j->idx, idx, sizeof *idx * (size_t)n);
    int fds[2];
    if (pipe(fds) != 0) return job_free(j), fail("pipe: %s", strerror(errno));
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        job_free(j);
        return fail("fork: %s", strerror(errno));
    }
    if (pid == 0) {
        close(fds[0]);
        child(l, j, o, fds[1], timeout_s);
    }
    close(fds[1]);
    j->pid = pid;
    j->fd = fds[0];
    return 0;
}

/* Read what is there from j's pipe; false at its end. */
static bool receive(job *j)
{
    char buf[4096];
    ssize_t r = read(j->fd, buf, sizeof buf);
    if (r < 0 && errno == EINTR) return true;
    if (r <= 0) return false;
    for (ssize_t i = 0; i < r; i++) {
        if (buf[i]) {
            if (j->part_len + 1 < sizeof j->part) j->part[j->part_len++] = buf[i];
            continue;
        }
        j->part[j->part_len] = 0;
        if (j->done < j->n) j->got[j->done++] = strdup(j->part);
        j->part_len = 0;
    }
    return true;
}

/* Case c's line after its child ended with status before finishing it
 * (got: the line it sent, if any). */
static char *finish(const check_case *c, const char *got, int status, long timeout_s)
{
    char line[CHECK_LINE_MAX + 256];
    int sig = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
    if (timeout_s > 0 && sig == SIGXCPU)
        snprintf(line, sizeof line, "FAIL %s: timed out (over %ld s of CPU time)", c->name, timeout_s);
    else if (timeout_s > 0 && sig == SIGALRM)
        snprintf(line, sizeof line, "FAIL %s: timed out (over %ld s of wall-clock time)", c->name,
                 wall_limit(timeout_s));
    else if (WIFSIGNALED(status))
        snprintf(line, sizeof line, "FAIL %s: crashed (signal %d: %s)", c->name, WTERMSIG(status),
                 strsignal(WTERMSIG(status)));
    else if (!got)
        snprintf(line, sizeof line, "FAIL %s: exited with status %d and no result", c->name, WEXITSTATUS(status));
    else if (WEXITSTATUS(status) != 0)
        snprintf(line, sizeof line, "FAIL %s: exited with status %d after the case (a sanitizer report is on "
                 "stderr); it said: %s", c->name, WEXITSTATUS(status), got);
    else snprintf(line, sizeof line, "%s", got);
    return strdup(line);
}

/* Job j's child has ended: its cases' lines into lines[]. The case it
 * was running when it died gets the reason, the cases before it their
 * lines; those after it go back to the queue (*requeue, in order). A
 * nonzero exit after every line (a sanitizer's at-exit report) fails
 * each case of the child. */
static int settle(const case_list *l, job *j, int status, long timeout_s, char **lines, int *requeue, int *n_requeue)
{
    const bool clean = (WIFEXITED(status) && WEXITSTATUS(status) == 0) || j->done < j->n;
    for (int k = 0; k < j->n; k++) {
        int i = j->idx[k];
        if (k < j->done) lines[i] = clean ? strdup(j->got[k]) : finish(&l->c[i], j->got[k], status, timeout_s);
        else if (k == j->done) lines[i] = finish(&l->c[i], NULL, status, timeout_s);
        else requeue[(*n_requeue)++] = i;
        if (k <= j->done && !lines[i]) return fail("out of memory");
    }
    return 0;
}

/* Run every case, up to `jobs` children at once, `batch` cases each;
 * lines[i] receives case i's line. */
static int run_cases(const case_list *l, const check_opts *o, long jobs, long batch, long timeout_s, char **lines,
                     void (*report)(int i, void *ud), void *ud)
{
    job *running = calloc((size_t)jobs, sizeof *running);
    int *queue = malloc(sizeof *queue * (size_t)(l->n + 1));
    struct pollfd *pf = calloc((size_t)jobs, sizeof *pf);
    if (!running || !queue || !pf) return free(running), free(queue), free(pf), fail("out of memory");
    for (int i = 0; i < l->n; i++) queue[i] = i;
    int head = 0, tail = l->n, active = 0, printed = 0, r = 0;
    while (printed < l->n && !r) {
        while (!r && active < jobs && head < tail) {
            int n = tail - head < batch ? tail - head : (int)batch;
            r = start(l, queue + head, n, o, timeout_s, &running[active]);
            head += n;
            if (!r) active++;
        }
        if (r) break;
        for (int k = 0; k < active; k++) pf[k] = (struct pollfd){.fd = running[k].fd, .events = POLLIN};
        if (poll(pf, (nfds_t)active, -1) < 0) {
            if (errno == EINTR) continue;
            r = fail("poll: %s", strerror(errno));
            break;
        }
        for (int k = active - 1; k >= 0 && !r; k--) {
            if (!pf[k].revents || receive(&running[k])) continue;
            job *j = &running[k];   /* at its end: the child is exiting */
            close(j->fd);
            int status = 0;
            while (waitpid(j->pid, &status, 0) < 0 && errno == EINTR) continue;
            int requeue[1024], n_requeue = 0;   /* at most batch - 1 (--batch <= 1024) */
            r = settle(l, j, status, timeout_s, lines, requeue, &n_requeue);
            memmove(queue, queue + head, sizeof *queue * (size_t)(tail - head));
            tail -= head, head = 0;
            for (int q = 0; q < n_requeue; q++) queue[tail++] = requeue[q];
            job_free(j);
            running[k] = running[--active];
        }
        while (!r && printed < l->n && lines[printed]) report(printed++, ud);
    }
    for (int k = 0; k < active; k++) {   /* only after an error */
        kill(running[k].pid, SIGKILL);
        waitpid(running[k].pid, NULL, 0);
        close(running[k].fd);
        job_free(&running[k]);
    }
    free(running);
    free(queue);
    free(pf);
    return r;
}

/* ---- reporting ------------------------------------------------------------------------- */

typedef struct report_state {
    const case_list *l;
    char **lines;
    xfail_list *x;
    int passed, failed, unexpected;
} report_state;

static void report(int i, void *ud)
{
    report_state *rs = ud;
    const char *line = rs->lines[i];
    bool pass = strncmp(line, "PASS ", 5) == 0;
    printf("%s\n", line);
    fflush(stdout);
    rs->passed += pass;
    rs->failed += !pass;
}

/* After all lines: the violations of the expected-failure list. */
static void report_xfail(report_state *rs, const char *path)
{
    int expected = 0;
    for (int i = 0; i < rs->l->n; i++) {
        const char *line = rs->lines[i];
        bool pass = strncmp(line, "PASS ", 5) == 0;
        bool listed = xfail_find(rs->x, rs->l->c[i].name) >= 0;
        if (pass && listed) printf("UNEXPECTED PASS %s\n", rs->l->c[i].name);
        else if (!pass && !listed) printf("UNEXPECTED %s\n", line);
        else expected += !pass;
        rs->unexpected += pass == listed;
    }
    printf("xfail %s: %d failed as listed, %d unexpected\n", path, expected, rs->unexpected);
}

/* A target that ts_session_new refuses is an error before any case runs.
 * The default (NULL) is settled here, once: the probe graph has a kernel,
 * so "cpu" really compiles, and if it falls back to the interpreter the
 * library warns once, here, and every case then runs on "interp" rather
 * than each child trying the compiler again. *resolved: a static string. */
static int check_target(const char *target, const char **resolved)
{
    static const char text[] = "graph @t(%x: f32[1]) {\n  %y: f32[1] = add(%x, %x)\n  return %y\n}\n";
    ts_graph *g = NULL;
    ts_session *s = NULL;
    ts_err err = {0};
    ts_status st = ts_graph_parse(text, sizeof text - 1, "target-probe", &g, &err);
    if (st == TS_OK) st = ts_session_new(g, target, &s, &err);
    if (st == TS_OK) *resolved = ts_session_target(s);   /* the target's own name: static */
    ts_session_free(s);
    ts_graph_free(g);
    if (st == TS_OK) return 0;
    return target ? fail("--target %s: %s", target, err.msg) : fail("%s", err.msg);
}

/* check_target in a child process: a target may start threads of its
 * own (an OpenCL driver does), which a process forked later would not
 * have, so the parent, which forks a child per case, never opens one.
 * The child sends the resolved name back through a pipe; its error, if
 * any, is on stderr already. */
static int check_target_apart(const char *target, const char **resolved)
{
    static char name[64];
    int fd[2];
    if (pipe(fd) != 0) return fail("pipe: %s", strerror(errno));
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        close(fd[0]), close(fd[1]);
        return fail("fork: %s", strerror(errno));
    }
    if (pid == 0) {
        close(fd[0]);
        const char *r = NULL;
        int bad = check_target(target, &r);
        if (!bad && write(fd[1], r, strlen(r)) != (ssize_t)strlen(r)) bad = 1;
        _exit(bad);
    }
    close(fd[1]);
    ssize_t n = 0, got;
    while (n < (ssize_t)sizeof name - 1 && (got = read(fd[0], name + n, sizeof name - 1 - (size_t)n)) > 0) n += got;
    close(fd[0]);
    name[n] = 0;
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) continue;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || n == 0) return 1;
    *resolved = name;
    return 0;
}

int cmd_check(int argc, char **argv)
{
    cli c = {0};
    unsigned opts =
        OPT_XFAIL | OPT_TARGET | OPT_VERBOSE | OPT_JOBS | OPT_TIMEOUT | OPT_RTOL | OPT_ATOL | OPT_SHARD | OPT_BATCH;
    if (parse_args(&c, argc, argv, opts, MAX_FILES)) return 1;
    if (c.help) return usage();
    if (!c.n_files) return fail("no test case given (see tessera --help)");
    check_opts o = {NULL, c.rtol_given ? c.rtol : 1e-3, c.atol_given ? c.atol : 1e-7, c.rtol_given || c.atol_given,
                    c.verbose};
    if (check_target_apart(c.target, &o.target)) return 1;
    case_list l = {0};
    xfail_list x = {0};
    int r = find_cases(&l, &c);
    if (!r && c.shard_n) keep_shard(&l, c.shard_k, c.shard_n);
    if (!r && c.xfail) r = xfail_read(&x, c.xfail);
    char **lines = r ? NULL : calloc((size_t)l.n + 1, sizeof *lines);
    if (!r && !lines) r = fail("out of memory");
    report_state rs = {&l, lines, c.xfail ? &x : NULL, 0, 0, 0};
    if (!r) r = run_cases(&l, &o, c.jobs ? c.jobs : 1, c.batch ? c.batch : 1, c.timeout_s, lines, report, &rs);
    if (!r) {
        if (c.xfail) report_xfail(&rs, c.xfail);
        printf("%d passed, %d failed\n", rs.passed, rs.failed);
        r = c.xfail ? rs.unexpected > 0 : rs.failed > 0;
    }
    for (int i = 0; lines && i < l.n; i++) free(lines[i]);
    free(lines);
    xfail_free(&x);
    case_list_free(&l);
    return r;
}

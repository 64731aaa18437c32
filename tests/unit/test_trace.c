/* test_trace.c — Chrome trace events: record from several threads at once,
 * write, and read the file back with a small strict JSON parser (syntax,
 * event count, names decoded back to what was recorded, invalid UTF-8
 * replaced); interned names; I/O errors. */
#include "check.h"
#include "core/clock.h"
#include "core/core.h"
#include "runtime/trace.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- a small JSON reader ------------------------------------------------- */

typedef struct jp {
    const char *s;
    int x_events;        /* objects with "ph":"X" */
    char names[16][64];  /* the first decoded "name" strings */
    int nnames;
} jp;

static void ws(jp *p)
{
    while (*p->s == ' ' || *p->s == '\n' || *p->s == '\t' || *p->s == '\r') p->s++;
}

static void put_utf8(char **o, char *end, unsigned cp)
{
    char b[4];
    int n = cp < 0x80 ? 1 : cp < 0x800 ? 2 : 3;
    if (n == 1) b[0] = (char)cp;
    if (n == 2) b[0] = (char)(0xC0 | cp >> 6), b[1] = (char)(0x80 | (cp & 0x3F));
    if (n == 3) b[0] = (char)(0xE0 | cp >> 12), b[1] = (char)(0x80 | (cp >> 6 & 0x3F)), b[2] = (char)(0x80 | (cp & 0x3F));
    for (int i = 0; i < n && *o < end; i++) *(*o)++ = b[i];
}

/* A string literal, decoded into out (truncated to cap); false if malformed. */
static bool jstring(jp *p, char *out, size_t cap)
{
    char *o = out, *end = out + cap - 1;
    if (*p->s++ != '"') return false;
    for (;;) {
        unsigned char c = (unsigned char)*p->s++;
        if (c == '"') break;
        if (c < 0x20) return false;  /* raw control characters are not JSON */
        if (c != '\\') {
            if (o < end) *o++ = (char)c;
            continue;
        }
        c = (unsigned char)*p->s++;
        const char *esc = strchr("\"\\/bfnrt", c);
        if (esc && c) {
            if (o < end) *o++ = "\"\\/\b\f\n\r\t"[esc - "\"\\/bfnrt"];
        } else if (c == 'u') {
            unsigned cp = 0;
            for (int i = 0; i < 4; i++) {
                char h = *p->s++;
                unsigned d = h >= '0' && h <= '9' ? (unsigned)(h - '0') : h >= 'a' && h <= 'f' ? (unsigned)(h - 'a' + 10)
                             : h >= 'A' && h <= 'F' ? (unsigned)(h - 'A' + 10) : 99;
                if (d == 99) return false;
                cp = cp * 16 + d;
            }
            put_utf8(&o, end, cp);
        } else {
            return false;
        }
    }
    *o = 0;
    return true;
}

static bool jvalue(jp *p, int depth);

static bool jnumber(jp *p)
{
    char *end;
    strtod(p->s, &end);
    if (end == p->s || (*p->s != '-' && (*p->s < '0' || *p->s > '9'))) return false;
    p->s = end;
    return true;
}

static bool jobject(jp *p, int depth)
{
    p->s++;
    ws(p);
    if (*p->s == '}') return p->s++, true;
    for (;;) {
        char key[64], sval[64];
        ws(p);
        if (*p->s != '"' || !jstring(p, key, sizeof key)) return false;
        ws(p);
        if (*p->s++ != ':') return false;
        ws(p);
        if (*p->s == '"') {
            if (!jstring(p, sval, sizeof sval)) return false;
            if (strcmp(key, "ph") == 0 && strcmp(sval, "X") == 0) p->x_events++;
            if (strcmp(key, "name") == 0 && p->nnames < 16) strcpy(p->names[p->nnames++], sval);
        } else if (!jvalue(p, depth + 1)) {
            return false;
        }
        ws(p);
        if (*p->s == ',') {
            p->s++;
            continue;
        }
        return *p->s++ == '}';
    }
}

static bool jarray(jp *p, int depth)
{
    p->s++;
    ws(p);
    if (*p->s == ']') return p->s++, true;
    for (;;) {
        if (!jvalue(p, depth + 1)) return false;
        ws(p);
        if (*p->s == ',') {
            p->s++;
            continue;
        }
        return *p->s++ == ']';
    }
}

static bool jvalue(jp *p, int depth)
{
    char tmp[64];
    ws(p);
    if (depth > 32) return false;
    switch (*p->s) {
    case '{': return jobject(p, depth);
    case '[': return jarray(p, depth);
    case '"': return jstring(p, tmp, sizeof tmp);
    case 't': return strncmp(p->s, "true", 4) == 0 && (p->s += 4, true);
    case 'f': return strncmp(p->s, "false", 5) == 0 && (p->s += 5, true);
    case 'n': return strncmp(p->s, "null", 4) == 0 && (p->s += 4, true);
    default: return jnumber(p);
    }
}

/* Parse a whole document: one value and nothing after it. */
static bool jparse(jp *p, const char *text)
{
    memset(p, 0, sizeof *p);
    p->s = text;
    if (!jvalue(p, 0)) return false;
    ws(p);
    return *p->s == 0;
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc((size_t)n + 1);
    size_t got = fread(b, 1, (size_t)n, f);
    b[got] = 0;
    fclose(f);
    return b;
}

static char path[256];

static void make_path(void)
{
    const char *dir = getenv("TMPDIR");
    snprintf(path, sizeof path, "%s/tessera_trace_XXXXXX", dir && *dir ? dir : "/tmp");
    int fd = mkstemp(path);
    if (fd >= 0) close(fd);
}

/* ---- tests ------------------------------------------------------------------ */

static void test_names(void)
{
    ts_trace *t = NULL;
    ts_err err = {0};
    CHECK(ts_trace_new(&t, &err) == TS_OK);
    const char *names[] = {"plain", "quote\" back\\slash", "line\nfeed\ttab\x01", "\xc3\xbc\xe2\x86\x92 ok",
                           "bad \xff byte"};
    for (int i = 0; i < 5; i++) ts_trace_add(t, names[i], i ? "kernel" : NULL, 1000.0 + i, 2.5, i);
    char built[32];
    snprintf(built, sizeof built, "run %d", 7);
    const char *in = ts_trace_intern(t, built);
    memset(built, 'x', sizeof built - 1);  /* the trace's copy must not care */
    ts_trace_add(t, in, "run", 0, 10, 0);
    ts_trace_add(t, "nan", "x", 0.0 / 0.0, -1, 0);
    CHECK(ts_trace_count(t) == 7 && ts_trace_dropped(t) == 0);
    CHECK(ts_trace_write(t, path, &err) == TS_OK);
    char *text = slurp(path);
    jp p;
    CHECK(text && jparse(&p, text));
    CHECK(p.x_events == 7);
    /* names[0] is the process_name metadata event, then the events in order */
    CHECK(p.nnames == 9);
    CHECK_STR(p.names[0], "process_name");
    for (int i = 0; i < 4; i++) CHECK_STR(p.names[i + 2], names[i]);
    CHECK_STR(p.names[6], "bad \xef\xbf\xbd byte");
    CHECK_STR(p.names[7], "run 7");
    CHECK(text && strstr(text, "\"ts\":1003.000,\"dur\":2.500,\"pid\":1,\"tid\":3"));
    CHECK(text && strstr(text, "\"name\":\"nan\",\"cat\":\"x\",\"ph\":\"X\",\"ts\":0.000,\"dur\":0.000"));
    free(text);
    ts_trace_free(t);
}

typedef struct rec_arg {
    ts_trace *t;
    int tid;
} rec_arg;

enum { PER_THREAD = 10000, THREADS = 4 };

static void *recorder(void *arg)
{
    rec_arg *a = arg;
    for (int i = 0; i < PER_THREAD; i++) {
        double t0 = ts_now_us();
        ts_trace_add(a->t, "k", "kernel", t0, 0.1, a->tid);
    }
    return NULL;
}

static void test_threads(void)
{
    ts_trace *t = NULL;
    CHECK(ts_trace_new(&t, NULL) == TS_OK);
    pthread_t th[THREADS];
    rec_arg args[THREADS];
    double t0 = ts_now_us();
    for (int i = 0; i < THREADS; i++) {
        args[i] = (rec_arg){t, i};
        pthread_create(&th[i], NULL, recorder, &args[i]);
    }
    for (int i = 0; i < THREADS; i++) pthread_join(th[i], NULL);
    double us = ts_now_us() - t0;
    CHECK(ts_trace_count(t) == PER_THREAD * THREADS);
    printf("trace: %d events from %d threads in %.0f us (%.0f ns an event, clock reads included)\n",
           PER_THREAD * THREADS, THREADS, us, us * 1e3 / (PER_THREAD * THREADS));
    ts_err err = {0};
    CHECK(ts_trace_write(t, path, &err) == TS_OK);
    char *text = slurp(path);
    jp p;
    CHECK(text && jparse(&p, text));
    CHECK(p.x_events == PER_THREAD * THREADS);
    free(text);
    ts_trace_free(t);
}

static void test_errors(void)
{
    ts_trace *t = NULL;
    ts_err err = {0};
    CHECK(ts_trace_new(&t, &err) == TS_OK);
    ts_trace_add(NULL, "ignored", NULL, 0, 0, 0);  /* profiling off */
    CHECK(ts_trace_intern(NULL, "x") == NULL);
    CHECK(ts_trace_write(t, "/nonexistent-dir/trace.json", &err) == TS_ERR_IO);
    CHECK(strstr(err.msg, "/nonexistent-dir/trace.json") != NULL);
    /* an empty trace is still a loadable file */
    CHECK(ts_trace_write(t, path, NULL) == TS_OK);
    char *text = slurp(path);
    jp p;
    CHECK(text && jparse(&p, text) && p.x_events == 0);
    free(text);
    ts_trace_free(t);
    ts_trace_free(NULL);
}

int main(void)
{
    make_path();
    test_names();
    test_threads();
    test_errors();
    unlink(path);
    return check_report();
}

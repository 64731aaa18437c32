/* test_parse_fuzz.c — the parser against corrupted text.
 *
 * Every file under tests/ir/ is mutated thousands of times by a fixed PRNG
 * (byte flips, deletions, random bytes, grammar tokens, huge numbers, NUL
 * bytes, duplicated, swapped and deleted lines) and a few files are cut at
 * every byte. Each variant must either parse — and then verify and
 * round-trip print -> parse -> print — or fail with a parse/shape/model/
 * unsupported code and a "fuzz.ir:LINE:COL:" message; never crash or leak
 * (the ASan build runs this). Then every allocation of a parse and of a
 * print is failed in turn: TS_ERR_OOM or success, and no leak.
 *
 * TS_FUZZ_SEED and TS_FUZZ_VARIANTS (total, default 100000) override the run. */
#include "ir/ir.h"

#include "check.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* ---- the corpus --------------------------------------------------------------- */

typedef struct entry {
    char path[512];
    char *text;
    size_t len;
} entry;

enum { MAX_FILES = 512 };
static entry corpus[MAX_FILES];
static int n_corpus;

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    for (size_t got; buf && (got = fread(buf + n, 1, cap - n, f)) > 0;) {
        n += got;
        if (n == cap) buf = realloc(buf, cap *= 2);
    }
    fclose(f);
    *len = n;
    return buf;
}

static void load_dir(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) return;
    for (struct dirent *e; (e = readdir(d)) && n_corpus < MAX_FILES;) {
        if (e->d_name[0] == '.') continue;
        entry *c = &corpus[n_corpus];
        snprintf(c->path, sizeof c->path, "%s/%s", dir, e->d_name);
        struct stat st;
        size_t n = strlen(c->path);
        if (stat(c->path, &st) != 0) continue;
        if (S_ISDIR(st.st_mode)) {
            char sub[512];
            snprintf(sub, sizeof sub, "%s", c->path);
            load_dir(sub);
        } else if (n > 3 && strcmp(c->path + n - 3, ".ir") == 0 && (c->text = slurp(c->path, &c->len))) {
            n_corpus++;
        }
    }
    closedir(d);
}

/* ---- the PRNG and the mutations ---------------------------------------------------- */

static uint64_t rng = 0x9e3779b97f4a7c15u;

static uint32_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng >> 16);
}

static size_t below(size_t n) { return n ? rnd() % n : 0; }

typedef struct token {
    const char *s;
    size_t n;
} token;

#define T(x) {x, sizeof(x) - 1}
static const token tokens[] = {
    T("["), T("]"), T("{"), T("}"), T("("), T(")"), T("%"), T(","), T("="), T(":"), T("@"),
    T("nan"), T("inf"), T("-inf"), T("-"), T("+"), T("*"), T("/"), T("\""), T("\\"), T("#"),
    T("\n"), T(" "), T("\0"), T("\xff"), T("\r\n"),
    T("99999999999999999999"), T("18446744073709551616"), T("9223372036854775807"),
    T("-9223372036854775808"), T("4294967296"), T("1e309"), T("1e-400"), T("0"), T("-1"), T("1.5"),
    T("splat("), T("splat(0)"), T("f32["), T("i64"), T("bool[]"), T("f16"), T("%x"), T("%0"), T("%1"),
    T("graph"), T("return"), T("yield"), T("then"), T("else"), T("cond"), T("body"), T("batch"),
    T("max("), T("min("), T("nonzero"), T("if"), T("while"), T("const"), T("value="), T("axis="),
    T("shape=["), T("axes=[]"), T("= neg("), T("%y: f32[4] = "), T("()"), T("[]"), T("{}"),
};

/* Replace buf[at, at+del) by ins[0, n). buf has room (cap). */
static void splice(char *buf, size_t *len, size_t cap, size_t at, size_t del, const char *ins, size_t n)
{
    if (at > *len) at = *len;
    if (del > *len - at) del = *len - at;
    if (*len - del + n > cap) return;
    memmove(buf + at + n, buf + at + del, *len - at - del);
    memcpy(buf + at, ins, n);
    *len = *len - del + n;
}

/* Numbers that probe the edges of every dtype's range and of float text. */
static const char *const numbers[] = {
    "0", "1", "2", "3", "-0", "-1", "0.1", "1.5", "1e-45", "5e-324", "6e-08", "65504", "65520", "3.39e+38",
    "3.4028235e+38", "1e309", "16777217", "nan", "inf", "-inf", "127", "-128", "255", "256", "32767", "65535",
    "2147483647", "-2147483648", "4294967295", "9223372036854775807", "-9223372036854775808",
    "18446744073709551615", "1e+300", "0.30000000000000004",
};

static bool numeric(char c) { return (c >= '0' && c <= '9') || c == '.' || c == 'e' || c == '-' || c == '+'; }

/* Replace the number literal at or after `at` by one of numbers[]. */
static void swap_number(char *buf, size_t *len, size_t cap, size_t at)
{
    while (at < *len && !(buf[at] >= '0' && buf[at] <= '9')) at++;
    if (at >= *len) return;
    size_t a = at, b = at;
    while (a > 0 && numeric(buf[a - 1])) a--;
    while (b < *len && numeric(buf[b])) b++;
    const char *n = numbers[below(sizeof numbers / sizeof numbers[0])];
    splice(buf, len, cap, a, b - a, n, strlen(n));
}

static size_t line_start(const char *s, size_t i)
{
    while (i > 0 && s[i - 1] != '\n') i--;
    return i;
}

static size_t line_end(const char *s, size_t len, size_t i)
{
    while (i < len && s[i] != '\n') i++;
    return i < len ? i + 1 : i;
}

static void mutate_once(char *buf, size_t *len, size_t cap)
{
    size_t at = below(*len + 1);
    char bytes[4];
    switch (rnd() % 12) {
    case 0:
        if (*len) buf[below(*len)] ^= (char)(1u << (rnd() % 8));
        break;
    case 1:
        if (*len) buf[below(*len)] = (char)rnd();
        break;
    case 2:
        splice(buf, len, cap, at, 1 + below(8), "", 0);
        break;
    case 3:
        for (int i = 0; i < 4; i++) bytes[i] = (char)rnd();
        splice(buf, len, cap, at, 0, bytes, 1 + below(4));
        break;
    case 4: case 5: {
        const token *t = &tokens[below(sizeof tokens / sizeof tokens[0])];
        splice(buf, len, cap, at, rnd() % 3 == 0 ? 1 : 0, t->s, t->n);
        break;
    }
    case 6: {  /* duplicate a line */
        size_t a = line_start(buf, at < *len ? at : *len), b = line_end(buf, *len, a);
        char line[512];
        size_t n = b - a < sizeof line ? b - a : sizeof line;
        memcpy(line, buf + a, n);
        splice(buf, len, cap, b, 0, line, n);
        break;
    }
    case 7: {  /* swap a line with a later one */
        size_t a = line_start(buf, at < *len ? at : *len), b = line_end(buf, *len, a);
        size_t c = b, d = line_end(buf, *len, c);
        char first[512], second[512];
        size_t n1 = b - a, n2 = d - c;
        if (n1 > sizeof first || n2 > sizeof second || !n2) break;
        memcpy(first, buf + a, n1);
        memcpy(second, buf + c, n2);
        splice(buf, len, cap, a, n1 + n2, second, n2);
        splice(buf, len, cap, a + n2, 0, first, n1);
        break;
    }
    case 9: case 10:
        swap_number(buf, len, cap, at);
        break;
    case 11: {  /* blanks and comments are not text the printer keeps */
        static const char *const blanks[] = {" ", "\t", "\n", "\r\n", "# note\n", "  # [%x{\n"};
        const char *b = blanks[below(sizeof blanks / sizeof blanks[0])];
        splice(buf, len, cap, line_start(buf, at < *len ? at : *len), 0, b, strlen(b));
        break;
    }
    case 8: {  /* delete a line */
        size_t a = line_start(buf, at < *len ? at : *len), b = line_end(buf, *len, a);
        splice(buf, len, cap, a, b - a, "", 0);
        break;
    }
    }
}

/* ---- the property ---------------------------------------------------------------------- */

static int n_parsed, n_rejected;

/* "fuzz.ir:LINE:COL: " */
static bool has_position(const char *msg)
{
    const char *p = msg;
    if (strncmp(p, "fuzz.ir:", 8) != 0) return false;
    p += 8;
    if (*p < '0' || *p > '9') return false;
    while (*p >= '0' && *p <= '9') p++;
    if (*p++ != ':' || *p < '0' || *p > '9') return false;
    while (*p >= '0' && *p <= '9') p++;
    return *p == ':';
}

static char *print(const ts_graph *g)
{
    char *s = NULL;
    ts_err err = {0};
    CHECK_MSG(ts_graph_to_text(g, &s, &err) == TS_OK, "%s", err.msg);
    return s;
}

static void round_trips(const ts_graph *g, const char *text, size_t len)
{
    ts_err err = {0};
    CHECK_MSG(ts_ir_verify((ts_graph *)g, &err) == TS_OK, "%s", err.msg);
    char *a = print(g);
    ts_graph *g2 = NULL;
    if (!a) return;
    ts_status s = ts_graph_parse(a, strlen(a), "printed.ir", &g2, &err);
    CHECK_MSG(s == TS_OK, "printed text does not parse: %s\n%s\nfrom:\n%.*s", err.msg, a, (int)len, text);
    if (s == TS_OK) {
        char *b = print(g2);
        CHECK_MSG(b && strcmp(a, b) == 0, "print is not stable:\n%s\n---\n%s", a, b ? b : "");
        ts_free_string(b);
    }
    ts_graph_free(g2);
    ts_free_string(a);
}

static void check_variant(const char *text, size_t len)
{
    ts_graph *g = NULL;
    ts_err err = {0};
    ts_status s = ts_graph_parse(text, len, "fuzz.ir", &g, &err);
    if (s == TS_OK) {
        n_parsed++;
        CHECK(g != NULL);
        if (g) round_trips(g, text, len);
        ts_graph_free(g);
        return;
    }
    n_rejected++;
    bool known = s == TS_ERR_PARSE || s == TS_ERR_SHAPE || s == TS_ERR_INVALID_MODEL || s == TS_ERR_UNSUPPORTED;
    CHECK_MSG(known && g == NULL, "code %s: %s\nfor:\n%.*s", ts_status_name(s), err.msg, (int)len, text);
    CHECK_MSG(has_position(err.msg) && !strstr(err.msg, "verify:"), "message without a position: %s\nfor:\n%.*s",
              err.msg, (int)len, text);
}

static void fuzz_corpus(long total)
{
    long per_file = n_corpus ? total / n_corpus : 0;
    for (int f = 0; f < n_corpus && check_fail_ < 20; f++) {
        const entry *e = &corpus[f];
        size_t cap = e->len * 2 + 4096;
        char *buf = malloc(cap);
        for (long v = 0; v < per_file && check_fail_ < 20; v++) {
            size_t len = e->len;
            memcpy(buf, e->text, len);
            int rounds = 1 + (int)below(rnd() % 4 == 0 ? 8 : 3);
            for (int r = 0; r < rounds; r++) mutate_once(buf, &len, cap);
            check_variant(buf, len);
        }
        free(buf);
    }
}

/* Every prefix of the three smallest files. */
static void truncations(void)
{
    int order[MAX_FILES];
    for (int i = 0; i < n_corpus; i++) order[i] = i;
    for (int i = 0; i < n_corpus; i++)
        for (int j = i + 1; j < n_corpus; j++)
            if (corpus[order[j]].len < corpus[order[i]].len) {
                int t = order[i];
                order[i] = order[j];
                order[j] = t;
            }
    for (int k = 0; k < 3 && k < n_corpus; k++) {
        const entry *e = &corpus[order[k]];
        for (size_t n = 0; n <= e->len && check_fail_ < 20; n++) check_variant(e->text, n);
    }
}

/* ---- failing allocations ------------------------------------------------------------ */

static long alloc_seen, alloc_fail_at;

static void *failing_alloc(void *ud, void *p, size_t n)
{
    (void)ud;
    if (n == 0) {
        free(p);
        return NULL;
    }
    if (++alloc_seen == alloc_fail_at) return NULL;
    return realloc(p, n);
}

/* Fail allocation k of a parse, for k = 1.. until a parse sees no failure. */
static void oom_parse(const entry *e)
{
    long k;
    for (k = 1; k < 100000; k++) {
        ts_graph *g = NULL;
        ts_err err = {0};
        alloc_seen = 0;
        alloc_fail_at = k;
        ts_set_allocator(failing_alloc, NULL);
        ts_status s = ts_graph_parse(e->text, e->len, "fuzz.ir", &g, &err);
        ts_graph_free(g);
        ts_set_allocator(NULL, NULL);
        CHECK_MSG(s == TS_OK || (s == TS_ERR_OOM && g == NULL), "%s: allocation %ld failed -> %s: %s", e->path, k,
                  ts_status_name(s), err.msg);
        if (alloc_seen < k) break;  /* no allocation failed: done */
    }
    CHECK_MSG(k > 5, "%s: only %ld allocations?", e->path, k);
    printf("%s: failed each of %ld allocations of the parse\n", e->path, k - 1);
}

static void oom_print(const entry *e)
{
    ts_graph *g = NULL;
    CHECK(ts_graph_parse(e->text, e->len, "fuzz.ir", &g, NULL) == TS_OK);
    if (!g) return;
    for (long k = 1; k < 100000; k++) {
        char *s = NULL;
        ts_err err = {0};
        alloc_seen = 0;
        alloc_fail_at = k;
        ts_set_allocator(failing_alloc, NULL);
        ts_status st = ts_graph_to_text(g, &s, &err);
        ts_free_string(s);
        ts_set_allocator(NULL, NULL);
        CHECK_MSG(st == TS_OK || (st == TS_ERR_OOM && s == NULL), "print: allocation %ld -> %s", k, err.msg);
        if (alloc_seen < k) break;
    }
    ts_graph_free(g);
}

static const entry *find(const char *suffix)
{
    for (int i = 0; i < n_corpus; i++) {
        size_t n = strlen(corpus[i].path), k = strlen(suffix);
        if (n >= k && strcmp(corpus[i].path + n - k, suffix) == 0) return &corpus[i];
    }
    return n_corpus ? &corpus[0] : NULL;
}

int main(void)
{
    const char *seed = getenv("TS_FUZZ_SEED"), *variants = getenv("TS_FUZZ_VARIANTS");
    if (seed) rng = (strtoull(seed, NULL, 0) + 1) * 0x9e3779b97f4a7c15u;
    long total = variants ? atol(variants) : 100000;
    load_dir("tests/ir");
    CHECK_MSG(n_corpus >= 10, "only %d files under tests/ir (run from the repo root)", n_corpus);
    fuzz_corpus(total);
    truncations();
    printf("%d variants parsed, %d rejected\n", n_parsed, n_rejected);
    CHECK_MSG(n_parsed > 100, "only %d variants parsed: the mutations are too destructive to test round trips",
              n_parsed);
    const entry *medium[] = {find("/attention.ir"), find("/nested.ir"), find("/constants.ir")};
    for (int i = 0; i < 3; i++) {
        if (!medium[i]) continue;
        oom_parse(medium[i]);
        oom_print(medium[i]);
    }
    for (int i = 0; i < n_corpus; i++) free(corpus[i].text);
    return check_report();
}

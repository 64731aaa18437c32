/* cmd_prims.c — `tessera prims [--tests DIR]`: the primitive table with
 * each primitive's interpreter kernel and test-case count. */
#include "cli.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#ifndef TS_SOURCE_DIR
#define TS_SOURCE_DIR "."
#endif

/* ---- prims ------------------------------------------------------------------------- */

static void flags_text(unsigned fl, char *out, size_t n)
{
    size_t len = 0;
    out[0] = 0;
    for (int i = 0; ts_prim_flag_name(i); i++)
        if (fl & (1u << i)) len += (size_t)snprintf(out + len, n - len, "%s%s", len ? "," : "", ts_prim_flag_name(i));
    if (!len) snprintf(out, n, "-");
}

static void arity_text(const ts_prim_desc *d, char *out, size_t n)
{
    if (d->max_in < 0) snprintf(out, n, "%d+", d->min_in);
    else if (d->max_in == d->min_in) snprintf(out, n, "%d", d->min_in);
    else snprintf(out, n, "%d-%d", d->min_in, d->max_in);
}

/* Attributes as the table declares them, then the regions. */
static void print_schema(const ts_prim_desc *d)
{
    printf("%s", d->attrs[0] ? d->attrs : "-");
    for (int r = 0; r < d->n_regions; r++) printf("%s%s", r ? "," : "  regions: ", d->region_names[r]);
}

/* counts is NULL when the test tree is not there. */
static int print_prims(const int *counts)
{
    int with_kernel = 0, with_tests = 0, cases = 0, n = ts_prim_count();
    printf("%-22s %-5s %-4s %-18s %-6s %5s  %s\n", "primitive", "in", "out", "flags", "interp", "tests", "attributes");
    for (int op = 0; op < n; op++) {
        ts_prim_desc d;
        ts_err err = {0};
        if (ts_prim_describe(op, &d, &err) != TS_OK) return fail_err(&err);
        char arity[16], out[8], flags[80], tests[16];
        arity_text(&d, arity, sizeof arity);
        snprintf(out, sizeof out, d.n_out < 0 ? "var" : "%d", d.n_out);
        flags_text(d.flags, flags, sizeof flags);
        snprintf(tests, sizeof tests, counts ? "%d" : "?", counts ? counts[op] : 0);
        with_kernel += d.interp == 1;
        with_tests += counts && counts[op] > 0;
        cases += counts ? counts[op] : 0;
        printf("%-22s %-5s %-4s %-18s %-6s %5s  ", d.name, arity, out, flags,
               d.interp == 2 ? "decl" : d.interp ? "yes" : "no", tests);
        print_schema(&d);
        printf("\n");
    }
    printf("total: %d primitives, %d in the interpreter (decl: declared only, needs a multi-process runtime), ",
           n, with_kernel);
    if (counts) printf("%d with test cases (%d case files)\n", with_tests, cases);
    else printf("test cases not counted (no test tree)\n");
    return 0;
}

int cmd_prims(int argc, char **argv)
{
    cli c = {0};
    if (parse_args(&c, argc, argv, OPT_TESTS, 0)) return 1;
    if (c.help) return usage();
    const char *dir = c.tests_dir ? c.tests_dir : TS_SOURCE_DIR "/tests";
    int *counts = calloc((size_t)ts_prim_count() + 1, sizeof *counts);
    if (!counts) return fail("out of memory");
    ts_err err = {0};
    struct stat st;
    bool present = stat(dir, &st) == 0 && S_ISDIR(st.st_mode);
    /* An installed binary may have no source tree beside it: that is only
     * an error when the user named the directory. */
    int r = 0;
    if (!present && c.tests_dir) r = fail("test directory '%s' does not exist", dir);
    else if (present && ts_prim_count_tests(dir, counts, &err) < 0) r = fail_err(&err);
    else r = print_prims(present ? counts : NULL);
    free(counts);
    return r;
}


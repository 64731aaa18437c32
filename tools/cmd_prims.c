/* cmd_prims.c — `tessera prims [--tests DIR]`: the primitive table with
 * each primitive's interpreter kernel and test-case count. */
#include "cli.h"

#include "interp/interp.h"
#include "ir/ir.h"

#include <string.h>
#include <sys/stat.h>

#ifndef TS_SOURCE_DIR
#define TS_SOURCE_DIR "."
#endif

/* ---- prims ------------------------------------------------------------------------- */

static void flags_text(unsigned fl, char *out, size_t n)
{
    static const char *const names[] = {"ew", "comm", "cmp", "reduce", "layout", "control", "side", "fresh"};
    size_t len = 0;
    out[0] = 0;
    for (unsigned i = 0; i < sizeof names / sizeof names[0]; i++)
        if (fl & (1u << i)) len += (size_t)snprintf(out + len, n - len, "%s%s", len ? "," : "", names[i]);
    if (!len) snprintf(out, n, "-");
}

static void arity_text(const ts_op_info *info, char *out, size_t n)
{
    if (info->max_in < 0) snprintf(out, n, "%d+", info->min_in);
    else if (info->max_in == info->min_in) snprintf(out, n, "%d", info->min_in);
    else snprintf(out, n, "%d-%d", info->min_in, info->max_in);
}

/* Attributes as the table declares them, then the regions. */
static void print_schema(const ts_op_info *info)
{
    printf("%s", info->schema_text[0] ? info->schema_text : "-");
    for (int r = 0; r < info->n_regions; r++)
        printf("%s%s", r ? "," : "  regions: ", info->region_names[r]);
}

/* counts is NULL when the test tree is not there. */
static void print_prims(const int *counts)
{
    int with_kernel = 0, with_tests = 0, cases = 0;
    printf("%-22s %-5s %-4s %-18s %-6s %5s  %s\n", "primitive", "in", "out", "flags", "interp", "tests", "attributes");
    for (int op = 0; op < TS_OP_COUNT; op++) {
        const ts_op_info *info = ts_op_get((ts_op)op);
        char arity[16], out[8], flags[80], tests[16];
        arity_text(info, arity, sizeof arity);
        snprintf(out, sizeof out, info->n_out < 0 ? "var" : "%d", info->n_out);
        flags_text(info->flags, flags, sizeof flags);
        snprintf(tests, sizeof tests, counts ? "%d" : "?", counts ? counts[op] : 0);
        bool k = ts_interp_kernel_of((ts_op)op) != NULL;
        bool declared = ts_interp_declared_only((ts_op)op);
        with_kernel += k && !declared;
        with_tests += counts && counts[op] > 0;
        cases += counts ? counts[op] : 0;
        printf("%-22s %-5s %-4s %-18s %-6s %5s  ", info->name, arity, out, flags,
               declared ? "decl" : k ? "yes" : "no", tests);
        print_schema(info);
        printf("\n");
    }
    printf("total: %d primitives, %d in the interpreter (decl: declared only, needs a multi-process runtime), ",
           TS_OP_COUNT, with_kernel);
    if (counts) printf("%d with test cases (%d case files)\n", with_tests, cases);
    else printf("test cases not counted (no test tree)\n");
}

int cmd_prims(int argc, char **argv)
{
    cli c = {0};
    if (parse_args(&c, argc, argv, OPT_TESTS, 0)) return 1;
    if (c.help) return usage();
    const char *dir = c.tests_dir ? c.tests_dir : TS_SOURCE_DIR "/tests";
    int counts[TS_OP_COUNT] = {0};
    ts_err err = {0};
    struct stat st;
    bool present = stat(dir, &st) == 0 && S_ISDIR(st.st_mode);
    /* An installed binary may have no source tree beside it: that is only
     * an error when the user named the directory. */
    if (!present && c.tests_dir) return fail("test directory '%s' does not exist", dir);
    if (present && ts_ir_count_op_cases(dir, counts, &err) < 0) return fail_err(&err);
    print_prims(present ? counts : NULL);
    return 0;
}


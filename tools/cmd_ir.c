/* cmd_ir.c — `tessera ir FILE [--grad] [--jvp] [--wrt NAMES] [--passes LIST]
 * [--dump-after NAME] [--dot]`: the model, differentiated if asked
 * (ts_graph_grad, then ts_graph_jvp), after the passes, as canonical IR
 * text, or as Graphviz (ts_graph_to_dot), or what the cpu target makes of
 * it (ts_graph_describe). */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

static int list_passes(void)
{
    printf("passes, in pipeline order (\"default\" runs them all to a fixed point):\n");
    for (int i = 0; ts_pass_name(i); i++) printf("  %s\n", ts_pass_name(i));
    return 0;
}

static int run_passes(ts_graph *g, const cli *c)
{
    ts_err err = {0};
    ts_status s = TS_OK;
    if (c->dump_after) {
        char *dump = NULL;
        s = ts_graph_run_passes_dump(g, c->passes ? c->passes : "default", c->dump_after, &dump, &err);
        if (dump) fputs(dump, stdout);
        ts_free_string(dump);
    } else if (c->passes)
        s = ts_graph_run_passes(g, c->passes, &err);
    return s == TS_OK ? 0 : fail_err(&err);
}

/* --wrt "x,w": input indices by name; *n = -1 when not given (all). */
static int wrt_list(const ts_graph *g, const char *names, int *idx, int cap, int *n)
{
    *n = -1;
    if (!names) return 0;
    *n = 0;
    for (const char *p = names; *p;) {
        size_t len = strcspn(p, ",");
        int found = -1;
        for (int i = 0; i < ts_graph_num_inputs(g) && found < 0; i++) {
            const char *in = ts_graph_input_name(g, i);
            if (in && strlen(in) == len && strncmp(in, p, len) == 0) found = i;
        }
        if (found < 0) return fail("--wrt: the graph has no input '%.*s'", (int)(len > 60 ? 60 : len), p);
        if (*n == cap) return fail("--wrt: over %d inputs", cap);
        idx[(*n)++] = found;
        p += len + (p[len] == ',');
    }
    return 0;
}

static int differentiate(ts_graph *g, const cli *c)
{
    if (!c->grad && !c->jvp) return c->wrt ? fail("--wrt goes with --grad or --jvp") : 0;
    int idx[256], n = -1;
    if (wrt_list(g, c->wrt, idx, 256, &n)) return 1;
    ts_err err = {0};
    /* both: forward over reverse, so the tangents of the gradients are
     * Hessian-vector products */
    if (c->grad && ts_graph_grad(g, n, n < 0 ? NULL : idx, &err) != TS_OK) return fail_err(&err);
    if (c->jvp && ts_graph_jvp(g, n, n < 0 ? NULL : idx, &err) != TS_OK) return fail_err(&err);
    return 0;
}

/* The graph as text, from ts_graph_to_text or ts_graph_to_dot. */
static int print_as(const ts_graph *g, ts_status (*to)(const ts_graph *, char **, ts_err *))
{
    char *text = NULL;
    ts_err err = {0};
    if (to(g, &text, &err) != TS_OK) return fail_err(&err);
    fputs(text, stdout);
    ts_free_string(text);
    return 0;
}

/* --fusion, --loops, --emit c: what the cpu target makes of the graph;
 * --emit opencl / cuda: that target's program (no device needed). */
static int print_compiled(const ts_graph *g, const cli *c)
{
    char *text = NULL;
    ts_err err = {0};
    const bool device = c->emit && (strcmp(c->emit, "opencl") == 0 || strcmp(c->emit, "cuda") == 0);
    ts_status s = ts_graph_describe(g, device ? c->emit : "cpu", c->emit ? c->emit : "loops", &text, &err);
    if (s != TS_OK) return fail_err(&err);
    if (c->fusion && !c->loops && !c->emit) {
        char *end = strstr(text, "\nkernel ");   /* the fusion listing comes first */
        if (end) end[1] = 0;
    }
    fputs(text, stdout);
    ts_free_string(text);
    return 0;
}

int cmd_ir(int argc, char **argv)
{
    cli c = {0};
    if (parse_args(&c, argc, argv, OPT_PASSES | OPT_DUMP | OPT_DOT | OPT_FUSION | OPT_LOOPS | OPT_EMIT | OPT_GRAD | OPT_JVP |
                                         OPT_WRT, 1)) return 1;
    if (c.help) return usage();
    if (c.passes && strcmp(c.passes, "help") == 0) return list_passes();
    if (!c.n_files) return no_file();
    ts_graph *g = NULL;
    ts_err err = {0};
    int r = load_model(c.files[0], 0, NULL, NULL, &g, &err) != TS_OK ? fail_err(&err) : 0;
    if (!r) r = differentiate(g, &c);
    if (!r) r = run_passes(g, &c);
    if (!r && c.dump_after && !c.dot) printf("# final\n");
    if (!r && (c.fusion || c.loops || c.emit)) r = print_compiled(g, &c);
    else if (!r) r = print_as(g, c.dot ? ts_graph_to_dot : ts_graph_to_text);
    ts_graph_free(g);
    return r;
}


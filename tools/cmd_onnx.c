/* cmd_onnx.c — `tessera info MODEL.onnx` (ts_onnx_info's description) and
 * the hidden `tessera onnx-ops`, which prints the frontend's operator table
 * one row per line, "OpType since until" (until is "max" for rows open to
 * the latest opset; OpType is "domain.OpType" outside the default domain),
 * for scripts/onnx_coverage.py. */
#include "cli.h"

#include <string.h>

int cmd_info(int argc, char **argv)
{
    cli c = {0};
    if (parse_args(&c, argc, argv, 0, 1)) return 1;
    if (c.help) return usage();
    if (!c.n_files) return no_file();
    char *text = NULL;
    ts_err err = {0};
    if (ts_onnx_info(c.files[0], &text, &err) != TS_OK) return fail_err(&err);
    fputs(text, stdout);
    if (text[0] && text[strlen(text) - 1] != '\n') fputc('\n', stdout);
    ts_free_string(text);
    return 0;
}

/* Rows of other domains name their op "domain.OpType", as `tessera info`
 * does. */
int cmd_onnx_ops(int argc, char **argv)
{
    if (argc > 0) return fail("onnx-ops takes no arguments");
    for (int i = 0; i < ts_onnx_op_count(); i++) {
        const char *domain, *op;
        int since, until;
        ts_err err = {0};
        if (ts_onnx_op_at(i, &domain, &op, &since, &until, &err) != TS_OK) return fail_err(&err);
        if (domain[0]) printf("%s.", domain);
        if (until < 0) printf("%s %d max\n", op, since);
        else printf("%s %d %d\n", op, since, until);
    }
    return 0;
}

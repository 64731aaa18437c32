/* check.h — `tessera check`: the test case of the ONNX backend test layout
 * and the function that runs one. cmd_check.c finds cases, runs each in a
 * child process and reports; check_case.c runs one case and compares. */
#ifndef TS_CHECK_H
#define TS_CHECK_H

#include "cli.h"

/* One test case. Two layouts exist in the ONNX test data:
 *   DIR/model.onnx + DIR/test_data_set_N/{input,output}_K.pb   (node, simple, pytorch-*)
 *   DIR/NAME.onnx + DIR/NAME_output_K.pb                       (light: no inputs are stored;
 *       ONNX's runner feeds each float input arange(n)/n, unknown dims as 1) */
typedef struct check_case {
    char *name;        /* test_add, or light_resnet50 */
    char *dir;         /* the folder holding the data */
    char *model;       /* the .onnx */
    bool light;
} check_case;

typedef struct check_opts {
    const char *target;      /* ts_session_new's target */
    double rtol, atol;       /* defaults, unless the case has a data.json */
    bool tol_forced;         /* --rtol/--atol given: they win over data.json */
    bool verbose;
} check_opts;

/* The longest line a case reports (the reason is cut to fit). */
#define CHECK_LINE_MAX 2048

/* Run case c: load it with the inputs of its first data set as known
 * values, run every data set, compare every output. Writes one line, no
 * newline, into line: "PASS name" or "FAIL name: reason". True on a pass. */
bool check_run_case(const check_case *c, const check_opts *o, char *line, size_t n);

#endif

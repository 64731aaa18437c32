/* tessera.c — the command-line driver: main, the usage text and the
 * command table.
 *
 *   tessera run FILE [-i [NAME=]X]... [-o DIR] [--format npy|pb] [--repeat N] [--threads N]
 *               [--target T] [--profile FILE] [--passes LIST]
 *   tessera check PATH... [--xfail FILE] [--target T] [-j N] [--timeout S] [--verbose]
 *   tessera info MODEL.onnx
 *   tessera ir FILE [--grad] [--jvp] [--wrt NAMES] [--passes LIST] [--dump-after NAME] [--dot]
 *   tessera prims [--tests DIR]
 *   tessera cache [info | clean [--max-mb N]]
 *   tessera version
 *
 * docs/cli.md is the manual. Every user error ends the process with status 1
 * and one line "tessera: <message>" on stderr; nothing here aborts. Each
 * command lives in its own file (cmd_*.c); cli.h lists what they share. */
#include "cli.h"

#include <string.h>

const char cli_usage_text[] =
    "usage: tessera <command> [options]\n"
    "\n"
    "commands:\n"
    "  run FILE [-i [NAME=]X]... [-o DIR] [--format npy|pb] [--repeat N] [--threads N]\n"
    "      [--target cpu|interp|opencl|cuda] [--profile FILE] [--passes LIST]\n"
    "      Run a model (IR text, or .onnx): compiled for this CPU (the default,\n"
    "      --target cpu), on the reference interpreter (--target interp;\n"
    "      also, with a warning, when no C compiler works), on the first\n"
    "      OpenCL device (--target opencl) or on CUDA GPU 0 (--target cuda).\n"
    "      Inputs are .npy or ONNX\n"
    "      TensorProto .pb files, bound by name (NAME=) or by position. Outputs\n"
    "      go to DIR/output_K.npy (or .pb with --format pb) with -o, else a\n"
    "      summary is printed. --repeat N times N runs after a warm-up\n"
    "      and prints compile time, peak memory and the latency line last.\n"
    "      --profile FILE writes a Chrome trace of the kernels' times.\n"
    "  check PATH... [--xfail FILE] [--target cpu|interp|opencl|cuda] [--shard K/N] [-j N]\n"
    "        [--batch N] [--timeout S] [--rtol X] [--atol X] [--verbose]\n"
    "      Run ONNX backend test cases (a folder with model.onnx and\n"
    "      test_data_set_N/, or a folder of such folders) and compare the outputs.\n"
    "      Compiled by default, as run. One PASS/FAIL line per case, then\n"
    "      \"N passed, N failed\".\n"
    "  info MODEL.onnx\n"
    "      Describe an ONNX model: inputs, outputs, opsets, operators (MISSING\n"
    "      marks those tessera cannot assemble).\n"
    "  ir FILE [--grad] [--jvp] [--wrt NAMES] [--passes LIST] [--dump-after NAME]\n"
    "     [--dot] [--fusion | --loops | --emit c|opencl|cuda]\n"
    "      Print the model's IR after the passes: canonical text, or Graphviz.\n"
    "      --passes help lists the passes. --grad appends the reverse-mode\n"
    "      gradient (cotangent inputs ct_*, outputs grad_*), --jvp the forward\n"
    "      mode (tangent inputs and outputs tan_*), both: Hessian-vector\n"
    "      products; with respect to every float input, or the --wrt list.\n"
    "      --fusion and --loops show the cpu target's kernels; --emit the\n"
    "      source a target generates (no device needed).\n"
    "  prims [--tests DIR]\n"
    "      List the primitives: arity, attributes, flags, interpreter kernel and\n"
    "      the number of test cases under DIR.\n"
    "  cache [info | clean [--max-mb N]]\n"
    "      The CPU target's cache of compiled modules: where it is and its size;\n"
    "      clean empties it (or trims it to N MB, least recently used first).\n"
    "  version\n"
    "      Print the version.\n"
    "\n"
    "FILE is IR text (docs/ir.md) or, by extension, an ONNX model (.onnx).\n"
    "Exit status: 0 on success, 1 on any error (check: 1 when a case fails).\n";

static int cmd_version(int argc, char **argv)
{
    if (argc > 0 && strcmp(argv[0], "--help") && strcmp(argv[0], "-h"))
        return fail("unexpected argument '%s' (see tessera --help)", argv[0]);
    printf("tessera %s\n", TESSERA_VERSION);
    return 0;
}

int main(int argc, char **argv)
{
    /* onnx-ops is hidden: scripts/onnx_coverage.py reads the operator table
     * through it. */
    static const struct {
        const char *name;
        int (*run)(int argc, char **argv);
    } commands[] = {
        {"run", cmd_run}, {"check", cmd_check}, {"info", cmd_info}, {"ir", cmd_ir},
        {"prims", cmd_prims}, {"cache", cmd_cache}, {"version", cmd_version}, {"--version", cmd_version},
        {"onnx-ops", cmd_onnx_ops},
    };
    if (argc < 2 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "help") == 0)
        return usage();
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (strcmp(argv[1], commands[i].name) == 0) return commands[i].run(argc - 2, argv + 2);
    return fail("unknown command '%s' (commands: run, check, info, ir, prims, cache, version; see tessera --help)",
                argv[1]);
}

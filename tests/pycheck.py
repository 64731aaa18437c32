"""pycheck.py — the Python test drivers' harness (tests/cli/, tests/
check_layers.py, tests/onnx_conformance/test_opset_history.py): check()
records a pass or prints why it failed and goes on; report() prints
"N passed, N failed" (the closing line ctest shows) and gives the exit
status."""
import sys

passed = failed = 0


def check(name, ok, detail=""):
    global passed, failed
    if ok:
        passed += 1
    else:
        failed += 1
        print("FAIL %s%s" % (name, (": " + detail) if detail else ""), file=sys.stderr)
    return ok


def report():
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0

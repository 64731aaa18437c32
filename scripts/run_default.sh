#!/usr/bin/env bash
# run_default.sh — the main job: build tessera and run the bundled models:
# 1. models/tinynet/model.onnx, a small CNN + transformer-encoder classifier
#    (scripts/gen_default_onnx.py), assembled from primitives, compiled for
#    the CPU (the default target; compile time, cache hit or miss and
#    latency printed) and run next to the reference interpreter, and both
#    checked against onnxruntime's output stored beside it;
# 2. models/attention.ir, one transformer block in IR text, compiled and
#    interpreted, both compared with numpy's result
#    (models/attention_expected.npy).
# Exits non-zero when a build fails or any output disagrees with its
# stored reference (set -e: `tessera check` and the comparison fail it).
#
#   bash scripts/run_default.sh
#
# Installs cmake, ninja, gcc and python3 on a fresh Debian 12 if missing.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/deps.sh

need cmake:cmake ninja:ninja-build gcc:gcc python3:python3
need_onnx_dev
need_opencl

# A build tree made by another generator cannot be reconfigured with Ninja.
if [[ -f build/CMakeCache.txt ]] && ! grep -q '^CMAKE_GENERATOR:INTERNAL=Ninja$' build/CMakeCache.txt; then
  rm -rf build
fi
echo "building build/tessera (Release) ..."
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DTS_WERROR=OFF -DTS_SANITIZE=OFF >/dev/null
# the compiler's chatter only when the build fails
cmake --build build --target tessera_cli >build/build.log 2>&1 || { cat build/build.log; exit 1; }

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

echo
echo "== tessera run models/tinynet/model.onnx -i models/tinynet/test_data_set_0/input_0.pb"
echo "   (compiled, the default: fused kernels as C, built by the system compiler and cached in ~/.cache/tessera)"
build/tessera run models/tinynet/model.onnx -i models/tinynet/test_data_set_0/input_0.pb --repeat 20
echo "== the same on the reference interpreter (--target interp)"
build/tessera run models/tinynet/model.onnx -i models/tinynet/test_data_set_0/input_0.pb --target interp --repeat 20
echo "== tessera check models/tinynet  (against onnxruntime's output, compiled and interpreted)"
build/tessera check models/tinynet
build/tessera check models/tinynet --target interp

echo
echo "== tessera run models/attention.ir -i models/attention_input.npy"
build/tessera run models/attention.ir -i models/attention_input.npy -o "$out" --repeat 20
echo "== the same on the reference interpreter (--target interp)"
build/tessera run models/attention.ir -i models/attention_input.npy --target interp -o "$out/interp" --repeat 20

# The comparison reads .npy with the standard library alone: no numpy needed.
python3 - models/attention_expected.npy "$out/output_0.npy" "$out/interp/output_0.npy" <<'PY'
import ast, struct, sys

def load_f32(path):
    with open(path, "rb") as f:
        data = f.read()
    assert data[:6] == b"\x93NUMPY", path
    n = struct.unpack("<H", data[8:10])[0]
    header = ast.literal_eval(data[10:10 + n].decode("latin1"))
    assert header["descr"] == "<f4" and not header["fortran_order"], header
    count = 1
    for d in header["shape"]:
        count *= d
    return header["shape"], struct.unpack("<%df" % count, data[10 + n:10 + n + 4 * count])

s_want, want = load_f32(sys.argv[1])
all_ok = True
for label, path in (("compiled", sys.argv[2]), ("interpreted", sys.argv[3])):
    s_got, got = load_f32(path)
    diff = max(abs(a - b) for a, b in zip(got, want)) if s_got == s_want else float("inf")
    ok = s_got == s_want and all(abs(a - b) <= 1e-5 + 1e-4 * abs(b) for a, b in zip(got, want))
    all_ok &= ok
    print("%s matches numpy reference: %s (shape %s, max abs diff %.3g)" % (label, "yes" if ok else "no",
                                                                          tuple(s_got), diff))
sys.exit(0 if all_ok else 1)
PY

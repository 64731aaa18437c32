#!/usr/bin/env bash
# test.sh — every test of tessera, as CI runs it (.ci/run calls this):
#
#   bash scripts/test.sh
#
# 1. installs what is missing (cmake, ninja, gcc, valgrind, python3-venv,
#    protobuf-c, libonnx-dev) and a .venv with numpy and onnx 1.22.0;
# 2. build/      RelWithDebInfo, warnings are errors: ctest;
# 3. build-asan/ Debug with AddressSanitizer + UBSan, leaks on: ctest;
# 4. valgrind --leak-check=full on representative programs of build/.
# Exits non-zero if anything failed; the last line says what ran.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/deps.sh

need cmake:cmake ninja:ninja-build gcc:gcc valgrind:valgrind
need_onnx_dev
# onnx is pinned to 1.22.0, the last release whose wheel ships the backend
# test data (onnx/backend/test/data) that the conformance suite runs.
if ! .venv/bin/python3 -c 'import numpy, onnx; assert onnx.__version__ == "1.22.0"' >/dev/null 2>&1; then
  if [[ ! -x .venv/bin/python3 ]]; then
    need_venv
    python3 -m venv .venv
  fi
  .venv/bin/pip install -q numpy onnx==1.22.0
fi
py=$PWD/.venv/bin/python3
failed=()

# configure DIR ARGS... — a Ninja tree; one made by another generator is
# rebuilt from scratch, since CMake cannot switch generators in place.
configure() {
  local dir=$1
  shift
  if [[ -f $dir/CMakeCache.txt ]] && ! grep -q '^CMAKE_GENERATOR:INTERNAL=Ninja$' "$dir/CMakeCache.txt"; then
    rm -rf "$dir"
  fi
  cmake -S . -B "$dir" -G Ninja -DTS_PYTHON="$py" "$@" >/dev/null
}

# build_and_test NAME DIR CMAKE_ARGS... — build everything, then ctest.
build_and_test() {
  local name=$1 dir=$2
  shift 2
  echo "== $name: build ($dir)"
  if ! configure "$dir" "$@" || ! cmake --build "$dir"; then
    failed+=("$name build")
    return
  fi
  echo "== $name: ctest"
  ctest --test-dir "$dir" --output-on-failure -j2 || failed+=("$name ctest")
}

build_and_test release build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTS_WERROR=ON -DTS_SANITIZE=OFF
ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1 \
  build_and_test asan build-asan -DCMAKE_BUILD_TYPE=Debug -DTS_SANITIZE=ON -DTS_WERROR=OFF

# valgrind: a few programs that touch most of the library (parser, printer,
# interpreter, npy). Unit tests run from the source tree, as ctest runs them.
echo "== valgrind"
vg=(valgrind -q --leak-check=full '--errors-for-leak-kinds=definite,indirect' --error-exitcode=99)
n_vg=0
for t in test_text test_ops test_npy; do
  [[ -x build/tests/$t ]] || continue
  n_vg=$((n_vg + 1))
  echo "-- valgrind $t"
  "${vg[@]}" "build/tests/$t" >/dev/null || failed+=("valgrind $t")
done
if [[ -x build/tessera ]]; then
  n_vg=$((n_vg + 1))
  echo "-- valgrind tessera run models/attention.ir"
  "${vg[@]}" build/tessera run models/attention.ir -i models/attention_input.npy >/dev/null ||
    failed+=("valgrind tessera run")
fi

if [[ ${#failed[@]} -gt 0 ]]; then
  echo "test.sh: FAILED: ${failed[*]}"
  exit 1
fi
echo "test.sh: all passed (ctest in build and build-asan, valgrind on $n_vg programs)"

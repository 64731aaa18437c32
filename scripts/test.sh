#!/usr/bin/env bash
# test.sh — every test of tessera, as CI runs it (.ci/run calls this):
#
#   bash scripts/test.sh
#
# 1. installs what is missing (cmake, ninja, gcc, valgrind, python3-venv,
#    protobuf-c, libonnx-dev) and a .venv with numpy and onnx 1.22.0;
# 2. build/      RelWithDebInfo, warnings are errors: ctest, then the ONNX
#    conformance suites (ctest label onnx: `tessera check` over onnx's
#    backend test data against tests/onnx_conformance/expected_failures.txt);
# 3. build-asan/ Debug with AddressSanitizer + UBSan, leaks on: the same
#    (without the light models, too slow unoptimised and instrumented);
# 4. python: the package (pip install . into .venv, its build tree in
#    build-py/) and its tests, pytest tests/python (against onnxruntime,
#    numpy and torch; the torch.compile backend, part of PyTorch's OpInfo
#    tests through it, torchvision models, scikit-learn's digits);
# 5. valgrind --leak-check=full on representative programs of build/
#    (tessera check on a few ONNX node tests among them);
# 6. build-fuzz/ clang + libFuzzer: fuzz_onnx_load for TS_FUZZ_SECONDS
#    (default 60), seeded with node test models; a crash fails the run.
# Exits non-zero if anything failed; the last line says what ran.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/deps.sh

need cmake:cmake ninja:ninja-build gcc:gcc valgrind:valgrind
need_onnx_dev
need_opencl
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
  ctest --test-dir "$dir" --output-on-failure -j2 -LE onnx || failed+=("$name ctest")
  conformance "$name" "$dir"
}

# conformance NAME DIR — the ctest entries labelled onnx, one per folder of
# the test data, then each one's closing lines (pass counts, xfail result)
# and time from ctest's log.
conformance() {
  local name=$1 dir=$2 t0=$SECONDS
  echo "== $name: ONNX conformance (ctest -L onnx)"
  ctest --test-dir "$dir" --output-on-failure -j2 -L onnx || failed+=("$name onnx conformance")
  awk '/^[0-9]+\/[0-9]+ Testing: onnx_/ {t = $3; r = "no result"; x = ""}
       t && /^[0-9]+ passed, [0-9]+ failed$/ {r = $0}
       t && /^xfail / {x = " (" $3 " as listed, " $(NF - 1) " unexpected)"}
       t && /^Test time = / {printf "   %-24s %s%s, %s s\n", t ":", r, x, $4; t = ""}' \
    "$dir/Testing/Temporary/LastTest.log" 2>/dev/null || true
  echo "   conformance wall time: $((SECONDS - t0)) s"
}

# python_package — `pip install .` as a user runs it (an isolated build
# through scikit-build-core; build-py/ keeps the CMake tree between runs),
# then the package's tests against the installed package.
python_package() {
  local t0=$SECONDS
  echo "== python: pip install . (build-py) and pytest tests/python"
  need_python_dev "$py"
  # expecttest and hypothesis: importing PyTorch's OpInfo database needs them
  if ! "$py" -c 'import pytest, torch, torchvision, onnxruntime, sklearn, expecttest, hypothesis' >/dev/null 2>&1; then
    .venv/bin/pip install -q pytest torch torchvision onnxruntime scikit-learn expecttest hypothesis ||
      { failed+=("python test dependencies"); return; }
  fi
  if ! .venv/bin/pip install -q . -C build-dir=build-py; then
    failed+=("python pip install .")
    return
  fi
  (cd / && "$py" -c 'import tessera; print("   tessera", tessera.__version__, "from", tessera.__file__)')
  "$py" -m pytest -q -p no:cacheprovider tests/python || failed+=("python tests")
  echo "   python wall time: $((SECONDS - t0)) s"
}

# TS_ONNX_TESTS=ON: the suites are required here (the default, AUTO, would
# leave them out quietly if .venv lacked onnx)
build_and_test release build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTS_WERROR=ON -DTS_SANITIZE=OFF -DTS_ONNX_TESTS=ON
python_package
ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1 \
  build_and_test asan build-asan -DCMAKE_BUILD_TYPE=Debug -DTS_SANITIZE=ON -DTS_WERROR=OFF -DTS_ONNX_TESTS=ON

# valgrind: a few programs that touch most of the library (parser, printer,
# interpreter, npy). Unit tests run from the source tree, as ctest runs them.
echo "== valgrind"
# valgrind cannot run AMX tile instructions (tsrt_gemm_amx.h, D76)
vg=(env TESSERA_NO_AMX=1 valgrind -q --leak-check=full '--errors-for-leak-kinds=definite,indirect' --error-exitcode=99)
n_vg=0
for t in test_text test_ops test_npy; do
  [[ -x build/tests/$t ]] || continue
  n_vg=$((n_vg + 1))
  echo "-- valgrind $t"
  "${vg[@]}" "build/tests/$t" >/dev/null || failed+=("valgrind $t")
done
if [[ -x build/tessera ]]; then
  n_vg=$((n_vg + 1))
  echo "-- valgrind tessera run models/attention.ir --target interp --repeat 2"
  # --repeat: also the CLI's counting allocation hook (tools/run_timing.c).
  # The interpreter: valgrind cannot run the AVX-512 code the JIT makes.
  "${vg[@]}" build/tessera run models/attention.ir -i models/attention_input.npy --target interp --repeat 2 >/dev/null ||
    failed+=("valgrind tessera run")
  # the ONNX path: loader, TensorProto reading, check's child processes
  # (valgrind follows fork), control flow
  node=$("$py" -c 'import onnx, os; print(os.path.dirname(onnx.__file__))')/backend/test/data/node
  n_vg=$((n_vg + 1))
  echo "-- valgrind tessera check (7 ONNX node tests)"
  "${vg[@]}" build/tessera check --target interp \
    "$node"/test_{add,conv_with_strides_padding,reshape_negative_dim,gather_0,softmax_axis_1,loop11,if} \
    >/dev/null || failed+=("valgrind tessera check")
fi

# fuzz: libFuzzer on the ONNX loader for a bounded time, seeded with a few
# dozen node test models. clang and its fuzzer runtime are installed when
# missing.
fuzz() {
  local secs=${TS_FUZZ_SECONDS:-60} t0=$SECONDS
  echo "== fuzz: fuzz_onnx_load for ${secs} s (build-fuzz)"
  if ! need clang:clang; then
    echo "   fuzz: skipped: clang is missing and cannot be installed here"
    return
  fi
  local rt
  rt=$(clang -print-file-name="libclang_rt.fuzzer-$(uname -m).a")
  if [[ ! -f $rt ]]; then
    install_pkgs "libclang-rt-$(clang -dumpversion | cut -d. -f1)-dev" || true
  fi
  if ! configure build-fuzz -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTS_FUZZ=ON \
         -DTS_SANITIZE=OFF -DTS_WERROR=OFF -DTS_ONNX_TESTS=OFF ||
     ! cmake --build build-fuzz --target fuzz_onnx_load >build-fuzz/build.log 2>&1; then
    cat build-fuzz/build.log 2>/dev/null || true
    failed+=("fuzz build")
    return
  fi
  local data corpus
  data=$("$py" -c 'import onnx, os; print(os.path.dirname(onnx.__file__))')/backend/test/data/node
  corpus=$(mktemp -d)
  # every 40th node test model: about 45 seeds, all operator families
  local i=0 m
  for m in "$data"/*/model.onnx; do
    (( i++ % 40 == 0 )) && cp "$m" "$corpus/$(basename "$(dirname "$m")").onnx"
  done
  mkdir -p build-fuzz/artifacts
  local log=build-fuzz/fuzz.log rc=0
  ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 UBSAN_OPTIONS=print_stacktrace=1 \
    build-fuzz/tests/fuzz_onnx_load -max_total_time="$secs" -timeout=25 -rss_limit_mb=4096 \
      -print_final_stats=1 -artifact_prefix=build-fuzz/artifacts/ "$corpus" >"$log" 2>&1 || rc=$?
  rm -rf "$corpus"
  if [[ $rc -ne 0 ]]; then
    grep -E '^==[0-9]+==|ERROR|SUMMARY|#[0-9]+ ' "$log" | tail -n 40 || true
    echo "   fuzz: FAILED (status $rc); the input is in build-fuzz/artifacts/, the log in $log"
    failed+=("fuzz")
  else
    grep -E '^Done|stat::peak_rss_mb' "$log" | sed 's/^/   /' || true
    echo "   fuzz: no crash in $((SECONDS - t0)) s"
  fi
}
fuzz

if [[ ${#failed[@]} -gt 0 ]]; then
  echo "test.sh: FAILED: ${failed[*]}"
  exit 1
fi
echo "test.sh: all passed (ctest and ONNX conformance in build and build-asan, the Python package's tests, valgrind on $n_vg programs, fuzz)"

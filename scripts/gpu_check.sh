#!/usr/bin/env bash
# gpu_check.sh — the cuda target's checks on a machine with an NVIDIA GPU
# (issue 34; docs/backends.md). Two steps, because the GPU machine may have
# no compiler, no Python packages and no network:
#
#   bash scripts/gpu_check.sh pack [DIR]   here: DIR (default build/gpu-bundle,
#       under 64 MiB) gets the tessera binary and the shared libraries it
#       links beyond libc, ONNX's node suite (compressed), and benchmark
#       models (bench/broad_models.py, batch 1) as ONNX test cases whose
#       expected outputs are ONNX Runtime's (CPU) on the same inputs.
#   bash scripts/gpu_check.sh run [DIR]    on the GPU machine, from the
#       repository root: the node suite on --target "$target" against
#       tests/onnx_conformance/expected_failures_cuda.txt, the real-model
#       suite and the bundled model, the benchmark cases against ORT's
#       outputs, then each benchmark model's latency on $target and on this
#       machine's CPU (and ORT's CUDA provider when Python has one).
#       Results in DIR/results.md, copied to $OUT when that is set (the
#       device tool's folder). About 5 minutes.
#
# GPU_CHECK_MODELS overrides the benchmark models packed (comma-separated);
# GPU_CHECK_TARGET runs the checks on another target (opencl: a dry run of
# this script on a machine without a GPU); GPU_CHECK_SHARD=K/N runs every
# Nth case of the node suite only.
set -uo pipefail
cd "$(dirname "$0")/.."
mode=${1:-}
dir=${2:-build/gpu-bundle}
target=${GPU_CHECK_TARGET:-cuda}
models=${GPU_CHECK_MODELS:-mixed_a,mixed_b,mixed_c,superres,fcn_head,unet_small,bilstm_tagger,gru_lm,lstm_lm,squeezenet1_1,shufflenet_v2_x0_5,mobilenet_v3_small,bert_s32}

pack() {
  local py=.venv/bin/python
  [[ -x build/tessera ]] || { echo "gpu_check: build/tessera is missing: build it first (README)" >&2; return 1; }
  [[ -x $py ]] || { echo "gpu_check: .venv is missing: bash scripts/test.sh makes it" >&2; return 1; }
  rm -rf "$dir" && mkdir -p "$dir/bin" "$dir/lib" "$dir/bench" || return 1
  cp build/tessera "$dir/bin/" || return 1
  # the libraries beyond libc the binary links (protobuf-c, the OpenCL ICD loader)
  ldd build/tessera | awk '/=> \// {print $3}' | grep -v -E '/(libc|libm|libpthread|libdl|ld-linux)[.-]' |
    while read -r lib; do cp -L "$lib" "$dir/lib/"; done
  local node
  node=$($py -c 'import onnx, os; print(os.path.join(os.path.dirname(onnx.__file__), "backend/test/data"))') || return 1
  tar czf "$dir/node.tgz" -C "$node" node || return 1
  $py bench/broad_models.py ${models//,/ } >/dev/null || return 1
  $py - "$dir/bench" "$models" <<'PY' || return 1
import os, shutil, sys
import numpy as np
import onnxruntime as ort
from onnx import numpy_helper

out, names = sys.argv[1], sys.argv[2].split(",")
for name in names:
    src = os.path.join("bench", ".cache", "broad", name + "_b1")
    case = os.path.join(out, name)
    os.makedirs(os.path.join(case, "test_data_set_0"))
    shutil.copy(os.path.join(src, "model.onnx"), case)
    sess = ort.InferenceSession(os.path.join(src, "model.onnx"), providers=["CPUExecutionProvider"])
    feeds = {i.name: np.load(os.path.join(src, i.name + ".npy")) for i in sess.get_inputs()}
    for k, (n, x) in enumerate(feeds.items()):
        with open(os.path.join(case, "test_data_set_0", "input_%d.pb" % k), "wb") as f:
            f.write(numpy_helper.from_array(x, n).SerializeToString())
    for k, (o, y) in enumerate(zip(sess.get_outputs(), sess.run(None, feeds))):
        with open(os.path.join(case, "test_data_set_0", "output_%d.pb" % k), "wb") as f:
            f.write(numpy_helper.from_array(y, o.name).SerializeToString())
    print("packed", name)
PY
  du -sh "$dir"
}

# median_ms LOGLINE: the median of a `latency median_ms=X ...` line
median_ms() { sed -n 's/.*latency median_ms=\([0-9.]*\).*/\1/p' | tail -1; }

run_checks() {
  local tess=$dir/bin/tessera res=$dir/results.md jobs
  [[ -x $tess ]] || tess=build/tessera
  export LD_LIBRARY_PATH=$PWD/$dir/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  jobs=$(nproc)
  mkdir -p "$dir/node" && tar xzf "$dir/node.tgz" -C "$dir" || return 1
  {
    echo "# gpu_check $(date -u '+%Y-%m-%d %H:%M UTC')"
    echo
    echo "GPU: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null || echo '(no nvidia-smi)')"
    echo "tessera: $($tess version 2>&1 | head -1), commit $(git rev-parse --short HEAD 2>/dev/null || echo '?')"
    echo
  } > "$res"
  section() {   # section TITLE COMMAND...: the command's last line (its tally) into the results
    local title=$1 log
    shift
    log=$dir/$(echo "$title" | tr -c 'a-z0-9\n' '_').log
    echo "== $title"
    timeout 600 "$@" > "$log" 2>&1
    local rc=$?
    echo "- $title: rc=$rc, $(tail -1 "$log")" | tee -a "$res"
    if grep -q '^xfail ' "$log"; then   # against a list: what differs from it
      grep -E '^(UNEXPECTED|xfail )' "$log" | head -40 >> "$res"
    else
      grep '^FAIL' "$log" | head -40 >> "$res"
    fi
  }
  section "node suite on $target" "$tess" check "$dir/node" --target "$target" -j "$jobs" --timeout 120 \
    --shard "${GPU_CHECK_SHARD:-1/1}" --batch 32 \
    --xfail tests/onnx_conformance/expected_failures_cuda.txt
  section "real-model suite on $target" "$tess" check tests/onnx_models --atol 1e-4 --target "$target"
  section "bundled model on $target" "$tess" check models/tinynet --target "$target"
  section "benchmark models on $target vs ORT (CPU)" "$tess" check "$dir/bench" --target "$target" --atol 1e-3 --rtol 1e-3
  {
    echo
    echo "| model (batch 1) | $target ms | cpu ms (tessera, $(nproc) threads) | ORT CUDA ms |"
    echo "|---|---|---|---|"
  } >> "$res"
  local case name cu cpu ortc inputs
  for case in "$dir"/bench/*/; do
    name=$(basename "$case")
    inputs=()
    for f in "$case"test_data_set_0/input_*.pb; do inputs+=(-i "$f"); done
    cu=$(timeout 120 "$tess" run "$case/model.onnx" "${inputs[@]}" --target "$target" --repeat 50 2>&1 | median_ms)
    cpu=$(timeout 120 "$tess" run "$case/model.onnx" "${inputs[@]}" --target cpu --repeat 50 2>&1 | median_ms)
    ortc=$(timeout 120 python3 - "$case" 2>/dev/null <<'PY'
import glob, os, sys, time
import numpy as np, onnx, onnxruntime as ort
from onnx import numpy_helper
if "CUDAExecutionProvider" not in ort.get_available_providers():
    sys.exit(1)
case = sys.argv[1]
s = ort.InferenceSession(os.path.join(case, "model.onnx"), providers=["CUDAExecutionProvider"])
feeds = {}
for i, p in zip(s.get_inputs(), sorted(glob.glob(os.path.join(case, "test_data_set_0", "input_*.pb")))):
    t = onnx.TensorProto()
    t.ParseFromString(open(p, "rb").read())
    feeds[i.name] = numpy_helper.to_array(t)
s.run(None, feeds)
ts = []
for _ in range(50):
    t0 = time.perf_counter(); s.run(None, feeds); ts.append((time.perf_counter() - t0) * 1e3)
print("%.3f" % np.median(ts))
PY
)
    echo "| $name | ${cu:-failed} | ${cpu:-failed} | ${ortc:--} |" | tee -a "$res"
  done
  [[ -n ${OUT:-} ]] && cp "$res" "$dir"/*.log "$OUT/" 2>/dev/null
  echo "results: $res"
}

case $mode in
  pack) pack ;;
  run) run_checks ;;
  *) echo "usage: bash scripts/gpu_check.sh pack|run [DIR]" >&2; exit 2 ;;
esac

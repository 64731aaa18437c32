#!/usr/bin/env bash
# update_xfail.sh — regenerate tests/onnx_conformance/expected_failures.txt,
# the ONNX backend test cases tessera is known to fail, from a run of
# `tessera check` over the test data of the onnx wheel in .venv:
#
#   bash scripts/update_xfail.sh [--build DIR] [--target cpu|interp] [-j N] [FOLDER...]
#
# --target cpu writes expected_failures_cpu.txt (the compiled path's list).
#
# FOLDER: node light simple pytorch-converted pytorch-operator (default:
# all). Only the named folders run; the list's sections for the others are
# kept as they are. A case already listed keeps its reason (edit reasons by
# hand: they survive); a new one gets the first words of its FAIL line.
# Builds DIR (default build/) first if it has no tessera binary.
set -euo pipefail
cd "$(dirname "$0")/.."

build=build
target=interp
jobs=$(nproc 2>/dev/null || echo 2)
folders=()
while [[ $# -gt 0 ]]; do
  case $1 in
    --build) build=$2; shift 2 ;;
    --build=*) build=${1#*=}; shift ;;
    --target) target=$2; shift 2 ;;
    --target=*) target=${1#*=}; shift ;;
    -j) jobs=$2; shift 2 ;;
    -j*) jobs=${1#-j}; shift ;;
    -h|--help) sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "update_xfail.sh: unknown option $1" >&2; exit 1 ;;
    *) folders+=("$1"); shift ;;
  esac
done
all=(node light simple pytorch-converted pytorch-operator)
[[ ${#folders[@]} -gt 0 ]] || folders=("${all[@]}")

py=.venv/bin/python3
[[ -x $py ]] || { echo "update_xfail.sh: no .venv (run bash scripts/test.sh once)" >&2; exit 1; }
data=$("$py" -c 'import onnx, os; print(os.path.dirname(onnx.__file__))')/backend/test/data
[[ -d $data/node ]] || { echo "update_xfail.sh: no ONNX test data under $data" >&2; exit 1; }
if [[ ! -x $build/tessera ]]; then
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
  cmake --build "$build" --target tessera_cli
fi

list=tests/onnx_conformance/expected_failures.txt
[[ $target == interp ]] || list=tests/onnx_conformance/expected_failures_$target.txt
export TESSERA_CACHE_DIR=${TESSERA_CACHE_DIR:-$build/jit-cache}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
touch "$list"

for f in "${folders[@]}"; do
  [[ -d $data/$f ]] || { echo "update_xfail.sh: no folder $data/$f" >&2; exit 1; }
  echo "== tessera check $f" >&2
  "$build/tessera" check "$data/$f" --target "$target" -j "$jobs" --timeout 300 >"$tmp/$f.log" || true
  tail -n 1 "$tmp/$f.log" >&2
done

# The new list: the header, then one section per folder in the order of
# `all`; a rerun folder's section from its log, another's from the old list.
{
  cat <<'EOF'
# expected_failures.txt — the ONNX backend test cases (onnx 1.22.0's test data)
# that tessera fails today, one per line:
#
#   test_name  # reason
#
# `tessera check --xfail` reads the first word of each line ('#' starts a
# comment). The ctest entries onnx_* fail when a case fails without being
# listed here, or passes while listed. Regenerate with
# bash scripts/update_xfail.sh; reasons of cases already listed are kept,
# so edit them freely.
EOF
  for f in "${all[@]}"; do
    rerun=0
    for r in "${folders[@]}"; do [[ $r == "$f" ]] && rerun=1; done
    if [[ $rerun == 0 ]]; then
      # keep the old section as it is
      awk -v sec="# ---- $f" '$0 == sec {on = 1; print ""; print; next}
                              /^# ---- / {on = 0} on && NF' "$list"
      continue
    fi
    echo
    echo "# ---- $f"
    awk -v old_list="$list" -v data="$data/" '
         BEGIN {  # the old list: name -> "# reason"
           while ((getline l < old_list) > 0)
             if (l ~ /^[^#[:space:]]/) { split(l, w, /[ \t]+/); i = index(l, "#"); if (i) old[w[1]] = substr(l, i) }
         }
         /^FAIL / {
           line = substr($0, 6); c = index(line, ":")
           name = c ? substr(line, 1, c - 1) : line
           why = c ? substr(line, c + 2) : "failed"
           if (name in old) { print name "  " old[name]; next }
           while ((i = index(why, data)) > 0) why = substr(why, 1, i - 1) substr(why, i + length(data))
           if (length(why) > 100) { why = substr(why, 1, 100); sub(/ [^ ]*$/, "", why); why = why " ..." }
           print name "  # " why
         }' "$tmp/$f.log"
  done
} >"$tmp/new"
mv "$tmp/new" "$list"
echo "update_xfail.sh: $(grep -c '^[^#[:space:]]' "$list" || true) cases listed in $list" >&2

# shellcheck shell=bash
# deps.sh — sourced by run_default.sh and test.sh: install the Debian
# packages the project needs, only when something is missing, so a machine
# that has everything runs no apt-get at all.

# install_pkgs PACKAGE... — apt-get update, then install. Root runs apt-get
# directly; anyone else goes through sudo.
install_pkgs() {
  local sudo=()
  if [[ $(id -u) -ne 0 ]]; then
    command -v sudo >/dev/null 2>&1 || { echo "need root (or sudo) to install: $*" >&2; return 1; }
    sudo=(sudo)
  fi
  echo "installing: $*"
  "${sudo[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq "$@" >/dev/null
}

# need CMD:PACKAGE... — install each PACKAGE whose CMD is not on PATH.
need() {
  local missing=() pair
  for pair in "$@"; do
    command -v "${pair%%:*}" >/dev/null 2>&1 || missing+=("${pair#*:}")
  done
  [[ ${#missing[@]} -eq 0 ]] || install_pkgs "${missing[@]}"
}

# Debian's python3 makes venvs only with python3-venv (ensurepip) installed.
need_venv() {
  need python3:python3-venv
  python3 -c 'import ensurepip' >/dev/null 2>&1 || install_pkgs python3-venv
}

# The ONNX frontend's build needs protoc-c, protobuf-c's headers and library,
# and the onnx.proto of Debian's libonnx-dev.
need_onnx_dev() {
  if ! command -v protoc-c >/dev/null 2>&1 || [[ ! -f /usr/include/onnx/onnx.proto ]] ||
     [[ ! -f /usr/include/protobuf-c/protobuf-c.h ]]; then
    install_pkgs protobuf-c-compiler libprotobuf-c-dev libonnx-dev
  fi
}

# The OpenCL target (src/backend/opencl) builds against the ICD loader and
# Khronos headers, and its tests run on PoCL, an OpenCL implementation on
# the CPU (its ICD file names it to the loader).
need_opencl() {
  if [[ ! -f /usr/include/CL/cl.h ]] || [[ ! -f /etc/OpenCL/vendors/pocl.icd ]] ||
     ! compgen -G '/usr/lib/*/libOpenCL.so' >/dev/null; then
    install_pkgs ocl-icd-opencl-dev opencl-c-headers pocl-opencl-icd
  fi
}

# The Python package's extension builds against the headers of the Python
# that runs pip (Debian's python3-dev for Debian's python3).
need_python_dev() {
  local py=$1
  "$py" -c 'import os, sys, sysconfig; sys.exit(not os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h")))' \
    >/dev/null 2>&1 || install_pkgs python3-dev
}

# suites.cmake — test drivers that are not one C file each: the CLI tests
# (Python, run against the built `tessera` binary). Included by
# tests/CMakeLists.txt.

# The Python that runs the drivers: the project's .venv (scripts/test.sh
# creates it with numpy) when it exists, else python3 from PATH. The drivers
# need numpy and say so clearly when it is missing.
if(EXISTS ${CMAKE_SOURCE_DIR}/.venv/bin/python3)
  set(TS_PYTHON_DEFAULT ${CMAKE_SOURCE_DIR}/.venv/bin/python3)
else()
  find_program(TS_PYTHON_FOUND NAMES python3)
  set(TS_PYTHON_DEFAULT ${TS_PYTHON_FOUND})
  if(NOT TS_PYTHON_DEFAULT)
    set(TS_PYTHON_DEFAULT python3)
  endif()
endif()
set(TS_PYTHON ${TS_PYTHON_DEFAULT} CACHE FILEPATH "Python (with numpy) that runs the test drivers")

add_test(NAME cli
         COMMAND ${TS_PYTHON} ${CMAKE_SOURCE_DIR}/tests/cli/test_cli.py $<TARGET_FILE:tessera_cli>
         WORKING_DIRECTORY ${CMAKE_SOURCE_DIR})
# The CLI test runs the attention model a few dozen times: minutes under ASan
# on a slow machine, seconds otherwise.
set_tests_properties(cli PROPERTIES TIMEOUT 900)

# docs/api.md's C examples compile against include/ and the archive, run,
# and print what the page shows (standard library Python only).
# An instrumented library needs its sanitizers' runtimes at link time.
set(TS_DOC_LINK_FLAGS)
if(TS_SANITIZE OR TS_FUZZ)
  set(TS_DOC_LINK_FLAGS -fsanitize=address,undefined)
endif()
add_test(NAME doc_examples
         COMMAND ${TS_PYTHON} ${CMAKE_SOURCE_DIR}/tests/doc_examples.py $<TARGET_FILE:tessera_static> ${PROTOBUF_C_LIB}
                 ${OpenCL_LIBRARIES}
                 -lm -lpthread ${CMAKE_DL_LIBS} ${TS_DOC_LINK_FLAGS}
         WORKING_DIRECTORY ${CMAKE_SOURCE_DIR})

# The include graph follows docs/architecture.md's layers (standard
# library Python only).
add_test(NAME layers COMMAND ${TS_PYTHON} ${CMAKE_SOURCE_DIR}/tests/check_layers.py WORKING_DIRECTORY ${CMAKE_SOURCE_DIR})

# ---- ONNX conformance -----------------------------------------------------------
# The ONNX backend test data (node, light, simple, pytorch-converted,
# pytorch-operator) ships in the onnx wheel that scripts/test.sh installs
# into .venv, pinned to 1.22.0 (the last release whose wheel carries it).
# `tessera check` runs each folder; tests/onnx_conformance/expected_failures.txt
# lists the cases known to fail, with a reason, and a case that fails
# without being listed, or passes while listed, fails the ctest entry.
# scripts/update_xfail.sh regenerates the list from a run.
# TS_ONNX_TESTS: AUTO (the default) registers the suites when onnx imports
# in TS_PYTHON and says in one status line why not otherwise, so building
# the library and the command never needs Python packages (the main job,
# scripts/run_default.sh, runs on a machine with none); ON requires them
# (scripts/test.sh passes ON after making .venv, so CI can never lose the
# suites silently); OFF leaves them out.
set(TS_ONNX_TESTS AUTO CACHE STRING "Register the ONNX conformance suites: AUTO (when onnx imports in TS_PYTHON), ON (required), OFF")
set_property(CACHE TS_ONNX_TESTS PROPERTY STRINGS AUTO ON OFF)
set(TS_ONNX_SUITES_ON OFF)
if(TS_ONNX_TESTS)   # AUTO and ON are both true for if()
  execute_process(
    COMMAND ${TS_PYTHON} -c "import onnx, os; print(os.path.dirname(onnx.__file__)); print(onnx.__version__)"
    OUTPUT_VARIABLE TS_ONNX_PY_OUT ERROR_VARIABLE TS_ONNX_PY_ERR RESULT_VARIABLE TS_ONNX_PY_RC
    OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(TS_ONNX_PY_RC EQUAL 0)
    set(TS_ONNX_SUITES_ON ON)
  elseif(TS_ONNX_TESTS STREQUAL "AUTO")
    message(STATUS "ONNX conformance suites not registered: the onnx Python package does not import in "
      "TS_PYTHON (${TS_PYTHON}); bash scripts/test.sh makes .venv with it")
  else()
    message(FATAL_ERROR "The ONNX conformance suites need the onnx Python package in TS_PYTHON "
      "(${TS_PYTHON}), and it does not import:\n${TS_ONNX_PY_ERR}\n"
      "Run bash scripts/test.sh once (it makes .venv with numpy and onnx==1.22.0), or "
      "`${TS_PYTHON} -m pip install onnx==1.22.0`, or configure with -DTS_ONNX_TESTS=AUTO or OFF.")
  endif()
endif()
if(TS_ONNX_SUITES_ON)
  string(REPLACE "\n" ";" TS_ONNX_PY_OUT "${TS_ONNX_PY_OUT}")
  list(GET TS_ONNX_PY_OUT 0 TS_ONNX_DIR)
  list(GET TS_ONNX_PY_OUT 1 TS_ONNX_VERSION)
  set(TS_ONNX_DATA ${TS_ONNX_DIR}/backend/test/data)
  if(NOT EXISTS ${TS_ONNX_DATA}/node)
    message(FATAL_ERROR "onnx ${TS_ONNX_VERSION} in ${TS_PYTHON} has no backend test data "
      "(${TS_ONNX_DATA}/node): install onnx==1.22.0, or configure with -DTS_ONNX_TESTS=OFF.")
  endif()
  if(NOT TS_ONNX_VERSION STREQUAL "1.22.0")
    message(WARNING "onnx ${TS_ONNX_VERSION} is not the pinned 1.22.0: the test data, and so "
      "tests/onnx_conformance/expected_failures.txt, may not match.")
  endif()
  cmake_host_system_information(RESULT TS_NCORES QUERY NUMBER_OF_LOGICAL_CORES)
  set(TS_XFAIL ${CMAKE_SOURCE_DIR}/tests/onnx_conformance/expected_failures.txt)
  set(TS_XFAIL_CPU ${CMAKE_SOURCE_DIR}/tests/onnx_conformance/expected_failures_cpu.txt)
  # name:folder:suite-timeout:case-timeout: ctest's limit (wall clock) and each
  # case's CPU-time limit (check --timeout), in seconds. The case limit makes
  # a hung case one FAIL line rather than a killed suite. The light models
  # take about 1 s (SqueezeNet) to 30 s (VGG-19, 1.5 GB) of CPU on the
  # interpreter (RelWithDebInfo; VGG-19 once took 350 s): 600 s leaves room
  # for a slower machine or a slower interpreter.
  set(TS_ONNX_SUITES node:node:1800:300 simple:simple:600:300
      pytorch_converted:pytorch-converted:900:300 pytorch_operator:pytorch-operator:600:300)
  # The light models (ResNet-50, VGG-19, ... at 224x224) are whole networks:
  # a minute of CPU optimised, many times that unoptimised and instrumented,
  # so sanitizer and Debug builds leave them out.
  if(NOT TS_SANITIZE AND NOT TS_FUZZ AND NOT CMAKE_BUILD_TYPE STREQUAL "Debug")
    list(APPEND TS_ONNX_SUITES light:light:3600:600)
  endif()
  foreach(entry IN LISTS TS_ONNX_SUITES)
    string(REPLACE ":" ";" suite ${entry})
    list(GET suite 0 name)
    list(GET suite 1 folder)
    list(GET suite 2 limit)
    list(GET suite 3 case_limit)
    add_test(NAME onnx_${name}
             COMMAND tessera_cli check ${TS_ONNX_DATA}/${folder} --target interp --xfail ${TS_XFAIL}
                     -j ${TS_NCORES} --timeout ${case_limit}
             WORKING_DIRECTORY ${CMAKE_SOURCE_DIR})
    set_tests_properties(onnx_${name} PROPERTIES TIMEOUT ${limit} LABELS onnx)
    # The same folder compiled (--target cpu), against its own list
    # (tests/onnx_conformance/expected_failures_cpu.txt, never longer than
    # the interpreter's: test_xfail_lists checks). Each case compiles C, so
    # the sanitizer build leaves these to the optimised one.
    if(NOT TS_SANITIZE AND NOT TS_FUZZ)
      add_test(NAME onnx_${name}_cpu
               COMMAND tessera_cli check ${TS_ONNX_DATA}/${folder} --target cpu --xfail ${TS_XFAIL_CPU}
                       -j ${TS_NCORES} --timeout ${case_limit}
               WORKING_DIRECTORY ${CMAKE_SOURCE_DIR})
      set_tests_properties(onnx_${name}_cpu PROPERTIES TIMEOUT ${limit} LABELS onnx
                           ENVIRONMENT "TESSERA_CACHE_DIR=${CMAKE_BINARY_DIR}/jit-cache")
    endif()
  endforeach()
  # Every opset (docs/onnx.md): the cases at older opset versions
  # (tests/onnx_opsets, scripts/gen_opset_tests.py) on both targets, and the
  # walk of the schema history that fails on an attribute value neither
  # covered by a passing case nor refused (tests/onnx_opsets/refused.txt).
  add_test(NAME onnx_opsets
           COMMAND tessera_cli check ${CMAKE_SOURCE_DIR}/tests/onnx_opsets --target interp --xfail ${TS_XFAIL}
                   -j ${TS_NCORES} --timeout 300
           WORKING_DIRECTORY ${CMAKE_SOURCE_DIR})
  set_tests_properties(onnx_opsets PROPERTIES TIMEOUT 900 LABELS onnx)
  if(NOT TS_SANITIZE AND NOT TS_FUZZ)
    add_test(NAME onnx_opsets_cpu
             COMMAND tessera_cli check ${CMAKE_SOURCE_DIR}/tests/onnx_opsets --target cpu --xfail ${TS_XFAIL_CPU}
                     -j ${TS_NCORES} --timeout 300
             WORKING_DIRECTORY ${CMAKE_SOURCE_DIR})
    set_tests_properties(onnx_opsets_cpu PROPERTIES TIMEOUT 1800 LABELS onnx
                         ENVIRONMENT "TESSERA_CACHE_DIR=${CMAKE_BINARY_DIR}/jit-cache")
  endif()
  add_test(NAME onnx_opset_history
           COMMAND ${TS_PYTHON} ${CMAKE_SOURCE_DIR}/tests/onnx_conformance/test_opset_history.py
                   $<TARGET_FILE:tessera_cli>
           WORKING_DIRECTORY ${CMAKE_SOURCE_DIR})
  set_tests_properties(onnx_opset_history PROPERTIES TIMEOUT 600 LABELS onnx)
  # The node suite on the opencl target (PoCL in CI), against its own list;
  # like the cpu's, left to the optimised build. Built programs are cached
  # by the driver (PoCL's kcache), kept under the build tree. PoCL's LLVM
  # spends ~0.5 s of CPU starting in each process that builds a program:
  # 32 cases share a child (--batch 32), which brings the whole suite from
  # ~11 minutes to ~3 on 2 cores. TS_OPENCL_SHARD=K/N runs every Nth case.
  set(TS_XFAIL_OPENCL ${CMAKE_SOURCE_DIR}/tests/onnx_conformance/expected_failures_opencl.txt)
  set(TS_OPENCL_SHARD "1/1" CACHE STRING "check --shard K/N of the ONNX node suite on the opencl target")
  if(NOT TS_SANITIZE AND NOT TS_FUZZ)
    add_test(NAME onnx_node_opencl
             COMMAND tessera_cli check ${TS_ONNX_DATA}/node --target opencl --xfail ${TS_XFAIL_OPENCL}
                     --shard ${TS_OPENCL_SHARD} --batch 32 -j ${TS_NCORES} --timeout 300
             WORKING_DIRECTORY ${CMAKE_SOURCE_DIR})
    set_tests_properties(onnx_node_opencl PROPERTIES TIMEOUT 1800 LABELS onnx
                         ENVIRONMENT "POCL_CACHE_DIR=${CMAKE_BINARY_DIR}/pocl-cache")
    # Every CUDA kernel planned for the node suite's models through NVRTC's
    # front end (no GPU needed; ~5,600 kernels in 2 s). test_emit_cuda
    # without the folder (every build) compiles the IR corpora and the real
    # models to PTX.
    add_test(NAME test_emit_cuda_node COMMAND test_emit_cuda ${TS_ONNX_DATA}/node WORKING_DIRECTORY ${CMAKE_SOURCE_DIR})
    set_tests_properties(test_emit_cuda_node PROPERTIES TIMEOUT 900 LABELS onnx)
  endif()
  # every case a compiled path is allowed to fail, the interpreter is too,
  # and the device targets (opencl, cuda) fail no node test the cpu target passes
  add_test(NAME test_xfail_lists COMMAND ${TS_PYTHON} -c
           "import sys; r=lambda p, s=None: {l.split()[0] for l in open(p) if l.strip() and not l.startswith('#')}; c=(r(sys.argv[1])|r(sys.argv[3])|r(sys.argv[4]))-r(sys.argv[2]); o=(r(sys.argv[3])|r(sys.argv[4]))-r(sys.argv[1]); print('compiled-only expected failures:', sorted(c)); print('device-only (opencl, cuda):', sorted(o)); print('%d passed, %d failed' % (int(not c and not o), int(bool(c or o)))); sys.exit(bool(c or o))"
           ${TS_XFAIL_CPU} ${TS_XFAIL} ${TS_XFAIL_OPENCL} ${CMAKE_SOURCE_DIR}/tests/onnx_conformance/expected_failures_cuda.txt)
endif()

# ---- fuzzing ------------------------------------------------------------------------
# -DTS_FUZZ=ON (CMakeLists.txt) builds the libFuzzer target; scripts/test.sh
# runs it for a bounded time. It is not a ctest entry: a fuzz run is a
# search, not a check with a fixed answer.
if(TS_FUZZ)
  add_executable(fuzz_onnx_load ${CMAKE_SOURCE_DIR}/tests/fuzz/fuzz_onnx_load.c)
  target_link_libraries(fuzz_onnx_load PRIVATE tessera_static)
  target_link_options(fuzz_onnx_load PRIVATE -fsanitize=fuzzer)
endif()

# The main job's bundled ONNX model (scripts/gen_default_onnx.py) against
# onnxruntime's output stored beside it.
add_test(NAME onnx_tinynet COMMAND tessera_cli check ${CMAKE_SOURCE_DIR}/models/tinynet --target interp
         WORKING_DIRECTORY ${CMAKE_SOURCE_DIR})
add_test(NAME onnx_tinynet_cpu COMMAND tessera_cli check ${CMAKE_SOURCE_DIR}/models/tinynet --target cpu
         WORKING_DIRECTORY ${CMAKE_SOURCE_DIR})
set_tests_properties(onnx_tinynet_cpu PROPERTIES ENVIRONMENT "TESSERA_CACHE_DIR=${CMAKE_BINARY_DIR}/jit-cache")
add_test(NAME onnx_tinynet_opencl COMMAND tessera_cli check ${CMAKE_SOURCE_DIR}/models/tinynet --target opencl
         WORKING_DIRECTORY ${CMAKE_SOURCE_DIR})
set_tests_properties(onnx_tinynet_opencl PROPERTIES ENVIRONMENT "POCL_CACHE_DIR=${CMAKE_BINARY_DIR}/pocl-cache")
# A process that drives the OpenCL driver (PoCL) keeps its worker threads
# and LLVM's allocations to the end; LeakSanitizer's end-of-process scan
# then reports the driver's memory, and its thread-stopping tracer can
# crash on those threads (seen once in CI). In the sanitizer build such
# processes run with leak detection off; ASan's memory errors and UBSan
# stay on (TS_NO_LEAK_CHECK, also used by tests/cli/cli_opencl.py).
set(TS_NO_LEAK_CHECK "ASAN_OPTIONS=detect_leaks=0:abort_on_error=0")

# The suite of small real models (scripts/gen_real_models.py: MobileNetV2 blocks,
# a dynamic-sequence encoder, LSTM, GRU, Loop+If, a model over an ONNX sequence) against onnxruntime's outputs.
add_test(NAME onnx_models COMMAND tessera_cli check ${CMAKE_SOURCE_DIR}/tests/onnx_models --atol 1e-4 --target interp
         WORKING_DIRECTORY ${CMAKE_SOURCE_DIR})
add_test(NAME onnx_models_cpu COMMAND tessera_cli check ${CMAKE_SOURCE_DIR}/tests/onnx_models --atol 1e-4 --target cpu
         WORKING_DIRECTORY ${CMAKE_SOURCE_DIR})
set_tests_properties(onnx_models_cpu PROPERTIES ENVIRONMENT "TESSERA_CACHE_DIR=${CMAKE_BINARY_DIR}/jit-cache")
add_test(NAME onnx_models_opencl COMMAND tessera_cli check ${CMAKE_SOURCE_DIR}/tests/onnx_models --atol 1e-4 --target opencl
         WORKING_DIRECTORY ${CMAKE_SOURCE_DIR})
set_tests_properties(onnx_models_opencl PROPERTIES ENVIRONMENT "POCL_CACHE_DIR=${CMAKE_BINARY_DIR}/pocl-cache")
if(TS_SANITIZE)
  set_tests_properties(onnx_tinynet_opencl onnx_models_opencl test_emit_cl PROPERTIES ENVIRONMENT
                       "POCL_CACHE_DIR=${CMAKE_BINARY_DIR}/pocl-cache;${TS_NO_LEAK_CHECK}")
endif()

# Operators of the non-default domains (ai.onnx.ml, ai.onnx.preview,
# ai.onnx.preview.training) and Swish beyond onnx's node tests
# (scripts/gen_domain_models.py): against onnxruntime where it runs the
# operator, else onnx's reference implementation.
add_test(NAME onnx_domains COMMAND tessera_cli check ${CMAKE_SOURCE_DIR}/tests/onnx_domains --target interp
         WORKING_DIRECTORY ${CMAKE_SOURCE_DIR})

# The compiled path (--target cpu) against the same golden cases as the
# interpreter. Its compiled code is cached under the build tree, never in
# the user's cache.
add_test(NAME test_ops_cpu COMMAND test_ops --target cpu WORKING_DIRECTORY ${CMAKE_SOURCE_DIR})
set_tests_properties(test_ops_cpu PROPERTIES ENVIRONMENT "TESSERA_CACHE_DIR=${CMAKE_BINARY_DIR}/jit-cache")
# The same on the opencl target (PoCL in CI); the optimised build only:
# instrumented, it takes 2.5 minutes of CI (it ran clean under ASan and
# LSan when added).
if(NOT TS_SANITIZE AND NOT TS_FUZZ)
  add_test(NAME test_ops_opencl COMMAND test_ops --target opencl WORKING_DIRECTORY ${CMAKE_SOURCE_DIR})
  set_tests_properties(test_ops_opencl PROPERTIES ENVIRONMENT "POCL_CACHE_DIR=${CMAKE_BINARY_DIR}/pocl-cache")
  # and with a GPU's loop shape (strided shares, as the cuda dialect
  # writes them), run on PoCL: the code a GPU gets, checked where none is
  add_test(NAME test_ops_opencl_strided COMMAND test_ops --target opencl WORKING_DIRECTORY ${CMAKE_SOURCE_DIR})
  set_tests_properties(test_ops_opencl_strided PROPERTIES ENVIRONMENT
                       "POCL_CACHE_DIR=${CMAKE_BINARY_DIR}/pocl-cache;TS_OPENCL_STRIDED=1")
endif()

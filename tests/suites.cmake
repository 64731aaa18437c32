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

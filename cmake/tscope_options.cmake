# SPDX-License-Identifier: Apache-2.0
# Every build option of the project, declared once and summarised at configure time.
get_directory_property(_tscope_has_parent PARENT_DIRECTORY)
if(_tscope_has_parent)
  set(_tscope_top_level OFF)
else()
  set(_tscope_top_level ON)
endif()

option(TSCOPE_BUILD_TESTS "Build the GoogleTest suites" ${_tscope_top_level})
option(TSCOPE_BUILD_BENCHMARKS "Build the Google Benchmark binaries" OFF)
# CMake's own switch, read by add_library: each layer a shared library (libtscope_<layer>.so)
# exporting only its public API (docs/architecture.md, "Shared libraries and exported symbols").
option(BUILD_SHARED_LIBS "Build each layer as a shared library instead of a static one" OFF)
option(TSCOPE_WERROR "Treat compiler warnings as errors" OFF)
# A sanitized test binary takes about half a second to start and to check for leaks at exit, so
# starting one per test dominated the dev suite; as one CTest test per binary, its tests run in one
# process (GoogleTest's own way) and CTest lists the binary instead of each test.
option(TSCOPE_TEST_PER_BINARY "Register each GoogleTest binary as one CTest test" OFF)
option(TSCOPE_ZONES "Compile the host-code zone macros (TSCOPE_ZONE, ...); OFF: they expand to nothing"
       ON)
set(TSCOPE_SANITIZE "" CACHE STRING "Semicolon list of sanitizers (address;undefined;thread)")
# The Python package (python/, docs/python.md) defaults ON when Python 3 with its headers and
# NumPy, and pybind11, are found, and the build is not instrumented: a sanitized extension loads
# into a stock python only with the sanitizer runtime preloaded (docs/python.md, "Sanitizers").
if(NOT DEFINED Python3_EXECUTABLE AND EXISTS /usr/bin/python3)
  # The distribution's interpreter, whose NumPy and pytest scripts/bootstrap installs, ahead of
  # any other python3 on PATH.
  set(Python3_EXECUTABLE /usr/bin/python3)
endif()
find_package(Python3 3.9 QUIET COMPONENTS Interpreter Development.Module NumPy)
if(Python3_FOUND)
  find_package(pybind11 2.6 CONFIG QUIET)
endif()
set(_tscope_python_default OFF)
if(Python3_FOUND AND pybind11_FOUND AND NOT TSCOPE_SANITIZE AND NOT TSCOPE_BUILD_FUZZERS)
  set(_tscope_python_default ON)
endif()
option(TSCOPE_BUILD_PYTHON "Build the tensorscope Python package (pybind11 + NumPy)"
       ${_tscope_python_default})
if(TSCOPE_BUILD_PYTHON AND NOT (Python3_FOUND AND pybind11_FOUND))
  message(FATAL_ERROR "TSCOPE_BUILD_PYTHON needs Python 3 (headers, NumPy) and pybind11: run "
                      "scripts/bootstrap")
endif()
option(TSCOPE_BUILD_FUZZERS "Build the libFuzzer targets (clang only; scripts/fuzz)" OFF)
if(TSCOPE_BUILD_FUZZERS)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "TSCOPE_BUILD_FUZZERS needs clang (libFuzzer): use the dev preset or "
                        "configure with CXX=clang++-16")
  endif()
  # Every library is instrumented for coverage and checked by ASan; only fuzz targets get
  # libFuzzer's main.
  add_compile_options(-fsanitize=fuzzer-no-link,address)
  add_link_options(-fsanitize=address)
endif()

if(NOT CMAKE_BUILD_TYPE AND NOT CMAKE_CONFIGURATION_TYPES)
  set(CMAKE_BUILD_TYPE RelWithDebInfo CACHE STRING "Build type" FORCE)
endif()

find_program(TSCOPE_CCACHE ccache)
if(TSCOPE_CCACHE)
  set(CMAKE_CXX_COMPILER_LAUNCHER ${TSCOPE_CCACHE})
  set(CMAKE_C_COMPILER_LAUNCHER ${TSCOPE_CCACHE})
endif()

message(STATUS "Tensorscope options:")
foreach(_opt BUILD_SHARED_LIBS TSCOPE_BUILD_TESTS TSCOPE_BUILD_BENCHMARKS TSCOPE_BUILD_FUZZERS
        TSCOPE_BUILD_PYTHON TSCOPE_WERROR TSCOPE_ZONES
        TSCOPE_SANITIZE CMAKE_BUILD_TYPE)
  message(STATUS "  ${_opt} = ${${_opt}}")
endforeach()

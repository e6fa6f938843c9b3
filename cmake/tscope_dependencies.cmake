# SPDX-License-Identifier: Apache-2.0
# Every third-party dependency comes from Debian's packages (scripts/bootstrap installs them).
find_package(PkgConfig REQUIRED)
find_package(Threads REQUIRED)
find_package(fmt REQUIRED)
find_package(nlohmann_json 3.10 REQUIRED)
find_package(CLI11 REQUIRED)
pkg_check_modules(OPENBLAS REQUIRED IMPORTED_TARGET openblas)
pkg_check_modules(SLEEF REQUIRED IMPORTED_TARGET sleef)
# ONNX import: Debian's libonnx-dev ships the generated protobuf classes (target onnx_proto).
find_package(Protobuf REQUIRED)
find_package(ONNX CONFIG REQUIRED)
if(TSCOPE_BUILD_TESTS)
  find_package(GTest REQUIRED)
endif()
if(TSCOPE_BUILD_BENCHMARKS)
  find_package(benchmark REQUIRED)
endif()
# oneDNN (libdnnl-dev) ships no .pc file, and its CMake package insists on finding OpenCL, which
# only a recommended package provides; find the header and library directly instead.
find_path(TSCOPE_DNNL_INCLUDE_DIR oneapi/dnnl/dnnl.hpp REQUIRED)
find_library(TSCOPE_DNNL_LIBRARY dnnl REQUIRED)
add_library(tscope_dnnl INTERFACE IMPORTED)
target_include_directories(tscope_dnnl SYSTEM INTERFACE ${TSCOPE_DNNL_INCLUDE_DIR})
target_link_libraries(tscope_dnnl INTERFACE ${TSCOPE_DNNL_LIBRARY})
# The worker threads are those of the OpenMP runtime that oneDNN's library links (libgomp on
# Debian): the threads layer links that same library and starts its teams directly, so oneDNN's
# primitives and Tensorscope's own loops share one pool whichever compiler builds the project
# (clang's -fopenmp would bring a second runtime, libomp).
find_library(TSCOPE_GOMP_LIBRARY NAMES libgomp.so.1 gomp REQUIRED)
add_library(tscope_gomp INTERFACE IMPORTED)
target_link_libraries(tscope_gomp INTERFACE ${TSCOPE_GOMP_LIBRARY})
if(CMAKE_OBJDUMP)
  execute_process(COMMAND ${CMAKE_OBJDUMP} -p ${TSCOPE_DNNL_LIBRARY} OUTPUT_VARIABLE _tscope_dnnl_headers
                  ERROR_QUIET)
  if(_tscope_dnnl_headers AND NOT _tscope_dnnl_headers MATCHES "NEEDED +libgomp\\.so")
    message(FATAL_ERROR "${TSCOPE_DNNL_LIBRARY} does not link libgomp: Tensorscope's threads share "
                        "oneDNN's OpenMP runtime and need oneDNN built with GNU OpenMP "
                        "(Debian's libdnnl-dev)")
  endif()
endif()

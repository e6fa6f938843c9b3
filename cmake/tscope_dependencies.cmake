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

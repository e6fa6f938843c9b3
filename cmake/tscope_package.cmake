# SPDX-License-Identifier: Apache-2.0
# `cpack` (run in a build directory) makes tensorscope_<version>_amd64.deb from the install rules:
# the CLI, headers, static libraries, CMake package and pkg-config file under /usr. The CLI's
# run-time dependencies come from dpkg-shlibdeps; the development packages whose headers and
# libraries an installed tscope::tscope links are listed, so find_package(tscope) works after
# `apt install ./tensorscope_*.deb`.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME tensorscope)
set(CPACK_PACKAGE_VENDOR Tensorscope)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "Tensor-graph compiler and runtime that tells you where the time and memory go")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "Tensorscope")
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_DEPENDS
    "libopenblas-dev, libdnnl-dev, libsleef-dev, libprotobuf-dev, libonnx-dev, libfmt-dev, nlohmann-json3-dev, pkg-config")
if(TSCOPE_BUILD_PYTHON)
  # The tensorscope Python package goes in too, under the interpreter's dist-packages.
  string(APPEND CPACK_DEBIAN_PACKAGE_DEPENDS ", python3-numpy")
endif()
include(CPack)

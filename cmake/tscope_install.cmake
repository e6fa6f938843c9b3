# SPDX-License-Identifier: Apache-2.0
# `cmake --install`: the public headers, the layer libraries, the `tscope` CLI, a CMake package
# (find_package(tscope) gives tscope::tscope and tscope::<layer>) and a pkg-config file (tscope).
# Static libraries (the default) make the package find the Debian libraries they link as well;
# shared ones (BUILD_SHARED_LIBS) carry those themselves, so the package needs only what the public
# headers use.
include(CMakePackageConfigHelpers)

get_property(_tscope_layers GLOBAL PROPERTY TSCOPE_LAYERS)
install(TARGETS ${_tscope_layers} tscope EXPORT tscopeTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS tscope_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
if(BUILD_SHARED_LIBS)
  # The installed CLI finds the layers relative to itself, wherever the tree is installed.
  file(RELATIVE_PATH _tscope_bin_to_lib /prefix/${CMAKE_INSTALL_BINDIR} /prefix/${CMAKE_INSTALL_LIBDIR})
  set_target_properties(tscope_cli PROPERTIES INSTALL_RPATH "$ORIGIN/${_tscope_bin_to_lib}")
endif()
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/tscope DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})

set(TSCOPE_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/tscope)
install(EXPORT tscopeTargets NAMESPACE tscope:: DESTINATION ${TSCOPE_CMAKE_DIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/tscopeConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/tscopeConfig.cmake
                              INSTALL_DESTINATION ${TSCOPE_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/tscopeConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/tscopeConfig.cmake ${PROJECT_BINARY_DIR}/tscopeConfigVersion.cmake
        DESTINATION ${TSCOPE_CMAKE_DIR})

# The .pc file finds the prefix relative to itself (lib/pkgconfig, or lib/<multiarch>/pkgconfig).
file(RELATIVE_PATH TSCOPE_PC_TO_PREFIX /prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig /prefix)
# The layers, each after the layers that link it (TSCOPE_LAYERS holds them in definition order,
# dependencies first), and what the static layers link besides.
get_property(_tscope_pc_layers GLOBAL PROPERTY TSCOPE_LAYERS)
list(REVERSE _tscope_pc_layers)
list(TRANSFORM _tscope_pc_layers PREPEND -l)
list(JOIN _tscope_pc_layers " " _tscope_pc_layers)
set(_tscope_pc_system_libs "-lonnx_proto -ldnnl -lgomp -ldl")
if(BUILD_SHARED_LIBS)
  # Each shared layer records its own dependencies (DT_NEEDED): a program links only the layers
  # and what the public headers use (fmt, threads); `pkg-config --static` lists the rest.
  set(TSCOPE_PC_REQUIRES "fmt")
  set(TSCOPE_PC_REQUIRES_PRIVATE "openblas sleef protobuf")
  set(TSCOPE_PC_LIBS "${_tscope_pc_layers} -pthread")
  set(TSCOPE_PC_LIBS_PRIVATE "${_tscope_pc_system_libs}")
else()
  set(TSCOPE_PC_REQUIRES "fmt openblas sleef protobuf")
  set(TSCOPE_PC_REQUIRES_PRIVATE "")
  set(TSCOPE_PC_LIBS "-Wl,--start-group ${_tscope_pc_layers} -Wl,--end-group ${_tscope_pc_system_libs} -pthread")
  set(TSCOPE_PC_LIBS_PRIVATE "")
endif()
configure_file(${PROJECT_SOURCE_DIR}/cmake/tscope.pc.in ${PROJECT_BINARY_DIR}/tscope.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/tscope.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

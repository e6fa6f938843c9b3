# SPDX-License-Identifier: Apache-2.0
# `cmake --install`: the public headers, the layer libraries, the `tscope` CLI, a CMake package
# (find_package(tscope) gives tscope::tscope and tscope::<layer>) and a pkg-config file (tscope).
# The libraries are static, so the package also finds the Debian libraries they link.
include(CMakePackageConfigHelpers)

get_property(_tscope_layers GLOBAL PROPERTY TSCOPE_LAYERS)
install(TARGETS ${_tscope_layers} tscope EXPORT tscopeTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS tscope_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
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
configure_file(${PROJECT_SOURCE_DIR}/cmake/tscope.pc.in ${PROJECT_BINARY_DIR}/tscope.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/tscope.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

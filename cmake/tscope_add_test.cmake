# SPDX-License-Identifier: Apache-2.0
# tscope_add_test(NAME <target> LABELS <labels...> SOURCES <files...> LIBS <targets...>)
# builds one GoogleTest binary and registers each of its tests with CTest under the given labels.
include(GoogleTest)
function(tscope_add_test)
  cmake_parse_arguments(ARG "" "NAME" "LABELS;SOURCES;LIBS" ${ARGN})
  add_executable(${ARG_NAME} ${ARG_SOURCES})
  target_link_libraries(${ARG_NAME} PRIVATE ${ARG_LIBS} tscope_test_support GTest::gtest
                                            GTest::gtest_main tscope_warnings tscope_sanitizers)
  gtest_discover_tests(${ARG_NAME} PROPERTIES LABELS "${ARG_LABELS}" DISCOVERY_TIMEOUT 60)
endfunction()

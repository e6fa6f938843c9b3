# SPDX-License-Identifier: Apache-2.0
# tscope_add_test(NAME <target> LABELS <labels...> SOURCES <files...> LIBS <targets...>)
# builds one GoogleTest binary and registers each of its tests with CTest under the given labels.
include(GoogleTest)
function(tscope_add_test)
  cmake_parse_arguments(ARG "" "NAME" "LABELS;SOURCES;LIBS" ${ARGN})
  add_executable(${ARG_NAME} ${ARG_SOURCES})
  target_link_libraries(${ARG_NAME} PRIVATE ${ARG_LIBS} tscope_test_support GTest::gtest
                                            GTest::gtest_main tscope_warnings tscope_sanitizers)
  # TSCOPE_FLAGS sets FunctionOptions' defaults: set empty, so that the shell a test runs from
  # cannot change its outcome. A test about the flags sets them itself.
  gtest_discover_tests(${ARG_NAME} PROPERTIES LABELS "${ARG_LABELS}" ENVIRONMENT "TSCOPE_FLAGS="
                       DISCOVERY_TIMEOUT 60)
endfunction()


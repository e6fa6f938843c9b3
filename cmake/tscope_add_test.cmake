# SPDX-License-Identifier: Apache-2.0
# tscope_add_test(NAME <target> LABELS <label> SOURCES <files...> LIBS <targets...>)
# builds one GoogleTest binary and registers each of its tests with CTest under the given label
# (the whole binary as one test with TSCOPE_TEST_PER_BINARY).
include(GoogleTest)
function(tscope_add_test)
  cmake_parse_arguments(ARG "" "NAME" "LABELS;SOURCES;LIBS" ${ARGN})
  # gtest_discover_tests writes the properties unquoted, so a second label would be read as a
  # property name and the tests would silently lose their labels.
  list(LENGTH ARG_LABELS label_count)
  if(NOT label_count EQUAL 1)
    message(FATAL_ERROR "tscope_add_test(${ARG_NAME}): give exactly one label")
  endif()
  add_executable(${ARG_NAME} ${ARG_SOURCES})
  target_link_libraries(${ARG_NAME} PRIVATE ${ARG_LIBS} tscope_test_support GTest::gtest
                                            GTest::gtest_main tscope_warnings tscope_sanitizers)
  # TSCOPE_FLAGS sets FunctionOptions' defaults: set empty, so that the shell a test runs from
  # cannot change its outcome. A test about the flags sets them itself.
  if(TSCOPE_TEST_PER_BINARY)
    add_test(NAME ${ARG_NAME} COMMAND ${ARG_NAME})
    set_tests_properties(${ARG_NAME} PROPERTIES LABELS "${ARG_LABELS}" ENVIRONMENT "TSCOPE_FLAGS=")
  else()
    gtest_discover_tests(${ARG_NAME} PROPERTIES LABELS "${ARG_LABELS}" ENVIRONMENT "TSCOPE_FLAGS="
                         DISCOVERY_TIMEOUT 60)
  endif()
endfunction()

# tscope_add_exit_test(NAME <test> EXIT <code> [OUTPUT <regex>] LABELS <labels...>
#                      [ENVIRONMENT <VAR=value...>] COMMAND <command...>)
# registers a test that passes only when the command exits with exactly <code> (and, given
# OUTPUT, prints something matching <regex>), through tests/support/run_expect_exit.cmake. The
# regex must not hold an unbalanced '[': CMake would stop splitting the arguments there.
function(tscope_add_exit_test)
  cmake_parse_arguments(ARG "" "NAME;EXIT;OUTPUT" "LABELS;ENVIRONMENT;COMMAND" ${ARGN})
  set(output_check)
  if(DEFINED ARG_OUTPUT)
    set(output_check "-DEXPECT_OUTPUT=${ARG_OUTPUT}")
  endif()
  add_test(NAME ${ARG_NAME}
    COMMAND ${CMAKE_COMMAND} -DEXPECT_EXIT=${ARG_EXIT} ${output_check}
            -P ${PROJECT_SOURCE_DIR}/tests/support/run_expect_exit.cmake -- ${ARG_COMMAND})
  set_tests_properties(${ARG_NAME} PROPERTIES LABELS "${ARG_LABELS}")
  # The CLI reads TSCOPE_FLAGS: empty unless the test gives it, as for the GoogleTest binaries.
  set_tests_properties(${ARG_NAME} PROPERTIES ENVIRONMENT "TSCOPE_FLAGS=")
  if(ARG_ENVIRONMENT)
    set_property(TEST ${ARG_NAME} APPEND PROPERTY ENVIRONMENT ${ARG_ENVIRONMENT})
  endif()
endfunction()

# SPDX-License-Identifier: Apache-2.0
# Runs a command and checks its exact exit status, and optionally its output (stdout and stderr
# together) against a regular expression. CTest's PASS_REGULAR_EXPRESSION ignores the status and
# WILL_FAIL accepts any non-zero one, so neither tells a documented exit code from a crash.
#   cmake -DEXPECT_EXIT=<code> [-DEXPECT_OUTPUT=<regex>] -P run_expect_exit.cmake -- <command...>
# tscope_add_exit_test (cmake/tscope_add_test.cmake) registers such tests.
if(NOT DEFINED EXPECT_EXIT)
  message(FATAL_ERROR "run_expect_exit: EXPECT_EXIT is required")
endif()
set(command)
set(after_separator FALSE)
math(EXPR last "${CMAKE_ARGC} - 1")
foreach(index RANGE ${last})
  if(after_separator)
    list(APPEND command "${CMAKE_ARGV${index}}")
  elseif("${CMAKE_ARGV${index}}" STREQUAL "--")
    set(after_separator TRUE)
  endif()
endforeach()
if(NOT command)
  message(FATAL_ERROR "run_expect_exit: no command after --")
endif()
execute_process(COMMAND ${command} RESULT_VARIABLE status OUTPUT_VARIABLE output
                ERROR_VARIABLE output)
if(NOT "${status}" STREQUAL "${EXPECT_EXIT}")
  message(FATAL_ERROR "exit status ${status}, expected ${EXPECT_EXIT}; output:\n${output}")
endif()
if(DEFINED EXPECT_OUTPUT AND NOT output MATCHES "${EXPECT_OUTPUT}")
  message(FATAL_ERROR "output does not match '${EXPECT_OUTPUT}':\n${output}")
endif()

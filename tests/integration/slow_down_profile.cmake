# SPDX-License-Identifier: Apache-2.0
# Writes a copy of a saved profile whose costliest node got slower: for the
# `tscope diff --fail-if-slower` tests.
#   cmake -DIN=<profile.json> -DOUT=<edited.json> [-DMODE=slower|spike] -P slow_down_profile.cmake
# MODE=slower (the default): every call of the node takes longer by the node's whole recorded
# time, and it runs another kernel implementation. A real slowdown moves the fastest call with the
# mean, so min_ns, max_ns and total_ns all grow: the node's mean time per call and its fastest call
# grow by at least 2x whatever the machine measured, and the gate fails.
# MODE=spike: one call of the node (its slowest) takes longer by the node's whole recorded time
# times its calls, so total_ns and max_ns grow and min_ns stays. The mean per call at least
# doubles, the fastest call does not move: noise, and the gate passes.
if(NOT DEFINED IN OR NOT DEFINED OUT)
  message(FATAL_ERROR "slow_down_profile: -DIN=<profile.json> -DOUT=<edited.json> are required")
endif()
if(NOT DEFINED MODE)
  set(MODE slower)
endif()
if(NOT MODE STREQUAL "slower" AND NOT MODE STREQUAL "spike")
  message(FATAL_ERROR "slow_down_profile: MODE is 'slower' or 'spike', not '${MODE}'")
endif()
file(READ "${IN}" text)
string(JSON node_count LENGTH "${text}" profiles 0 functions 0 nodes)
if(node_count EQUAL 0)
  message(FATAL_ERROR "slow_down_profile: '${IN}' holds no node")
endif()
set(costliest 0)
set(costliest_ns -1)
math(EXPR last "${node_count} - 1")
foreach(index RANGE ${last})
  string(JSON total_ns GET "${text}" profiles 0 functions 0 nodes ${index} total_ns)
  if(total_ns GREATER costliest_ns)
    set(costliest ${index})
    set(costliest_ns ${total_ns})
  endif()
endforeach()
set(node profiles 0 functions 0 nodes ${costliest})
string(JSON calls GET "${text}" ${node} call_count)
string(JSON min_ns GET "${text}" ${node} min_ns)
string(JSON max_ns GET "${text}" ${node} max_ns)
math(EXPR added_ns "${calls} * ${costliest_ns}")
math(EXPR total_ns "${costliest_ns} + ${added_ns}")
if(MODE STREQUAL "slower")
  math(EXPR min_ns "${min_ns} + ${costliest_ns}")
  math(EXPR max_ns "${max_ns} + ${costliest_ns}")
  string(JSON text SET "${text}" ${node} impl "\"ref\"")
else()
  math(EXPR max_ns "${max_ns} + ${added_ns}")
endif()
string(JSON text SET "${text}" ${node} total_ns ${total_ns})
string(JSON text SET "${text}" ${node} min_ns ${min_ns})
string(JSON text SET "${text}" ${node} max_ns ${max_ns})
file(WRITE "${OUT}" "${text}")

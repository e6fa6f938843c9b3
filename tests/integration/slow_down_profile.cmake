# SPDX-License-Identifier: Apache-2.0
# Writes a copy of a saved profile in which its costliest node got clearly slower and runs another
# kernel implementation: for the `tscope diff --fail-if-slower` tests.
#   cmake -DIN=<profile.json> -DOUT=<slower.json> -P slow_down_profile.cmake
# Every call of the node takes longer by the node's whole recorded time. That change per call is
# larger than the node's spread (slowest minus fastest call), so it is no noise, and the node's
# time per call grows by at least 2x whatever the machine measured.
if(NOT DEFINED IN OR NOT DEFINED OUT)
  message(FATAL_ERROR "slow_down_profile: -DIN=<profile.json> -DOUT=<slower.json> are required")
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
math(EXPR total_ns "${costliest_ns} + ${calls} * ${costliest_ns}")
math(EXPR min_ns "${min_ns} + ${costliest_ns}")
math(EXPR max_ns "${max_ns} + ${costliest_ns}")
string(JSON text SET "${text}" ${node} total_ns ${total_ns})
string(JSON text SET "${text}" ${node} min_ns ${min_ns})
string(JSON text SET "${text}" ${node} max_ns ${max_ns})
string(JSON text SET "${text}" ${node} impl "\"ref\"")
file(WRITE "${OUT}" "${text}")

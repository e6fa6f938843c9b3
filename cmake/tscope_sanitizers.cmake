# SPDX-License-Identifier: Apache-2.0
# INTERFACE target carrying sanitizer flags chosen by TSCOPE_SANITIZE.
add_library(tscope_sanitizers INTERFACE)
if(TSCOPE_SANITIZE)
  list(JOIN TSCOPE_SANITIZE "," _tscope_san)
  target_compile_options(tscope_sanitizers INTERFACE -fsanitize=${_tscope_san} -fno-omit-frame-pointer
                                                     -fno-sanitize-recover=undefined)
  target_link_options(tscope_sanitizers INTERFACE -fsanitize=${_tscope_san})
endif()
